// Runs in flight, per workspace and per net. Workspace::RunNet and RunNetOnce register their runs
// here, and so do bindings that run a net through its pointer (benchmarks, profiling), so that
// deleting a net, replacing it, removing a blob or resetting the workspace while another thread
// runs there is refused with a kRuntime error instead of destroying objects under the run; the
// Workspace destructor (which cannot refuse) waits for the runs to return.
#pragma once

#include <string>

namespace hetnet {

class NetBase;
class Workspace;

class RunGuard {
 public:
  // Registers a run in `ws` of `net` (nullptr for a one-off net that is not kept in ws).
  RunGuard(const Workspace* ws, const NetBase* net);
  ~RunGuard();
  RunGuard(const RunGuard&) = delete;
  RunGuard& operator=(const RunGuard&) = delete;

 private:
  const Workspace* ws_;
  const NetBase* net_;
};

// Runs in flight in ws (any net) / of net.
int RunsInFlight(const Workspace* ws);
int RunsInFlight(const NetBase* net);
// Throws kRuntime "<what>: N run(s) are in flight ... on another thread; retry after they return".
void RefuseWhileRunning(const Workspace* ws, const std::string& what);

}  // namespace hetnet
