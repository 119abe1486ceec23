// Each model instance runs its operators with an intra-op thread budget (core/intra_op_threads.h):
// the config's parameter "intra_op_thread_count" when set, else the cores shared by every loaded
// instance; on the instance's thread and on a front end's thread (inline runs) alike, and the
// front end's own setting is restored afterwards.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <thread>

#include <google/protobuf/text_format.h>

#include "core/intra_op_threads.h"
#include "core/operator.h"
#include "serving/inference_server.h"
#include "serving/model_config_loader.h"
#include "serving/model_version.h"

using namespace hetnet;
using namespace hetnet::serving;

namespace {

// Writes the OpenMP team size of the thread running it (x only orders it after the feed).
class ServingIntraOpProbeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    Output(0, {1}, DataType::Int64)->mutable_data<int64_t>()[0] = CurrentIntraOpThreads();
  }
};
OPERATOR_SCHEMA(ServingIntraOpProbe).NumInputs(1).NumOutputs(1);
REGISTER_CPU_OPERATOR(ServingIntraOpProbe, ServingIntraOpProbeOp);

ModelNets ProbeNets() {
  ModelNets nets;
  auto& net = nets.predict_net;
  net.set_name("probe");
  net.add_external_input("x");
  net.add_external_output("n");
  auto* op = net.add_op();
  op->set_type("ServingIntraOpProbe");
  op->add_input("x");
  op->add_output("n");
  return nets;
}

inference::ModelConfig ProbeConfig(const std::string& extra) {
  inference::ModelConfig c;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      "name: 'probe' max_batch_size: 0 "
      "input [ { name: 'x' data_type: TYPE_FP32 dims: [ 1 ] } ] "
      "output [ { name: 'n' data_type: TYPE_INT64 dims: [ 1 ] } ] "
      "instance_group [ { kind: KIND_CPU count: 2 } ] " +
          extra,
      &c));
  return c;
}

// One request; returns the team size the model's op ran with. `inline_run` tells whether it ran
// on this thread (the answer comes on the thread that ran it).
int64_t Infer(ModelVersion& model, bool* inline_run = nullptr) {
  static const float x = 1.f;
  auto req = std::make_unique<InferRequest>();
  req->model_name = "probe";
  req->inputs.push_back({"x", "FP32", {1}, reinterpret_cast<const char*>(&x), sizeof(x), nullptr});
  auto promise = std::make_shared<std::promise<InferResult>>();
  auto future = promise->get_future();
  auto answered_on = std::make_shared<std::thread::id>();
  model.Enqueue(std::move(req), [promise, answered_on](InferResult r) {
    *answered_on = std::this_thread::get_id();
    promise->set_value(std::move(r));
  });
  REQUIRE(future.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  InferResult r = future.get();
  if (inline_run) *inline_run = *answered_on == std::this_thread::get_id();
  if (r.error) FAIL(r.error->what());
  REQUIRE(r.response);
  REQUIRE(r.response->outputs.size() == 1u);
  const Tensor& t = r.response->outputs[0].tensor;
  REQUIRE(t.nbytes() == sizeof(int64_t));
  int64_t n = 0;
  std::memcpy(&n, t.raw_data(), sizeof(n));
  return n;
}

bool HaveOpenMP() {
  ScopedIntraOpThreads two(2);
  return CurrentIntraOpThreads() == 2;
}

}  // namespace

TEST_CASE("a model's intra_op_thread_count parameter sets its instances' team size", "[serving][intra_op]") {
  ServerOptions options;
  ModelVersion model(ProbeConfig("parameters { key: 'intra_op_thread_count' value: { string_value: '3' } }"), 1,
                     ProbeNets(), options);
  const int caller_before = CurrentIntraOpThreads();
  const int64_t expected = HaveOpenMP() ? 3 : 1;
  // The first run goes to an instance's thread; once measured short, later ones run inline on
  // this (the front end's) thread: both with the model's budget.
  int inline_runs = 0;
  for (int i = 0; i < 5; ++i) {
    bool on_caller = false;
    CHECK(Infer(model, &on_caller) == expected);
    inline_runs += on_caller;
  }
  CHECK(inline_runs >= 1);
  CHECK(CurrentIntraOpThreads() == caller_before);
}

TEST_CASE("by default the loaded instances share the cores", "[serving][intra_op]") {
  const char* env = std::getenv("HETNET_INTRA_OP_THREADS");
  if (env && *env) {
    WARN("skipped: HETNET_INTRA_OP_THREADS is set");
    return;
  }
  ServerOptions options;
  ModelVersion model(ProbeConfig(""), 1, ProbeNets(), options);
  const int64_t two_instances = HaveOpenMP() ? IntraOpBudget(2) : 1;
  for (int i = 0; i < 3; ++i) CHECK(Infer(model) == two_instances);
  {
    // A second loaded model with 2 more instances: four may now run at once.
    ModelVersion other(ProbeConfig(""), 1, ProbeNets(), options);
    const int64_t four_instances = HaveOpenMP() ? IntraOpBudget(4) : 1;
    CHECK(Infer(model) == four_instances);
  }
  CHECK(Infer(model) == two_instances);
}

TEST_CASE("a malformed intra_op_thread_count fails the load naming the model", "[serving][intra_op]") {
  ServerOptions options;
  for (const char* bad : {"two", "-1", "3 ", ""}) {
    INFO(bad);
    try {
      ModelVersion model(ProbeConfig(std::string("parameters { key: 'intra_op_thread_count' value: { string_value: '") +
                                     bad + "' } }"),
                         1, ProbeNets(), options);
      FAIL("loaded");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInvalidArgument);
      CHECK(std::string(e.what()).find("intra_op_thread_count") != std::string::npos);
      CHECK(std::string(e.what()).find("'probe'") != std::string::npos);
    }
  }
}
