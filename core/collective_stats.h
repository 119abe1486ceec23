// What a collective kernel did in its last run (distributed-facts §8 R17). Engine kernels of the
// communicator ops (operators/*_gloo.cc, *_nccl.cc) implement CollectiveStatsSource; the profiler
// reads it with dynamic_cast and writes it into the trace, so OperatorBase needs no hook.
#pragma once

#include <cstdint>

namespace hetnet {

struct CollectiveRunStats {
  int64_t bytes = 0;      // bytes of the tensors reduced, broadcast or gathered on this rank
  double seconds = 0;     // wall time of the collective
  int peers = 0;          // world size - 1 (0 when it ran locally)
  const char* algorithm = "";
};

class CollectiveStatsSource {
 public:
  virtual ~CollectiveStatsSource() = default;
  virtual const CollectiveRunStats& last_collective_run() const = 0;
};

}  // namespace hetnet
