#include "core/gradient.h"
#include "device/collectives/gloo_redis_store_handler.h"
#include "operators/redis_store_handler_create_op.h"
#include "operators/store_op_util.h"

namespace hetnet {

RedisStoreHandlerCreateOp::RedisStoreHandlerCreateOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      host_(GetSingleArgument<std::string>("host", "")),
      prefix_(GetSingleArgument<std::string>("prefix", "")),
      port_(GetSingleArgument<int>("port", 0)),
      timeout_(StoreTimeoutArgument(*this)) {
  HN_ENFORCE(!host_.empty(), "RedisStoreHandlerCreate: host is a required argument");
  HN_ENFORCE(port_ != 0, "RedisStoreHandlerCreate: port is a required argument");
}

void RedisStoreHandlerCreateOp::RunOnDevice() {
  SetStoreHandlerOutput(this, 0, std::make_shared<GlooRedisStoreHandler>(host_, port_, prefix_, timeout_));
}

OPERATOR_SCHEMA(RedisStoreHandlerCreate).NumInputs(0).NumOutputs(1)
    .SetDoc("Creates a store handler in a Redis server (Gloo's RedisStore). Args: host and port (required), "
            "prefix (prepended to every key), timeout_ms (bound on each Redis reply, default 30000).");
REGISTER_CPU_OPERATOR(RedisStoreHandlerCreate, RedisStoreHandlerCreateOp);
NO_GRADIENT(RedisStoreHandlerCreate);

}  // namespace hetnet
