#include "operators/create_common_world_op.h"

#include <cstdlib>

#include "operators/communicator_op.h"

namespace hetnet {

namespace {

// Rank and size from the MPI launcher (OpenMPI, then MPICH/PMI), or false when neither is set.
bool RankFromMpiEnvironment(int* rank, int* size) {
  for (const auto& [r, s] : {std::pair<const char*, const char*>{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                             {"PMI_RANK", "PMI_SIZE"}}) {
    const char* rv = std::getenv(r);
    const char* sv = std::getenv(s);
    if (rv && sv && *rv && *sv) {
      *rank = std::atoi(rv);
      *size = std::atoi(sv);
      return true;
    }
  }
  return false;
}

}  // namespace

CommonWorldArgs ParseCreateCommonWorldArgs(const OperatorBase& op) {
  CommonWorldArgs a;
  a.name = op.def().name();
  // Presence, as Caffe2 checked it (has_name): Python's core.CreateOperator always sets a name, "" by
  // default, and gloo_test's worlds are unnamed; an empty name is an empty store prefix.
  HN_ENFORCE(op.def().has_name(), "CreateCommonWorld operator requires name");
  a.size = op.GetSingleArgument<int>("size", 0);
  a.rank = op.GetSingleArgument<int>("rank", 0);
  if (op.GetSingleArgument<bool>("mpi_rendezvous", false)) {
    int rank = 0, size = 0;
    HN_ENFORCE(RankFromMpiEnvironment(&rank, &size), "CreateCommonWorld '", a.name,
               "': mpi_rendezvous needs an MPI launcher's environment (OMPI_COMM_WORLD_RANK/SIZE or PMI_RANK/SIZE)");
    HN_ENFORCE(!op.HasArgument("size") || a.size == size, "CreateCommonWorld '", a.name, "': size ", a.size,
               " disagrees with the MPI launcher's ", size);
    HN_ENFORCE(!op.HasArgument("rank") || a.rank == rank, "CreateCommonWorld '", a.name, "': rank ", a.rank,
               " disagrees with the MPI launcher's ", rank);
    a.rank = rank;
    a.size = size;
  }
  HN_ENFORCE(a.rank >= 0 && a.rank < a.size, "CreateCommonWorld '", a.name,
             "': rank must satisfy 0 <= rank < size, got rank ", a.rank, " and size ", a.size);
  HN_ENFORCE(op.InputSize() == 1, "CreateCommonWorld '", a.name,
             "' needs a store handler input (kv_handler) to rendezvous through",
             " (mpi_rendezvous takes rank and size from the launcher, not the store)");
  a.sync = op.GetSingleArgument<bool>("sync", false);
  a.transport = op.GetSingleArgument<std::string>("transport", "tcp");
  a.interface = op.GetSingleArgument<std::string>("interface", "");
  a.timeout = CommonWorldTimeoutArgument(op);
  return a;
}

StoreHandlerPtr StoreHandlerOfInput(const OperatorBase& op, int i) {
  const Blob* b = op.InputBlob(i);
  HN_ENFORCE(b->IsType<StoreHandlerPtr>() && b->Get<StoreHandlerPtr>(), op.type(), ": input ", i, " ('",
             op.def().input(i), "') must hold a store handler (made by FileStoreHandlerCreate, ",
             "TCPStoreHandlerCreate or RedisStoreHandlerCreate), but it holds ", b->TypeName());
  return b->Get<StoreHandlerPtr>();
}

OPERATOR_SCHEMA(CreateCommonWorld).NumInputs(0, 1).NumOutputs(1).InputsOnCPU({0}).OutputsOnCPU({0})
    .SetDoc("Creates a common world (engine GLOO or NCCL) by rendezvous through the kv_handler store.");
REGISTER_CPU_OPERATOR(CreateCommonWorld, NoDefaultEngineOp);

}  // namespace hetnet
