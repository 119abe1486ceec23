// Lifetime safety (issue 18, item 3): deleting or replacing a net, removing a blob or destroying the
// workspace while another thread runs there. Deleting a running net used to abort the process
// ("pure virtual method called"). Now DeleteNet, CreateNet(overwrite), RemoveBlob (and Python's
// reset_workspace) are refused with kRuntime while a run is in flight; ~Workspace waits for it.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/net.h"
#include "core/operator.h"
#include "core/predictor.h"
#include "core/run_guard.h"
#include "core/workspace.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

// A gate the test opens: HostileTestBlock ops wait on it, so a run is in flight for as long as the
// test wants (no timing assumptions).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int entered = 0;
  std::atomic<int> passed{0};
  void Reset() {
    std::lock_guard<std::mutex> l(mu);
    open = false;
    entered = 0;
    passed = 0;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> l(mu);
      open = true;
    }
    cv.notify_all();
  }
  void WaitEntered() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return entered > 0; });
  }
} gate;

class HostileTestBlockOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    {
      std::unique_lock<std::mutex> l(gate.mu);
      ++gate.entered;
      gate.cv.notify_all();
      gate.cv.wait(l, [] { return gate.open; });
    }
    ++gate.passed;
    Output(0, {1}, DataType::Float)->mutable_data<float>()[0] = 1.f;
  }
};

caffe2::NetDef BlockingNet(const std::string& name, const std::string& type) {
  caffe2::NetDef net;
  net.set_name(name);
  net.set_type(type);
  net.add_external_input("x");
  AddOp(&net, "Relu", {"x"}, {"r"});
  AddOp(&net, "HostileTestBlock", {"r"}, {"y"});
  AddOp(&net, "Relu", {"y"}, {"z"});
  return net;
}

void Feed(Workspace& ws) { *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({2}, {-1, 3}); }

}  // namespace

OPERATOR_SCHEMA(HostileTestBlock).NumInputs(0, 1).NumOutputs(1);
REGISTER_CPU_OPERATOR(HostileTestBlock, HostileTestBlockOp);

TEST_CASE("hostile: deleting, replacing a running net or removing a blob is refused, then works", "[hostile]") {
  for (const char* type : {"simple", "dag"}) {
    INFO("net type " << type);
    gate.Reset();
    Workspace ws;
    Feed(ws);
    ws.CreateNet(BlockingNet("busy", type));
    std::thread runner([&] { ws.RunNet("busy"); });
    gate.WaitEntered();
    CHECK(RunsInFlight(ws.GetNet("busy")) == 1);
    CHECK_THROWS_WITH(ws.DeleteNet("busy"), Catch::Contains("cannot delete net 'busy'") &&
                                                Catch::Contains("in flight on another thread"));
    CHECK_THROWS_WITH(ws.CreateNet(BlockingNet("busy", type), /*overwrite=*/true),
                      Catch::Contains("cannot replace net 'busy'"));
    CHECK_THROWS_WITH(ws.RemoveBlob("x"), Catch::Contains("cannot remove blob 'x'"));
    // Other nets of the workspace can still be created and deleted meanwhile.
    ws.CreateNet(BlockingNet("other", "simple"));
    ws.DeleteNet("other");
    gate.Open();
    runner.join();
    CHECK(RunsInFlight(&ws) == 0);
    CHECK(ws.GetBlobOrThrow("z").GetTensor().data<float>()[0] == 1.f);
    ws.DeleteNet("busy");
    CHECK(ws.GetNet("busy") == nullptr);
    CHECK(ws.RemoveBlob("x"));
    Feed(ws);
    ws.RunNetOnce(BlockingNet("again", type));  // the gate is open: runs straight through
  }
}

TEST_CASE("hostile: a one-off run (RunNetOnce) also protects its blobs", "[hostile]") {
  gate.Reset();
  Workspace ws;
  Feed(ws);
  std::thread runner([&] { ws.RunNetOnce(BlockingNet("once", "simple")); });
  gate.WaitEntered();
  CHECK(RunsInFlight(&ws) == 1);
  CHECK_THROWS_WITH(ws.RemoveBlob("r"), Catch::Contains("cannot remove blob 'r'"));
  gate.Open();
  runner.join();
  CHECK(ws.RemoveBlob("r"));
}

TEST_CASE("hostile: destroying a workspace waits for the run in flight", "[hostile]") {
  gate.Reset();
  auto ws = std::make_unique<Workspace>();
  Feed(*ws);
  // A simple net: its destruction does not itself wait for the op (a DAG net joins its workers).
  ws->CreateNet(BlockingNet("busy", "simple"));
  Workspace* raw = ws.get();
  std::thread runner([raw] { raw->RunNet("busy"); });
  gate.WaitEntered();
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.Open();
  });
  // Destroy on this thread while the run blocks: the destructor waits for it instead of freeing
  // the net under the run.
  ws.reset();
  CHECK(gate.passed.load() == 1);  // the blocked op finished before the destructor returned
  CHECK(RunsInFlight(raw) == 0);
  opener.join();
  runner.join();
}

TEST_CASE("hostile: a run in a child workspace protects its parent; destroying the parent waits", "[hostile]") {
  // The child's net reads the parent's blob 'x': removing it or destroying the parent under the run
  // used to free memory the run reads.
  gate.Reset();
  auto parent = std::make_unique<Workspace>();
  Feed(*parent);
  Workspace* raw = parent.get();
  Workspace child(raw);
  child.CreateNet(BlockingNet("busy", "simple"));
  std::thread runner([&] { child.RunNet("busy"); });
  gate.WaitEntered();
  CHECK(RunsInFlight(raw) == 1);
  CHECK_THROWS_WITH(parent->RemoveBlob("x"), Catch::Contains("cannot remove blob 'x'") &&
                                                 Catch::Contains("child workspaces"));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.Open();
  });
  parent.reset();  // waits for the child's run
  CHECK(gate.passed.load() == 1);
  CHECK(RunsInFlight(raw) == 0);
  opener.join();
  runner.join();
  CHECK(RunsInFlight(&child) == 0);
}

TEST_CASE("hostile: destroying a Predictor waits for the Run in flight", "[hostile]") {
  gate.Reset();
  caffe2::NetDef init;
  init.set_name("init");
  AddOp(&init, "ConstantFill", {}, {"w"})->add_arg()->CopyFrom([] {
    caffe2::Argument a;
    a.set_name("shape");
    a.add_ints(2);
    return a;
  }());
  caffe2::NetDef predict;
  predict.set_name("predict");
  predict.add_external_input("w");
  predict.add_external_input("x");
  predict.add_external_output("z");
  AddOp(&predict, "Add", {"w", "x"}, {"r"});
  AddOp(&predict, "HostileTestBlock", {"r"}, {"y"});
  AddOp(&predict, "Relu", {"y"}, {"z"});
  auto p = std::make_unique<Predictor>(init, predict);
  Predictor* raw = p.get();
  std::atomic<bool> ran{false};
  std::thread runner([&] {
    auto out = raw->Run(Predictor::TensorMap{{"x", FloatTensor({2}, {-1, 3})}});
    ran = out.at("z").data<float>()[0] == 1.f;
  });
  gate.WaitEntered();
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.Open();
  });
  p.reset();  // waits for the Run (and its return of the instance to the pool)
  CHECK(gate.passed.load() == 1);
  runner.join();
  opener.join();
  CHECK(ran.load());
}
