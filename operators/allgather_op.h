// Allgather: [comm_world, X1..Xn] -> [Y] (Caffe2's communicator_op.cc): Y is 1-D with
// n * numel * size elements, rank-major then input index (rank 0's X1..Xn, then rank 1's, ...).
// Engines: GLOO (allgather_op_gloo.cc: float32, float16, int32, int64), NCCL (operators/*nccl*).
#pragma once

#include "operators/communicator_op.h"
