// CloneCommonWorld: [existing_comm_world] -> [comm_world] (Caffe2's communicator_op.cc): a new,
// independent world with the same ranks, whose connections rendezvous over the existing world's
// (no store). Args: sync, status_blob. Engine GLOO: clone_common_world_op_gloo.cc.
#pragma once

#include "operators/communicator_op.h"
