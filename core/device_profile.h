// What one machine's devices can do, for cost-based placement (issue 17): per device, matrix and
// convolution throughput by shape class, memory bandwidth, per-op dispatch/launch overhead and
// memory; per device pair, copy bandwidth and latency (pinned and pageable). Written by
// `hetnet calibrate` (measured) or shipped as an estimate (profiles/*.json say which in `source`).
// Device names are Device::str(): "cpu", "cuda:0".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hetnet {

struct RunProfile;  // core/profiler.h

// Shape classes of compute throughput: an op's FLOPs decide its class.
enum class ShapeClass { kSmall, kMedium, kLarge };  // < 1 MFLOP, < 100 MFLOP, larger
ShapeClass ShapeClassOf(double flops);
const char* ShapeClassName(ShapeClass c);  // "small", "medium", "large"

struct DeviceCaps {
  std::string name;                            // "cpu", "cuda:0"
  std::map<std::string, double> gemm_gflops;   // by ShapeClassName: sustained float32 GEMM
  std::map<std::string, double> conv_gflops;   // by ShapeClassName: float32 convolution
  double mem_bandwidth_gbs = 0;                // streaming read+write, GB/s (1e9 B/s)
  double dispatch_us = 0;                      // fixed cost per op (CPU dispatch; GPU launch)
  double run_overhead_us = 0;                  // fixed cost per net run that uses the device
                                               // (CPU: starting the run; GPU: its end-of-run wait)
  int64_t memory_bytes = 0;                    // usable memory (0: unknown)
};

struct LinkCaps {
  std::string from, to;  // device names
  bool pinned = true;    // host side pinned (page-locked) or pageable
  double bandwidth_gbs = 0;
  double latency_us = 0;
};

struct DeviceProfile {
  std::string machine;  // free text: "NVIDIA H100 80GB HBM3, 16-core host"
  std::string source;   // "measured by hetnet calibrate, 2026-11-26" or "estimated from vendor specs"
  std::string notes;    // free text: how the figures were obtained (optional in the file)
  std::vector<DeviceCaps> devices;
  std::vector<LinkCaps> links;
  // Measured / predicted time ratio per "<device>/<op type>" (folded back from profiled runs).
  std::map<std::string, double> corrections;
  // Measured time of one operator run, per "<device>|<op signature>" (core/op_cost.h OpSignature):
  // the cost model uses it instead of the FLOP estimate (core/measured_op_costs.h records it).
  std::map<std::string, double> measured_op_us;
  // For operators timed on a GPU, the same time in its two parts, by the same keys: the host's time
  // to issue the operator (its launches) and the device's time to run it.
  std::map<std::string, double> measured_launch_us, measured_device_us;
  // With true, the cost model overlaps those two parts (the host issues the next operator while the
  // GPU runs this one). Off by default: it charges measured_op_us in full, one operator after the
  // other, which predicted the measured runs better in both proof runs on an H200 (2026-11-27:
  // within 25% in 10 and 7 of 12 cases, against 6 and 3 with the overlap; benchmarks/RESULTS.md).
  bool overlap_gpu_launches = false;
  // Measured fixed time of a copy inside a net run, per "<from>-><to>" ("cpu->cuda:0"): what a
  // profiled copy took beyond bytes / the link's bandwidth (the wait for the producer's stream and
  // the host's wake-up included, which a copy loop in `hetnet calibrate` does not see). The cost
  // model uses it instead of the link's latency_us (core/measured_op_costs.h records it).
  std::map<std::string, double> measured_copy_latency_us;
  // Per "<device>|<net name>": the factor that net's measured entries on the device were multiplied
  // by so that the cost model predicts the net's plain run time (core/run_time_calibration.h). A
  // record of what was fitted; the scaled entries above are what the cost model reads.
  std::map<std::string, double> run_time_scales;

  const DeviceCaps* Find(const std::string& device) const;  // nullptr when absent
  const LinkCaps* FindLink(const std::string& from, const std::string& to, bool pinned = true) const;
  double Correction(const std::string& device, const std::string& op_type) const;  // 1 when absent
  double MeasuredUs(const std::string& device, const std::string& signature) const;  // -1 when absent
  // Both parts of a GPU operator's measured time; false when either is absent or
  // overlap_gpu_launches is off.
  bool MeasuredSplit(const std::string& device, const std::string& signature, double* launch_us,
                     double* device_us) const;

  // JSON (the file `hetnet calibrate` writes); Load throws kInvalidArgument naming the file and
  // field on malformed input, kNotFound for a missing file.
  std::string ToJson() const;
  static DeviceProfile FromJson(const std::string& text, const std::string& what = "profile");
  static DeviceProfile Load(const std::string& path);
  void Save(const std::string& path) const;
};

// Folds one profiled run back into `profile->corrections`: for every "<device>/<op type>" with
// timed ops, the correction is multiplied by the geometric mean of measured / predicted over
// those ops. `op_devices[i]` is the device op i ran on and `predicted_us[i]` its predicted time
// made with this profile (its current corrections applied), both by op index of `run`; ops with a
// non-positive prediction or time, and copy ops (link costs, not device work), are skipped.
// Returns how many corrections changed. Throws kInvalidArgument when the sizes disagree.
int FoldProfiledRun(DeviceProfile* profile, const RunProfile& run, const std::vector<std::string>& op_devices,
                    const std::vector<double>& predicted_us);

}  // namespace hetnet
