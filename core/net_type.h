// What a net's type says about how it runs, for code that reasons about execution without
// creating the net (the cost model of auto placement, core/auto_placement_model.h).
#pragma once

#include <string>

namespace hetnet {

// Whether nets of `type` run their operators in parallel (Caffe2's DAG and async types, all run by
// the "dag" executor where this build has it); "", "simple" and "cuda_graph" run them in net order.
bool IsParallelNetType(const std::string& type);

}  // namespace hetnet
