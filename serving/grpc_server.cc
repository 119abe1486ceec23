// gRPC front end: inference.GRPCInferenceService and grpc.health.v1.Health on grpc++'s callback API.
// Unary handlers run on gRPC's callback threads and only translate messages; ModelInfer finishes
// from the InferenceServer's completion callback; repository load/unload (which block for as long
// as a load takes) run on their own threads so they never hold a gRPC thread.
#include "serving/grpc_server.h"

#include <atomic>
#include <exception>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include <grpc/grpc.h>
#include <grpcpp/impl/codegen/proto_buffer_reader.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>

#include "core/error.h"
#include "serving/auth.h"
#include "serving/inference_server.h"
#include "serving/infer_request.h"
#include "serving/proto_parse_bound.h"
#include "serving/request_memory.h"
#include "serving/proto/grpc_service.grpc.pb.h"
#include "serving/proto/health.grpc.pb.h"
#include "serving/status_map.h"

namespace hetnet::serving {
namespace {

grpc::Status StatusOf(const Error& e) {
  return grpc::Status(static_cast<grpc::StatusCode>(GrpcStatusOf(e.kind())), ClientMessage(e));
}

// Runs `fn`, turning exceptions into a gRPC status.
template <typename F>
grpc::Status Guard(F&& fn) {
  try {
    fn();
    return grpc::Status::OK;
  } catch (const Error& e) {
    return StatusOf(e);
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  } catch (...) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "unknown error");
  }
}

// A raw method's answer.
template <typename Msg>
void SerializeInto(const Msg& msg, grpc::ByteBuffer* out) {
  bool own = false;
  const grpc::Status st = grpc::SerializationTraits<Msg>::Serialize(msg, out, &own);
  HN_CHECK_KIND(kRuntime, st.ok(), "cannot serialize the ", Msg::descriptor()->name(), ": ", st.error_message());
}

std::string HostPort(const std::string& address, int port) {
  const bool v6 = address.find(':') != std::string::npos && (address.empty() || address.front() != '[');
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

}  // namespace

// Everything the handlers share: the server, the options, and the count of offloaded calls.
struct GrpcFrontEnd::Services {
  Services(InferenceServer* s, const GrpcOptions& o) : server(s), options(o), inference(this), health(this) {}

  InferenceServer* server;
  const GrpcOptions& options;

  std::mutex offload_mu;
  std::condition_variable offload_cv;
  int offloaded = 0;

  grpc::Status Authorize(grpc::CallbackServerContext* ctx, bool health_rpc) const {
    if (options.auth_token.empty() || (health_rpc && options.auth_health_open)) return grpc::Status::OK;
    const auto& md = ctx->client_metadata();
    auto it = md.find("authorization");
    if (it != md.end() &&
        AuthorizationMatches(options.auth_token, std::string_view(it->second.data(), it->second.length()))) {
      return grpc::Status::OK;
    }
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing or invalid credentials: send metadata 'authorization: Bearer <token>'");
  }

  // A unary call answered on the calling gRPC thread.
  template <typename F>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* ctx, bool health_rpc, F&& fn) {
    auto* reactor = ctx->DefaultReactor();
    grpc::Status st = Authorize(ctx, health_rpc);
    if (st.ok()) st = Guard(std::forward<F>(fn));
    reactor->Finish(st);
    return reactor;
  }

  // A unary call whose work may block for long (model loads): answered from its own thread.
  template <typename F>
  grpc::ServerUnaryReactor* Offload(grpc::CallbackServerContext* ctx, F fn) {
    auto* reactor = ctx->DefaultReactor();
    grpc::Status st = Authorize(ctx, false);
    if (!st.ok()) {
      reactor->Finish(st);
      return reactor;
    }
    {
      std::lock_guard<std::mutex> lk(offload_mu);
      ++offloaded;
    }
    try {
      std::thread([this, reactor, fn = std::move(fn)]() mutable {
        reactor->Finish(Guard(fn));
        std::lock_guard<std::mutex> lk(offload_mu);
        if (--offloaded == 0) offload_cv.notify_all();
      }).detach();
    } catch (const std::exception& e) {  // thread creation failed
      reactor->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()));
      std::lock_guard<std::mutex> lk(offload_mu);
      if (--offloaded == 0) offload_cv.notify_all();
    }
    return reactor;
  }

  // Parses a raw request message once the bound of its parse (serving/proto_parse_bound.h) is
  // charged to the request memory budget, and gives the wire bytes back to gRPC. The lease holds
  // the charge for as long as the message lives.
  template <typename Msg>
  std::shared_ptr<RequestMemoryLease> ParseCharged(const grpc::ByteBuffer* wire, Msg* msg, const char* what) {
    auto* bb = const_cast<grpc::ByteBuffer*>(wire);  // this call's own buffer; cleared once parsed
    ParseBound bound;
    {
      grpc::ProtoBufferReader reader(bb);
      HN_CHECK_KIND(kInvalidArgument, reader.status().ok(), "cannot read the ", Msg::descriptor()->name(), ": ",
                    reader.status().error_message());
      bound = BoundParsedSize(Msg::descriptor(), &reader);
    }
    HN_CHECK_KIND(kInvalidArgument, bound.ok, "malformed ", Msg::descriptor()->name(), ": ", bound.error);
    std::shared_ptr<RequestMemoryLease> lease = server->request_memory().Take(bound.bytes, what);
    const grpc::Status st = grpc::SerializationTraits<Msg>::Deserialize(bb, msg);
    HN_CHECK_KIND(kInvalidArgument, st.ok(), "malformed ", Msg::descriptor()->name(), ": ",
                  st.error_message().empty() ? "protobuf cannot parse it (a string field that is not UTF-8?)"
                                             : st.error_message());
    return lease;
  }

  void WaitForOffloaded() {
    std::unique_lock<std::mutex> lk(offload_mu);
    offload_cv.wait(lk, [this] { return offloaded == 0; });
  }

  // ModelInfer and RepositoryModelLoad take their messages raw: the bound of the parse is charged
  // before protobuf builds anything (a small message can parse into 30 times its size).
  using Base = inference::GRPCInferenceService::WithRawCallbackMethod_RepositoryModelLoad<
      inference::GRPCInferenceService::WithRawCallbackMethod_ModelInfer<inference::GRPCInferenceService::CallbackService>>;
  class Inference final : public Base {
   public:
    explicit Inference(Services* s) : s_(s) {}
    using Ctx = grpc::CallbackServerContext;
    using Reactor = grpc::ServerUnaryReactor;

    Reactor* ServerLive(Ctx* ctx, const inference::ServerLiveRequest*, inference::ServerLiveResponse* out) override {
      return s_->Unary(ctx, true, [&] { out->set_live(s_->server->IsLive()); });
    }
    Reactor* ServerReady(Ctx* ctx, const inference::ServerReadyRequest*,
                         inference::ServerReadyResponse* out) override {
      return s_->Unary(ctx, true, [&] { out->set_ready(s_->server->IsReady()); });
    }
    Reactor* ModelReady(Ctx* ctx, const inference::ModelReadyRequest* in,
                        inference::ModelReadyResponse* out) override {
      return s_->Unary(ctx, true, [&] { out->set_ready(s_->server->ModelReady(in->name(), in->version())); });
    }
    Reactor* ServerMetadata(Ctx* ctx, const inference::ServerMetadataRequest*,
                            inference::ServerMetadataResponse* out) override {
      return s_->Unary(ctx, false, [&] { *out = s_->server->ServerMetadata(); });
    }
    Reactor* ModelMetadata(Ctx* ctx, const inference::ModelMetadataRequest* in,
                           inference::ModelMetadataResponse* out) override {
      return s_->Unary(ctx, false, [&] { *out = s_->server->ModelMetadata(in->name(), in->version()); });
    }
    Reactor* ModelConfig(Ctx* ctx, const inference::ModelConfigRequest* in,
                         inference::ModelConfigResponse* out) override {
      return s_->Unary(ctx, false,
                       [&] { *out->mutable_config() = s_->server->ModelConfig(in->name(), in->version()); });
    }
    Reactor* ModelStatistics(Ctx* ctx, const inference::ModelStatisticsRequest* in,
                             inference::ModelStatisticsResponse* out) override {
      return s_->Unary(ctx, false, [&] { *out = s_->server->ModelStatistics(in->name(), in->version()); });
    }
    Reactor* RepositoryIndex(Ctx* ctx, const inference::RepositoryIndexRequest* in,
                             inference::RepositoryIndexResponse* out) override {
      return s_->Unary(ctx, false, [&] { *out = s_->server->RepositoryIndex(in->ready()); });
    }

    Reactor* RepositoryModelLoad(Ctx* ctx, const grpc::ByteBuffer* wire, grpc::ByteBuffer* out) override {
      // Everything the load needs is taken out of the message here: the worker thread uses nothing
      // of the call but its reactor.
      std::string name, repository, config_json;
      std::map<std::string, std::string> files;
      grpc::Status st = s_->Authorize(ctx, false);
      std::shared_ptr<RequestMemoryLease> memory;
      if (st.ok()) st = Guard([&] {
        inference::RepositoryModelLoadRequest request;
        memory = s_->ParseCharged(wire, &request, "this load request");
        name = request.model_name();
        repository = request.repository_name();
        // Files can be large: move their bytes out of the message.
        auto* params = request.mutable_parameters();
        for (auto& [key, p] : *params) {
          using Param = inference::ModelRepositoryParameter;
          if (key == "config") {
            HN_CHECK_KIND(kInvalidArgument, p.parameter_choice_case() == Param::kStringParam,
                          "load parameter 'config' must be a string_param holding the model config as JSON");
            config_json = p.string_param();
          } else if (key.rfind("file:", 0) == 0) {
            HN_CHECK_KIND(kInvalidArgument, p.parameter_choice_case() == Param::kBytesParam, "load parameter '", key,
                          "' must be a bytes_param holding the file's contents");
            files[key].swap(*p.mutable_bytes_param());
          }
        }
      });
      if (!st.ok()) {
        auto* reactor = ctx->DefaultReactor();
        reactor->Finish(st);
        return reactor;
      }
      return s_->Offload(ctx, [s = s_, name = std::move(name), repository = std::move(repository),
                               config_json = std::move(config_json), files = std::move(files), memory, out] {
        HN_CHECK_KIND(kUnsupported, repository.empty(), "'repository_name' specification is not supported");
        s->server->LoadModel(name, config_json, files);
        SerializeInto(inference::RepositoryModelLoadResponse(), out);
      });
    }

    Reactor* RepositoryModelUnload(Ctx* ctx, const inference::RepositoryModelUnloadRequest* in,
                                   inference::RepositoryModelUnloadResponse*) override {
      // unload_dependents has no meaning without ensembles; it is accepted and ignored.
      return s_->Offload(ctx, [s = s_, name = in->model_name(), repository = in->repository_name()] {
        HN_CHECK_KIND(kUnsupported, repository.empty(), "'repository_name' specification is not supported");
        s->server->UnloadModel(name);
      });
    }

    Reactor* ModelInfer(Ctx* ctx, const grpc::ByteBuffer* wire, grpc::ByteBuffer* out) override {
      auto* reactor = ctx->DefaultReactor();
      grpc::Status st = s_->Authorize(ctx, false);
      std::unique_ptr<InferRequest> request;
      std::shared_ptr<RequestMemoryLease> memory;
      if (st.ok()) {
        st = Guard([&] {
          // The inputs point into the message for as long as the server needs them.
          auto message = std::make_shared<inference::ModelInferRequest>();
          memory = s_->ParseCharged(wire, message.get(), "this request");
          request = grpc_detail::ToInferRequest(message);
          if (message->raw_input_contents_size() == 0) {  // typed contents, converted beside the message
            uint64_t converted = 0;
            for (const auto& input : request->inputs) converted += input.byte_size;
            memory->GrowOrThrow(converted, "this request");
          }
        });
      }
      if (!st.ok()) {
        reactor->Finish(st);
        return reactor;
      }
      auto finished = std::make_shared<std::atomic<bool>>(false);
      InferCallback done = [reactor, out, finished, memory](InferResult result) mutable {
        if (finished->exchange(true)) return;
        grpc::Status s;
        if (result.error) {
          s = StatusOf(*result.error);
        } else if (!result.response) {
          s = grpc::Status(grpc::StatusCode::INTERNAL, "inference completed without a response");
        } else {
          s = Guard([&] {
            inference::ModelInferResponse response;
            grpc_detail::ToModelInferResponse(*result.response, &response);
            SerializeInto(response, out);
          });
        }
        memory.reset();  // the request is done with: the client may send the next one on seeing the answer
        reactor->Finish(s);
      };
      grpc::Status thrown = Guard([&] { s_->server->InferAsync(std::move(request), done); });
      if (!thrown.ok() && !finished->exchange(true)) reactor->Finish(thrown);
      return reactor;
    }

    // Everything else answers UNIMPLEMENTED with a message naming the RPC.
#define HETNET_GRPC_UNIMPLEMENTED(Rpc)                                                               \
  Reactor* Rpc(Ctx* ctx, const inference::Rpc##Request*, inference::Rpc##Response*) override {      \
    return s_->Unary(ctx, false, [] { HN_THROW(kUnsupported, #Rpc " is not supported by hetnet"); }); \
  }
    HETNET_GRPC_UNIMPLEMENTED(SystemSharedMemoryStatus)
    HETNET_GRPC_UNIMPLEMENTED(SystemSharedMemoryRegister)
    HETNET_GRPC_UNIMPLEMENTED(SystemSharedMemoryUnregister)
    HETNET_GRPC_UNIMPLEMENTED(CudaSharedMemoryStatus)
    HETNET_GRPC_UNIMPLEMENTED(CudaSharedMemoryRegister)
    HETNET_GRPC_UNIMPLEMENTED(CudaSharedMemoryUnregister)
    HETNET_GRPC_UNIMPLEMENTED(TraceSetting)
    HETNET_GRPC_UNIMPLEMENTED(LogSettings)
#undef HETNET_GRPC_UNIMPLEMENTED

    grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>* ModelStreamInfer(
        Ctx*) override {
      class Refuse : public grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse> {
       public:
        Refuse() {
          Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "ModelStreamInfer is not supported by hetnet"));
        }
        void OnDone() override { delete this; }
      };
      return new Refuse();
    }

   private:
    Services* s_;
  };

  class Health final : public grpc::health::v1::Health::CallbackService {
   public:
    explicit Health(Services* s) : s_(s) {}
    grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* ctx, const grpc::health::v1::HealthCheckRequest* in,
                                    grpc::health::v1::HealthCheckResponse* out) override {
      return s_->Unary(ctx, true, [&] {
        // "" is the server as a whole; the inference service is the only other one served.
        HN_CHECK_KIND(kNotFound, in->service().empty() || in->service() == "inference.GRPCInferenceService",
                      "unknown service '", in->service(), "'");
        out->set_status(s_->server->IsReady() ? grpc::health::v1::HealthCheckResponse::SERVING
                                              : grpc::health::v1::HealthCheckResponse::NOT_SERVING);
      });
    }

   private:
    Services* s_;
  };

  Inference inference;
  Health health;
};

GrpcFrontEnd::GrpcFrontEnd(InferenceServer* server, GrpcOptions options)
    : server_(server), options_(std::move(options)) {
  HN_CHECK_KIND(kInvalidArgument, server_ != nullptr, "GrpcFrontEnd needs an InferenceServer");
  HN_CHECK_KIND(kInvalidArgument, options_.port >= 0 && options_.port <= 65535, "invalid gRPC port ", options_.port);
  services_ = std::make_unique<Services>(server_, options_);
  const std::string endpoint = HostPort(options_.address, options_.port);

  grpc::ServerBuilder builder;
  builder.AddListeningPort(endpoint, grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(&services_->inference);
  builder.RegisterService(&services_->health);
  builder.SetMaxReceiveMessageSize(options_.max_message_size);
  builder.SetMaxSendMessageSize(options_.max_message_size);
  // gRPC's own buffers (messages being received) stay within the request memory limit: past it,
  // gRPC stops reading from the sockets until memory is given back.
  if (const uint64_t limit = server_->request_memory().limit(); limit > 0) {
    grpc::ResourceQuota quota("hetnet request memory");
    quota.Resize(static_cast<size_t>(limit));
    builder.SetResourceQuota(quota);
  }
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, options_.keepalive_time_ms);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, options_.keepalive_timeout_ms);
  // gRPC sets SO_REUSEPORT by default, which lets a second server "bind" a port already in use.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  grpc_server_ = builder.BuildAndStart();
  if (!grpc_server_ || port_ == 0) {
    if (grpc_server_) grpc_server_->Shutdown();
    grpc_server_.reset();
    HN_THROW(kUnavailable, "cannot bind the gRPC endpoint ", endpoint, " (--grpc-address ", options_.address,
             ", --grpc-port ", options_.port, "): address in use or not available");
  }
}

GrpcFrontEnd::~GrpcFrontEnd() { Shutdown(std::chrono::milliseconds(0)); }

void GrpcFrontEnd::Shutdown(std::chrono::milliseconds deadline) {
  std::lock_guard<std::mutex> lk(shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  if (grpc_server_) {
    // Waits for every handler to finish; calls still running at the deadline are cancelled first.
    grpc_server_->Shutdown(std::chrono::system_clock::now() + deadline);
    services_->WaitForOffloaded();
    grpc_server_->Wait();
  }
}

}  // namespace hetnet::serving
