// Barrier: [comm_world] -> [] (Caffe2's communicator_op.cc): returns once every rank entered it.
// Engine GLOO: barrier_op_gloo.cc.
#pragma once

#include "operators/communicator_op.h"
