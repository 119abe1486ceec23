// gRPC front end: inference.GRPCInferenceService and grpc.health.v1.Health on grpc++'s callback API.
// Unary handlers run on gRPC's callback threads and only translate messages; ModelInfer finishes
// from the InferenceServer's completion callback; ModelStreamInfer is grpc_stream.cc; repository
// load/unload (which block for as long as a load takes) run on the repository worker.
#include "serving/grpc_server.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include <grpc/grpc.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>

#include "core/error.h"
#include "serving/grpc_calls.h"
#include "serving/inference_server.h"
#include "serving/infer_request.h"
#include "serving/proto/grpc_service.grpc.pb.h"
#include "serving/proto/health.grpc.pb.h"
#include "serving/system_shared_memory.h"

namespace hetnet::serving {
namespace {

std::string HostPort(const std::string& address, int port) {
  const bool v6 = address.find(':') != std::string::npos && (address.empty() || address.front() != '[');
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

}  // namespace

// The two services, over the plumbing of grpc_calls.h.
struct GrpcFrontEnd::Services : GrpcCalls {
  Services(InferenceServer* s, const GrpcOptions& o) : GrpcCalls(s, o), inference(this), health(this) {}

  // Every unary method takes its message raw: gRPC's own parse would run before any check of ours,
  // and a small message can parse into 30 times its size (core/proto_parse_bound.h). Each is
  // parsed by ParseCharged, under the request memory limit; unimplemented ones are never parsed.
  using Svc = inference::GRPCInferenceService;
  using Raw0 = Svc::WithRawCallbackMethod_ServerLive<Svc::Service>;  // every method below is raw
  using Raw1 = Svc::WithRawCallbackMethod_ServerReady<Raw0>;
  using Raw2 = Svc::WithRawCallbackMethod_ModelReady<Raw1>;
  using Raw3 = Svc::WithRawCallbackMethod_ServerMetadata<Raw2>;
  using Raw4 = Svc::WithRawCallbackMethod_ModelMetadata<Raw3>;
  using Raw5 = Svc::WithRawCallbackMethod_ModelInfer<Raw4>;
  using Raw6 = Svc::WithRawCallbackMethod_ModelConfig<Raw5>;
  using Raw7 = Svc::WithRawCallbackMethod_ModelStatistics<Raw6>;
  using Raw8 = Svc::WithRawCallbackMethod_RepositoryIndex<Raw7>;
  using Raw9 = Svc::WithRawCallbackMethod_RepositoryModelLoad<Raw8>;
  using Raw10 = Svc::WithRawCallbackMethod_RepositoryModelUnload<Raw9>;
  using Raw11 = Svc::WithRawCallbackMethod_SystemSharedMemoryStatus<Raw10>;
  using Raw12 = Svc::WithRawCallbackMethod_SystemSharedMemoryRegister<Raw11>;
  using Raw13 = Svc::WithRawCallbackMethod_SystemSharedMemoryUnregister<Raw12>;
  using Raw14 = Svc::WithRawCallbackMethod_CudaSharedMemoryStatus<Raw13>;
  using Raw15 = Svc::WithRawCallbackMethod_CudaSharedMemoryRegister<Raw14>;
  using Raw16 = Svc::WithRawCallbackMethod_CudaSharedMemoryUnregister<Raw15>;
  using Raw17 = Svc::WithRawCallbackMethod_TraceSetting<Raw16>;
  using Raw18 = Svc::WithRawCallbackMethod_LogSettings<Raw17>;
  using Raw19 = Svc::WithRawCallbackMethod_ModelStreamInfer<Raw18>;
  using Base = Raw19;
  class Inference final : public Base {
   public:
    explicit Inference(Services* s) : s_(s) {}
    using Ctx = grpc::CallbackServerContext;
    using Reactor = grpc::ServerUnaryReactor;

    using Wire = grpc::ByteBuffer;
    template <typename Req, typename Resp, typename F>
    Reactor* Raw(Ctx* ctx, const Wire* in, Wire* out, bool health_rpc, F&& fn) {
      return s_->RawUnary<Req, Resp>(ctx, in, out, health_rpc, std::forward<F>(fn));
    }

    Reactor* ServerLive(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::ServerLiveRequest, inference::ServerLiveResponse>(
          ctx, in, out, true, [&](const auto&, auto* r) { r->set_live(s_->server->IsLive()); });
    }
    Reactor* ServerReady(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::ServerReadyRequest, inference::ServerReadyResponse>(
          ctx, in, out, true, [&](const auto&, auto* r) { r->set_ready(s_->server->IsReady()); });
    }
    Reactor* ModelReady(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::ModelReadyRequest, inference::ModelReadyResponse>(
          ctx, in, out, true, [&](const auto& q, auto* r) { r->set_ready(s_->server->ModelReady(q.name(), q.version())); });
    }
    Reactor* ServerMetadata(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::ServerMetadataRequest, inference::ServerMetadataResponse>(
          ctx, in, out, false, [&](const auto&, auto* r) { *r = s_->server->ServerMetadata(); });
    }
    Reactor* ModelMetadata(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::ModelMetadataRequest, inference::ModelMetadataResponse>(
          ctx, in, out, false, [&](const auto& q, auto* r) { *r = s_->server->ModelMetadata(q.name(), q.version()); });
    }
    Reactor* ModelConfig(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::ModelConfigRequest, inference::ModelConfigResponse>(
          ctx, in, out, false,
          [&](const auto& q, auto* r) { *r->mutable_config() = s_->server->ModelConfig(q.name(), q.version()); });
    }
    Reactor* ModelStatistics(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::ModelStatisticsRequest, inference::ModelStatisticsResponse>(
          ctx, in, out, false, [&](const auto& q, auto* r) { *r = s_->server->ModelStatistics(q.name(), q.version()); });
    }
    Reactor* RepositoryIndex(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::RepositoryIndexRequest, inference::RepositoryIndexResponse>(
          ctx, in, out, false, [&](const auto& q, auto* r) { *r = s_->server->RepositoryIndex(q.ready()); });
    }

    Reactor* RepositoryModelLoad(Ctx* ctx, const grpc::ByteBuffer* wire, grpc::ByteBuffer* out) override {
      // Everything the load needs is taken out of the message here: the worker thread uses nothing
      // of the call but its reactor.
      return s_->Offload(ctx, [&]() -> std::function<void()> {
        inference::RepositoryModelLoadRequest request;
        auto memory = s_->ParseCharged(wire, &request, "this load request");
        std::string config_json;
        std::map<std::string, std::string> files;
        // Files can be large: move their bytes out of the message.
        for (auto& [key, p] : *request.mutable_parameters()) {
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
        return [s = s_, name = request.model_name(), repository = request.repository_name(),
                config_json = std::move(config_json), files = std::move(files), memory, out] {
          HN_CHECK_KIND(kUnsupported, repository.empty(), "'repository_name' specification is not supported");
          s->server->LoadModel(name, config_json, files);
          SerializeInto(inference::RepositoryModelLoadResponse(), out);
        };
      });
    }

    Reactor* RepositoryModelUnload(Ctx* ctx, const Wire* wire, Wire* out) override {
      // unload_dependents has no meaning without ensembles; it is accepted and ignored.
      return s_->Offload(ctx, [&]() -> std::function<void()> {
        inference::RepositoryModelUnloadRequest request;
        s_->ParseCharged(wire, &request, "this unload request");
        return [s = s_, name = request.model_name(), repository = request.repository_name(), out] {
          HN_CHECK_KIND(kUnsupported, repository.empty(), "'repository_name' specification is not supported");
          s->server->UnloadModel(name);
          SerializeInto(inference::RepositoryModelUnloadResponse(), out);
        };
      });
    }

    Reactor* ModelInfer(Ctx* ctx, const grpc::ByteBuffer* wire, grpc::ByteBuffer* out) override {
      auto* reactor = ctx->DefaultReactor();
      grpc::Status st = s_->Authorize(ctx, false);
      std::unique_ptr<InferRequest> request;
      std::shared_ptr<RequestMemoryLease> memory;
      if (st.ok()) {
        st = Guard([&] {
          auto parsed = s_->ParseInfer(wire);
          request = std::move(parsed.request);
          memory = std::move(parsed.memory);
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
      grpc::Status thrown = Guard([&] { s_->server->InferAsync(std::move(request), done, memory.get()); });
      if (!thrown.ok() && !finished->exchange(true)) reactor->Finish(thrown);
      return reactor;
    }

    Reactor* SystemSharedMemoryStatus(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::SystemSharedMemoryStatusRequest, inference::SystemSharedMemoryStatusResponse>(
          ctx, in, out, false, [&](const auto& q, auto* r) {
            for (const auto& region : s_->server->shared_memory().Status(q.name())) {
              auto& status = (*r->mutable_regions())[region.name];
              status.set_name(region.name);
              status.set_key(region.key);
              status.set_offset(region.offset);
              status.set_byte_size(region.byte_size);
            }
          });
    }
    Reactor* SystemSharedMemoryRegister(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::SystemSharedMemoryRegisterRequest, inference::SystemSharedMemoryRegisterResponse>(
          ctx, in, out, false, [&](const auto& q, auto*) {
            s_->server->shared_memory().Register(q.name(), q.key(), q.offset(), q.byte_size());
          });
    }
    Reactor* SystemSharedMemoryUnregister(Ctx* ctx, const Wire* in, Wire* out) override {
      return Raw<inference::SystemSharedMemoryUnregisterRequest, inference::SystemSharedMemoryUnregisterResponse>(
          ctx, in, out, false, [&](const auto& q, auto*) { s_->server->shared_memory().Unregister(q.name()); });
    }

    // Everything else answers UNIMPLEMENTED with a message naming the RPC.
#define HETNET_GRPC_UNIMPLEMENTED(Rpc)                                                               \
  Reactor* Rpc(Ctx* ctx, const grpc::ByteBuffer*, grpc::ByteBuffer*) override {                     \
    return s_->Unary(ctx, false, [] { HN_THROW(kUnsupported, #Rpc " is not supported by hetnet"); }); \
  }
    HETNET_GRPC_UNIMPLEMENTED(CudaSharedMemoryStatus)
    HETNET_GRPC_UNIMPLEMENTED(CudaSharedMemoryRegister)
    HETNET_GRPC_UNIMPLEMENTED(CudaSharedMemoryUnregister)
    HETNET_GRPC_UNIMPLEMENTED(TraceSetting)
    HETNET_GRPC_UNIMPLEMENTED(LogSettings)
#undef HETNET_GRPC_UNIMPLEMENTED

    grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ModelStreamInfer(Ctx* ctx) override {
      return NewInferStream(s_, ctx);
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
  // gRPC's own buffers (messages being received) are bounded too, and past the bound gRPC resets
  // streams of its choosing, accepted calls included. hetnet can refuse a message only once it has
  // arrived whole, so the quota leaves room for one more message above the limit: a message that
  // does not fit is refused by hetnet (UNAVAILABLE), and gRPC reclaims only under a flood of
  // messages arriving at once. (A parsed message's buffer is freed at once: what a queued call holds
  // is counted by hetnet, not by gRPC.)
  if (const uint64_t limit = server_->request_memory().limit(); limit > 0) {
    const uint64_t headroom = std::min<uint64_t>(limit, static_cast<uint64_t>(options_.max_message_size));
    grpc::ResourceQuota quota("hetnet request memory");
    quota.Resize(static_cast<size_t>(std::min<uint64_t>(limit + headroom, SIZE_MAX / 2)));
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
