// Reduce: [comm_world, X] -> [Y] (Caffe2's communicator_op.cc "Reduce"; not the ReduceSum family of
// reduce_ops.h): Y on rank `root` (arg, default 0) is the sum of X over the ranks; Y on the other
// ranks is left undefined (Gloo uses it as scratch). Beyond Caffe2, engine GLOO implements it
// (collective_reduce_op_gloo.cc: float32, float16, float64, int32, int64).
#pragma once

#include "operators/broadcast_op.h"
