// ReduceScatter: [comm_world, X1..Xn, recvCounts] -> [X1..Xn, recvCounts], in place, Sum (Caffe2's
// communicator_op.cc with the GLOO kernel's trailing int32 recvCounts, numel == world size, summing
// to numel): on rank r, the segment of recvCounts[r] elements starting at recvCounts[0] + ... +
// recvCounts[r-1] of every Xi holds the sum over ranks of X1 + ... + Xn there; the rest of the
// tensors is left undefined. Engines: GLOO (reduce_scatter_op_gloo.cc), NCCL (operators/*nccl*).
#pragma once

#include "operators/communicator_op.h"
