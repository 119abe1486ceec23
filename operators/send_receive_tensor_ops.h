// SendTensor: [comm_world, X, (dst), (tag)] -> [] and ReceiveTensor: [comm_world, Y, (src), (tag)]
// -> [Y, src, tag] (Caffe2's communicator_op.cc; args dst/src, tag, raw_buffer). Schemas only: no
// engine has kernels (Caffe2 had none for GLOO either), so running one fails with the no-default-
// engine error.
#pragma once

#include "operators/communicator_op.h"
