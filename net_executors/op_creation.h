// Operator creation shared by the executors: every input must be an external input, an earlier
// output or a workspace blob; errors name the net and the operator.
#pragma once

#include <memory>
#include <vector>

#include "core/operator.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class Workspace;

// Stream ids a copy op queues on (argument "stream_id"), so copies overlap compute on stream 0.
constexpr int kHostToDeviceStream = 1;
constexpr int kDeviceToHostStream = 2;
constexpr int kPeerCopyStream = 3;

// With copy_streams, copy ops of `def` get their per-direction stream id (def is updated to match).
// Then calls PrepareConstantInputs on every operator.
std::vector<std::unique_ptr<OperatorBase>> CreateNetOperators(caffe2::NetDef& def, Workspace* ws, bool copy_streams);

// Tells each operator of `def` (ops[i] made from def.op(i)), in order, which of its inputs are
// constant: they hold a tensor now, on the device the operator reads them on, and the net writes
// them only by earlier operators that computed them here (OperatorBase::PrepareConstantInputs).
void PrepareConstantInputs(const caffe2::NetDef& def, const std::vector<std::unique_ptr<OperatorBase>>& ops);

}  // namespace hetnet
