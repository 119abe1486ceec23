// The dependency graph of a net's operators, from the blobs they read and write: an op depends on
// the last writer of each blob it reads (read-after-write) or writes (write-after-write), and on
// every reader of a blob since its last write that it overwrites (write-after-read). In-place ops
// are a read and a write of one blob; control_input names are reads. Ops with no path between them
// touch no blob in a conflicting way, so any interleaving computes the sequential result.
#pragma once

#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet {

struct DagGraph {
  std::vector<std::vector<int>> parents;   // sorted, no duplicates
  std::vector<std::vector<int>> children;  // sorted, no duplicates
  std::vector<int> roots;                  // ops with no parents, in net order
};

DagGraph BuildDependencyGraph(const caffe2::NetDef& net);

}  // namespace hetnet
