// ModelStreamInfer: a bidirectional stream of ModelInferRequest -> ModelStreamInferResponse, as
// tritonclient's start_stream / async_stream_infer use it. Each request read goes to the server like
// a ModelInfer call (parsed under the request memory limit); each answer is written when its request
// completes, in completion order, carrying the request's id; a failed request is answered with
// `error_message` and the stream goes on.
//
// Bounds: a stream holds at most kMaxStreamBacklog requests in flight plus answers not yet written;
// past that it stops reading until the client takes answers, so a client that sends and never reads
// holds little. Every answer keeps its request's memory lease until written.
#include <deque>
#include <memory>
#include <mutex>

#include "serving/grpc_calls.h"
#include "serving/proto/grpc_service.pb.h"

namespace hetnet::serving {
namespace {

constexpr size_t kMaxStreamBacklog = 256;

class InferStream : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  InferStream(GrpcCalls* calls, grpc::CallbackServerContext* ctx) : calls_(calls) {
    grpc::Status st = calls_->Authorize(ctx, false);
    if (st.ok()) {
      st = Guard([&] { stream_memory_ = calls_->server->request_memory().Take(kGrpcCallBytes, "this stream"); });
    }
    if (!st.ok()) {
      state_->finished = true;
      Finish(st);
      return;
    }
    state_->reading = true;
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client half-closed, or the call ended
      Act([&](Actions* a) {
        state_->reading = false;
        state_->reads_done = true;
        Settle(a);
      });
      return;
    }
    Handle();
    Act([&](Actions* a) {
      state_->reading = false;
      Settle(a);
    });
  }

  void OnWriteDone(bool ok) override {
    Act([&](Actions* a) {
      state_->answers.pop_front();  // and with it the request's memory lease
      state_->writing = false;
      if (!ok) Break();
      Settle(a);
    });
  }

  void OnCancel() override {
    Act([&](Actions* a) {
      Break();
      Settle(a);
    });
  }

  void OnDone() override { delete this; }

 private:
  struct Answer {
    grpc::ByteBuffer bytes;
    std::shared_ptr<RequestMemoryLease> memory;
  };
  // Shared with the server's completion callbacks; `mu` guards everything in it.
  struct State {
    std::mutex mu;
    std::deque<Answer> answers;  // the front one is being written when `writing`
    size_t in_flight = 0;        // requests given to the server, not answered yet
    bool reading = false, writing = false, reads_done = false, broken = false, finished = false;
  };
  // What to start once the lock is released (gRPC may run a reaction inline).
  struct Actions {
    const grpc::ByteBuffer* write = nullptr;
    bool read = false;
    bool finish = false;
    grpc::Status status;
  };

  template <typename F>
  void Act(F&& decide) {
    Actions a;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      decide(&a);
    }
    if (a.write) StartWrite(a.write);
    if (a.read) StartRead(&in_);
    if (a.finish) Finish(a.status);  // may delete this: the last thing done here
  }

  // The client is gone: answers not written yet are dropped.
  void Break() {
    state_->broken = true;
    while (state_->answers.size() > (state_->writing ? 1u : 0u)) state_->answers.pop_back();
  }

  // Under the lock: the next write, the next read, or the end.
  void Settle(Actions* a) {
    State& s = *state_;
    if (s.finished) return;
    if (!s.writing && !s.broken && !s.answers.empty()) {
      s.writing = true;
      a->write = &s.answers.front().bytes;
    }
    if (!s.reading && !s.reads_done && !s.broken && s.in_flight + s.answers.size() < kMaxStreamBacklog) {
      s.reading = true;
      a->read = true;
    }
    if ((s.reads_done || s.broken) && !s.reading && !s.writing && s.in_flight == 0) {
      s.finished = true;
      a->finish = true;
      a->status = s.broken ? grpc::Status::CANCELLED : grpc::Status::OK;
    }
  }

  // One request read from the stream: parsed and given to the server, or answered with its error.
  void Handle() {
    GrpcCalls::ParsedInfer parsed;
    std::string id;
    grpc::Status st = Guard([&] { parsed = calls_->ParseInfer(&in_); });
    if (!st.ok()) return Deliver(state_, this, ErrorAnswer(st.error_message(), ""), nullptr, false);
    id = parsed.request->id;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      ++state_->in_flight;
    }
    std::shared_ptr<RequestMemoryLease> memory = parsed.memory;
    InferCallback done = [state = state_, self = this, memory, id](InferResult result) {
      grpc::ByteBuffer bytes;
      grpc::Status s;
      if (result.error) {
        bytes = ErrorAnswer(ClientMessage(*result.error), id);
      } else {
        s = Guard([&] {
          inference::ModelStreamInferResponse answer;
          HN_CHECK_KIND(kRuntime, result.response != nullptr, "inference completed without a response");
          grpc_detail::ToModelInferResponse(*result.response, answer.mutable_infer_response());
          SerializeInto(answer, &bytes);
        });
        if (!s.ok()) bytes = ErrorAnswer(s.error_message(), id);
      }
      Deliver(state, self, std::move(bytes), memory, true);
    };
    // InferAsync answers every error through `done` (also on this thread, before it returns).
    calls_->server->InferAsync(std::move(parsed.request), std::move(done), memory.get());
  }

  static grpc::ByteBuffer ErrorAnswer(const std::string& message, const std::string& id) {
    inference::ModelStreamInferResponse answer;
    answer.set_error_message(message);
    answer.mutable_infer_response()->set_id(id);
    grpc::ByteBuffer bytes;
    SerializeInto(answer, &bytes);
    return bytes;
  }

  // Queues an answer (from a server thread, or this one); `from_server` ends one request in flight.
  // `self` is touched only while the stream is not finished, which it cannot be while a request is
  // in flight.
  static void Deliver(const std::shared_ptr<State>& state, InferStream* self, grpc::ByteBuffer bytes,
                      std::shared_ptr<RequestMemoryLease> memory, bool from_server) {
    Actions a;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      if (from_server) --state->in_flight;
      if (!state->broken && !state->finished) state->answers.push_back({std::move(bytes), std::move(memory)});
      self->Settle(&a);
    }
    if (a.write) self->StartWrite(a.write);
    if (a.read) self->StartRead(&self->in_);
    if (a.finish) self->Finish(a.status);
  }

  GrpcCalls* calls_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::unique_ptr<RequestMemoryLease> stream_memory_;
  grpc::ByteBuffer in_;
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewInferStream(GrpcCalls* calls,
                                                                             grpc::CallbackServerContext* ctx) {
  return new InferStream(calls, ctx);
}

}  // namespace hetnet::serving
