// Measured operator times for cost-based placement (issue 17: "from measured kernel times where
// known"). Profiled runs of a created net give each operator's time on the device it ran on; they
// are kept in the device profile under the operator's signature (core/op_cost.h OpSignature), and
// the planner uses them instead of the FLOP estimate wherever an operator of the same signature
// runs on that device.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/device_profile.h"

namespace hetnet {

class NetBase;
class Workspace;
struct RunProfile;

// Records the median time over `runs` (profiled runs of `net`, ops indexed as in net.operators())
// of every operator whose inputs are tensors in `ws` (their current shapes) into
// profile->measured_op_us. Copy operators are link costs, not device work: each direction's median
// time beyond bytes / the link's bandwidth, over the copies that bandwidth does not dominate, goes to
// profile->measured_copy_latency_us. A GPU
// operator costs the longer of its device time and its launch on the host thread (at small
// sizes the launch is the bottleneck of a chain); its two parts, the host's launch and the
// device's own time, go to profile->measured_launch_us / measured_device_us, which the cost model
// overlaps along a chain. Operators of one signature on one device pool
// their times. Every time is multiplied by `time_scale`: pass the net's unprofiled wall time over
// its profiled one, since timing each operator slows small ones down (on an H200 a batch-1
// ResNet-18 ran 1.12 ms plainly and 1.62 ms profiled, event records around each of 69 GPU ops).
// Returns how many entries were written; their keys go to *keys when given.
int RecordMeasuredOps(DeviceProfile* profile, const NetBase& net, const Workspace& ws,
                      const std::vector<RunProfile>& runs, double time_scale = 1.0,
                      std::set<std::string>* keys = nullptr);

// Each GPU operator's time in one profiled run in two parts, by op index (`on_gpu`, `is_copy`:
// per op index; copies are left out, links rather than device work). The device's part runs from
// the later of the op's start event and the end of its launch on the host (OpTiming::host_start_us
// + host_dur_us, on the same clock) to its end event: a start event runs as soon as the stream
// reaches it, while the kernel is queued only when the host's call returns.
struct GpuOpTime {
  double launch_us = 0;  // the host's time to issue it
  double device_us = 0;  // the device's own time
};
std::map<int, GpuOpTime> SplitGpuOpTimes(const RunProfile& run, const std::vector<char>& on_gpu,
                                         const std::vector<char>& is_copy);

}  // namespace hetnet
