#include "operators/tcp_store_handler_create_op.h"

#include <cerrno>
#include <cstdlib>

#include "core/gradient.h"
#include "device/collectives/tcp_store_handler.h"
#include "operators/store_op_util.h"

namespace hetnet {

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int64_t ParseEnvInt(const char* name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  HN_ENFORCE(!text.empty() && errno == 0 && end == text.c_str() + text.size(), "TCPStoreHandlerCreate: $", name,
             " = '", text, "' is not an integer");
  return v;
}

}  // namespace

TCPStoreHandlerCreateOp::TCPStoreHandlerCreateOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      prefix_(GetSingleArgument<std::string>("prefix", "")),
      timeout_(StoreTimeoutArgument(*this)) {
  const std::string master = Env("MASTER_ADDR");
  host_ = GetSingleArgument<std::string>("host", master.empty() ? "127.0.0.1" : master);
  if (HasArgument("port")) {
    port_ = GetSingleArgument<int>("port", 0);
  } else {
    const std::string env = Env("MASTER_PORT");
    HN_ENFORCE(!env.empty(), "TCPStoreHandlerCreate: port is a required argument (or set MASTER_PORT)");
    port_ = static_cast<int>(ParseEnvInt("MASTER_PORT", env));
  }
  HN_ENFORCE(port_ >= 0 && port_ <= 65535, "TCPStoreHandlerCreate: port ", port_, " is out of range");
  if (HasArgument("is_server")) {
    is_server_ = GetSingleArgument<int>("is_server", 0) != 0;
  } else if (HasArgument("rank")) {
    is_server_ = GetSingleArgument<int>("rank", -1) == 0;
  } else {
    const std::string env = Env("RANK");
    HN_ENFORCE(!env.empty(), "TCPStoreHandlerCreate: give is_server or rank (rank 0 serves), or set RANK");
    is_server_ = ParseEnvInt("RANK", env) == 0;
  }
  HN_ENFORCE(is_server_ || port_ > 0, "TCPStoreHandlerCreate: port 0 is only for the server (it picks a free port)");
}

void TCPStoreHandlerCreateOp::RunOnDevice() {
  SetStoreHandlerOutput(this, 0, std::make_shared<TCPStoreHandler>(host_, port_, is_server_, timeout_, prefix_));
}

OPERATOR_SCHEMA(TCPStoreHandlerCreate).NumInputs(0).NumOutputs(1)
    .SetDoc("Creates a store handler over TCP (env:// rendezvous). Args: host (default $MASTER_ADDR or 127.0.0.1), "
            "port (default $MASTER_PORT), is_server or rank (rank 0 runs the server in this process; default "
            "from $RANK), timeout_ms (connect and I/O bound, default 30000), prefix.");
REGISTER_CPU_OPERATOR(TCPStoreHandlerCreate, TCPStoreHandlerCreateOp);
NO_GRADIENT(TCPStoreHandlerCreate);

}  // namespace hetnet
