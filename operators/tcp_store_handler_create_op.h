// TCPStoreHandlerCreate: 0 inputs, 1 output (a store handler over TCP for env:// rendezvous,
// device/collectives/tcp_store_handler.h). Args: host (default $MASTER_ADDR, else 127.0.0.1),
// port (default $MASTER_PORT; 0 with is_server picks a free port), is_server or rank (rank 0
// serves; default from $RANK), timeout_ms (default 30000), prefix.
#pragma once

#include <chrono>

#include "core/operator.h"

namespace hetnet {

class TCPStoreHandlerCreateOp final : public Operator<CPUContext> {
 public:
  TCPStoreHandlerCreateOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::string host_, prefix_;
  int port_ = 0;
  bool is_server_ = false;
  std::chrono::milliseconds timeout_;
};

}  // namespace hetnet
