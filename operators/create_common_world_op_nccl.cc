// CreateCommonWorld, engine NCCL (beyond Caffe2): an NCCL communicator with one GPU per process,
// the op's GPU, set up through the kv_handler store within timeout_ms (nccl_common_world.h).
// `sync` makes each collective wait (bounded) for its own completion; `transport` is NCCL's choice
// ("tcp" and "ibverbs" accepted); `interface` becomes NCCL_SOCKET_IFNAME, which NCCL reads once per
// process, so a later world asking for another interface is refused rather than silently ignored.
// Run on one GPU (H100, 2026-11-27: tests/cpp/test_nccl_ops.cc [gpu] pass); several GPUs never ran.
#include <cstdlib>
#include <mutex>

#include "operators/communicator_op_nccl.h"
#include "operators/create_common_world_op.h"

namespace hetnet {

namespace {
void ApplyInterface(const std::string& world, const std::string& iface) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const char* have = std::getenv("NCCL_SOCKET_IFNAME");
  if (iface.empty() || (have && iface == have)) return;
  HN_ENFORCE(!have || !*have, "CreateCommonWorld '", world, "' (engine NCCL) asks for interface '", iface,
             "' but NCCL_SOCKET_IFNAME is '", have, "': NCCL picks its interface once per process");
  setenv("NCCL_SOCKET_IFNAME", iface.c_str(), 1);
}
}  // namespace

class CreateCommonWorldNcclOp final : public Operator<CUDAContext> {
 public:
  CreateCommonWorldNcclOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), status_(*this, ws) {
    const CommonWorldArgs a = ParseCreateCommonWorldArgs(*this);
    HN_ENFORCE(a.transport == "tcp" || a.transport == "ibverbs", "Invalid transport: ", a.transport);
    opts_.name = a.name;
    opts_.rank = a.rank;
    opts_.size = a.size;
    opts_.sync = a.sync;
    opts_.timeout = a.timeout;
    opts_.device = context_.device_id();
    interface_ = a.interface;
  }
  void RunOnDevice() override {
    status_.Run([&] {
      ApplyInterface(opts_.name, interface_);
      SetCommonWorldOutput(this, 0, NCCLCommonWorld::Create(opts_, StoreHandlerOfInput(*this, 0)));
    });
  }

 private:
  NcclWorldOptions opts_;
  std::string interface_;
  CommunicatorStatus status_;
};

REGISTER_CUDA_OPERATOR_WITH_ENGINE(CreateCommonWorld, NCCL, CreateCommonWorldNcclOp);

}  // namespace hetnet
