// The plumbing of the gRPC front end's handlers (grpc_server.cc): errors to statuses, credentials,
// unary answers on the gRPC thread or from the repository worker, and raw messages parsed under
// the request memory limit. Private to the grpc_*.cc files.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <grpcpp/impl/codegen/proto_buffer_reader.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "core/error.h"
#include "serving/auth.h"
#include "serving/grpc_server.h"
#include "core/proto_parse_bound.h"
#include "serving/infer_request.h"
#include "serving/inference_server.h"
#include "serving/repository_worker.h"
#include "serving/request_memory.h"
#include "serving/status_map.h"

namespace hetnet::serving {

inline grpc::Status StatusOf(const Error& e) {
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

// What every handler shares: the server, the options, and the count of offloaded calls.
struct GrpcCalls {
  GrpcCalls(InferenceServer* s, const GrpcOptions& o) : server(s), options(o) {}

  InferenceServer* server;
  const GrpcOptions& options;

  RepositoryWorker repository;  // load and unload requests, one at a time

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

  // A unary call whose work may block for long (model loads): `prepare()` runs here (credentials
  // checked first), takes what it needs out of the request and returns the work, which the
  // repository worker runs and answers; UNAVAILABLE at once when the worker is full.
  template <typename Prepare>
  grpc::ServerUnaryReactor* Offload(grpc::CallbackServerContext* ctx, Prepare&& prepare) {
    auto* reactor = ctx->DefaultReactor();
    std::function<void()> fn;
    grpc::Status st = Authorize(ctx, false);
    if (st.ok()) st = Guard([&] { fn = prepare(); });
    if (!st.ok()) {
      reactor->Finish(st);
      return reactor;
    }
    // The job owns what the call needs but its reactor, which gRPC keeps until Finish.
    auto job = [reactor, fn = std::move(fn)] { reactor->Finish(Guard(fn)); };
    if (!repository.TryPost(std::move(job))) {
      reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, repository.BusyMessage()));
    }
    return reactor;
  }

  // Parses a raw request message once the bound of its parse (core/proto_parse_bound.h) is
  // charged to the request memory budget, and gives the wire bytes back to gRPC. The lease holds
  // the charge for as long as the message lives.
  // `extra_bytes` are charged with it, in one step (what the call holds beside the message).
  template <typename Msg>
  std::shared_ptr<RequestMemoryLease> ParseCharged(const grpc::ByteBuffer* wire, Msg* msg, const char* what,
                                                   uint64_t extra_bytes = 0) {
    auto* bb = const_cast<grpc::ByteBuffer*>(wire);  // this call's own buffer; cleared once parsed
    ParseBound bound;
    {
      grpc::ProtoBufferReader reader(bb);
      HN_CHECK_KIND(kInvalidArgument, reader.status().ok(), "cannot read the ", Msg::descriptor()->name(), ": ",
                    reader.status().error_message());
      bound = BoundParsedSize(Msg::descriptor(), &reader, bb->Length());
    }
    HN_CHECK_KIND(kInvalidArgument, bound.ok, "malformed ", Msg::descriptor()->name(), ": ", bound.error);
    std::shared_ptr<RequestMemoryLease> lease = server->request_memory().Take(bound.bytes + extra_bytes, what);
    const grpc::Status st = grpc::SerializationTraits<Msg>::Deserialize(bb, msg);
    HN_CHECK_KIND(kInvalidArgument, st.ok(), "malformed ", Msg::descriptor()->name(), ": ",
                  st.error_message().empty() ? "protobuf cannot parse it (a string field that is not UTF-8?)"
                                             : st.error_message());
    return lease;
  }

  // A raw unary method answered on the calling gRPC thread: fn(const Req&, Resp*).
  template <typename Req, typename Resp, typename F>
  grpc::ServerUnaryReactor* RawUnary(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* wire,
                                     grpc::ByteBuffer* out, bool health_rpc, F&& fn) {
    return Unary(ctx, health_rpc, [&] {
      Req request;
      const auto memory = ParseCharged(wire, &request, "this request");
      Resp response;
      fn(request, &response);
      SerializeInto(response, out);
    });
  }

  // A ModelInferRequest taken raw (ModelInfer, ModelStreamInfer): parsed under the request memory
  // limit, which also holds the call's own state (kGrpcCallBytes) and typed contents converted
  // beside the message; the inputs point into the message for as long as the request lives.
  struct ParsedInfer {
    std::unique_ptr<InferRequest> request;
    std::shared_ptr<RequestMemoryLease> memory;
  };
  ParsedInfer ParseInfer(const grpc::ByteBuffer* wire) {
    ParsedInfer p;
    auto message = std::make_shared<inference::ModelInferRequest>();
    p.memory = ParseCharged(wire, message.get(), "this request", kGrpcCallBytes);  // and the call's own state
    p.request = grpc_detail::ToInferRequest(message);
    if (message->raw_input_contents_size() == 0) {  // typed contents, converted beside the message
      uint64_t converted = 0;
      for (const auto& input : p.request->inputs) converted += input.byte_size;
      p.memory->GrowOrThrow(converted, "this request");
    }
    return p;
  }

  // Answers what is queued on the repository worker, then stops it (at shutdown).
  void WaitForOffloaded() { repository.Join(); }
};

// ModelStreamInfer (grpc_stream.cc): requests read one after another from the stream, each answered
// on it as it completes (in completion order; the response carries the request's id).
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewInferStream(GrpcCalls* calls,
                                                                             grpc::CallbackServerContext* ctx);

}  // namespace hetnet::serving
