// The gRPC front end of `hetnet serve`: inference.GRPCInferenceService (KServe v2 / Open Inference
// Protocol with Triton's extensions, serving/proto/grpc_service.proto) and grpc.health.v1.Health,
// on grpc++'s callback API. A thin translation layer over InferenceServer: it validates nothing
// the server validates, and maps hetnet::Error kinds to gRPC codes with status_map.h.
#pragma once

#include <chrono>
#include <climits>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

namespace grpc {
class Server;
}
namespace inference {
class ModelInferRequest;
class ModelInferResponse;
}

namespace hetnet::serving {

class InferenceServer;
struct InferRequest;
struct InferResponse;

struct GrpcOptions {
  std::string address = "127.0.0.1";
  int port = 8001;  // 0 = any free port (see GrpcFrontEnd::port())
  int max_message_size = INT32_MAX;  // receive and send limit, bytes
  std::string auth_token;            // non-empty: every RPC needs "authorization: Bearer <token>"
  bool auth_health_open = false;     // health RPCs (live, ready, model ready, Health/Check) need no token
  int keepalive_time_ms = 7200000;
  int keepalive_timeout_ms = 20000;
};

class GrpcFrontEnd {
 public:
  // Binds and starts serving; throws hetnet::Error kUnavailable naming address and port when the
  // port cannot be bound. `server` must outlive this object (or at least its Shutdown()).
  GrpcFrontEnd(InferenceServer* server, GrpcOptions options);
  ~GrpcFrontEnd();  // Shutdown(0) if not done yet
  GrpcFrontEnd(const GrpcFrontEnd&) = delete;
  GrpcFrontEnd& operator=(const GrpcFrontEnd&) = delete;

  // The port actually bound (differs from options.port when that was 0).
  int port() const { return port_; }
  const GrpcOptions& options() const { return options_; }

  // Stops accepting calls; calls in flight get until `deadline` to finish, then are cancelled.
  // Returns once every handler has completed. Idempotent.
  void Shutdown(std::chrono::milliseconds deadline);

  // Implementation detail shared with the service classes in grpc_server.cc.
  struct Services;

 private:
  InferenceServer* server_;
  GrpcOptions options_;
  int port_ = 0;
  std::unique_ptr<Services> services_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::mutex shutdown_mu_;
  bool shut_down_ = false;
};

namespace grpc_detail {
// ModelInferRequest -> InferRequest. The inputs point into `message` (raw_input_contents, or typed
// `contents` converted to the wire bytes), which the inputs' `holder` keeps alive. Throws
// hetnet::Error kInvalidArgument for requests the protocol forbids (raw and typed contents mixed,
// sequence parameters, bad parameter types).
std::unique_ptr<InferRequest> ToInferRequest(std::shared_ptr<const inference::ModelInferRequest> message);
// InferResponse -> ModelInferResponse with raw_output_contents in output order.
void ToModelInferResponse(const InferResponse& response, inference::ModelInferResponse* out);
}  // namespace grpc_detail

}  // namespace hetnet::serving
