// RedisStoreHandlerCreate: 0 inputs, 1 output (a store handler in a Redis server,
// device/collectives/gloo_redis_store_handler.h; only in builds with Gloo). Args: host (required),
// port (required, nonzero), prefix, timeout_ms (Redis reply bound, default 30000).
#pragma once

#include <chrono>

#include "core/operator.h"

namespace hetnet {

class RedisStoreHandlerCreateOp final : public Operator<CPUContext> {
 public:
  RedisStoreHandlerCreateOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::string host_, prefix_;
  int port_;
  std::chrono::milliseconds timeout_;
};

}  // namespace hetnet
