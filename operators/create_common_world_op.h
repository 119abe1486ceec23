// CreateCommonWorld: [kv_handler] -> [comm_world] (Caffe2's communicator_op.cc, distributed-facts
// §1.3). Args: size, rank (0 <= rank < size), sync (GLOO: accepted, no effect; gloo_common_world.h),
// transport ("tcp" | "ibverbs"), interface, timeout_ms (-1: 30 s), status_blob, mpi_rendezvous
// (rank and size from the MPI launcher's environment; the rendezvous still goes through the
// kv_handler store: no MPI is linked). The
// OperatorDef's name is required: it prefixes the rendezvous keys in the store.
// Engines register kernels (GLOO: create_common_world_op_gloo.cc); the default engine refuses.
#pragma once

#include <chrono>
#include <string>

#include "core/operator.h"
#include "device/collectives/store_handler.h"

namespace hetnet {

struct CommonWorldArgs {
  std::string name;
  int size = 0;
  int rank = 0;
  bool sync = false;
  std::string transport = "tcp";
  std::string interface;
  std::chrono::milliseconds timeout{30000};
};

// The op's args, checked (engine-neutral: GLOO and NCCL kernels share it).
CommonWorldArgs ParseCreateCommonWorldArgs(const OperatorBase& op);

// The store handler in input `i`, checked.
StoreHandlerPtr StoreHandlerOfInput(const OperatorBase& op, int i);

}  // namespace hetnet
