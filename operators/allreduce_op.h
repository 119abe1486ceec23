// Allreduce: [comm_world, X1..Xn] -> [X1..Xn], in place, Sum (Caffe2's communicator_op.cc). Every
// Xi ends as the sum over ranks of X1 + ... + Xn (the local tensors are reduced too, as Caffe2's
// multi-buffer algorithms did). Engines: GLOO (allreduce_op_gloo.cc: float32, float16, float64,
// int32, int64), NCCL (operators/*nccl*); the default engine refuses.
#pragma once

#include "operators/communicator_op.h"
