// Broadcast: [comm_world, X1..Xn] -> [X1..Xn], in place (Caffe2's communicator_op.cc): every Xi on
// every rank ends as X1 of rank `root` (arg, a rank, default 0). Engines: GLOO (broadcast_op_gloo.cc:
// float32, float16, int32, int64), NCCL (operators/*nccl*); the default engine refuses.
#pragma once

#include "operators/communicator_op.h"

namespace hetnet {

// Arg `root`, checked against the world's size.
inline int BroadcastRootArgument(const OperatorBase& op, int world_size) {
  const int root = op.GetSingleArgument<int>("root", 0);
  HN_ENFORCE(root >= 0 && root < world_size, op.type(), ": root must be a rank of the common world (0..",
             world_size - 1, "), got ", root);
  return root;
}

}  // namespace hetnet
