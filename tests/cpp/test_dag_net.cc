// The parallel executor ("dag"): dependency graph rules, bit-for-bit equality with the sequential
// executor on many random DAGs (in-place ops, reused names, control inputs), repeated runs, errors
// mid-run, many workers; [gpu] tests (skipped without a device) for mixed-device random DAGs and
// the stream-aware caching allocator.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <random>
#include <set>

#include "core/net.h"
#include "core/profiler.h"
#include "core/workspace.h"
#include "core/dag_graph.h"

#include <cmath>

using namespace hetnet;

namespace {

constexpr int64_t kBatch = 4, kDim = 8;

caffe2::OperatorDef* AddOp(caffe2::NetDef* net, const std::string& type, std::vector<std::string> in,
                           std::vector<std::string> out) {
  auto* op = net->add_op();
  op->set_type(type);
  for (auto& i : in) op->add_input(i);
  for (auto& o : out) op->add_output(o);
  return op;
}

void Feed(Workspace* ws, const std::string& name, std::vector<int64_t> shape, unsigned seed, float scale = 1.f) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device::CPU());
  t->Resize(shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  float* p = t->mutable_data<float>();
  for (int64_t i = 0; i < t->numel(); ++i) p[i] = u(rng);
}

// A random net over [kBatch, kDim] float blobs: inputs x0..x2, FC weights w0..w1 / b0..b1.
caffe2::NetDef RandomNet(std::mt19937& rng, int num_ops, const std::string& type, int workers,
                         int gpu_percent = 0) {
  caffe2::NetDef net;
  net.set_name("random_dag");
  net.set_type(type);
  net.set_num_workers(workers);
  std::vector<std::string> avail = {"x0", "x1", "x2"}, produced;
  std::map<std::string, bool> on_gpu;  // a name keeps its first writer's device (the copy pass's rule)
  for (auto n : {"x0", "x1", "x2", "w0", "w1", "b0", "b1"}) net.add_external_input(n);
  const std::vector<std::string> types = {"Relu", "Sigmoid", "Tanh", "Add", "Mul", "Sum", "Scale", "FC"};
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  for (int i = 0; i < num_ops; ++i) {
    const std::string t = pick(types);
    std::vector<std::string> in;
    if (t == "Add" || t == "Mul") in = {pick(avail), pick(avail)};
    else if (t == "Sum") for (unsigned k = 0, n = 1 + rng() % 3; k < n; ++k) in.push_back(pick(avail));
    else if (t == "FC") in = {pick(avail), rng() % 2 ? "w0" : "w1", rng() % 2 ? "b0" : "b1"};
    else in = {pick(avail)};
    std::string out;
    const unsigned r = rng() % 100;
    const bool in_place_ok = t != "FC" && in[0][0] != 'x';  // inputs stay as fed
    if (r < 20 && in_place_ok) out = in[0];                        // in place
    else if (r < 45 && !produced.empty()) out = pick(produced);    // a reused name
    else out = "t" + std::to_string(i);
    for (size_t k = 0; k < in.size(); ++k)  // keep to the schemas' in-place rules
      if (in[k] == out && (t == "FC" || (k > 0 && t != "Add" && t != "Mul"))) out = "t" + std::to_string(i);
    auto* op = AddOp(&net, t, in, {out});
    op->set_name("op" + std::to_string(i));
    if (t == "Scale") {
      auto* a = op->add_arg();
      a->set_name("scale");
      a->set_f(0.5f);
    }
    if (rng() % 100 < 15) op->add_control_input(pick(avail));
    const bool gpu = on_gpu.count(out) ? on_gpu[out] : gpu_percent && static_cast<int>(rng() % 100) < gpu_percent;
    on_gpu[out] = gpu;
    if (gpu) {
      op->mutable_device_option()->set_device_type(1);
      op->mutable_device_option()->set_device_id(0);
    }
    if (!std::count(produced.begin(), produced.end(), out)) produced.push_back(out), avail.push_back(out);
  }
  return net;
}

void FeedInputs(Workspace* ws, unsigned seed) {
  Feed(ws, "x0", {kBatch, kDim}, seed + 1);
  Feed(ws, "x1", {kBatch, kDim}, seed + 2);
  Feed(ws, "x2", {kBatch, kDim}, seed + 3);
  Feed(ws, "w0", {kDim, kDim}, seed + 4, 0.5f);
  Feed(ws, "w1", {kDim, kDim}, seed + 5, 0.5f);
  Feed(ws, "b0", {kDim}, seed + 6);
  Feed(ws, "b1", {kDim}, seed + 7);
}

// Every tensor blob of the workspace, on CPU.
std::map<std::string, Tensor> Snapshot(const Workspace& ws) {
  std::map<std::string, Tensor> out;
  for (const auto& name : ws.Blobs()) {
    const Blob* b = ws.GetBlob(name);
    if (b->IsTensor() && b->GetTensor().initialized()) out[name] = b->GetTensor().To(Device::CPU());
  }
  return out;
}

bool BitEqual(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// Runs def sequentially and with its own type `runs` times, feeding fresh inputs each time.
void CheckSameAsSequential(const caffe2::NetDef& def, int runs, unsigned seed) {
  Workspace seq_ws, dag_ws;
  caffe2::NetDef seq_def = def;
  seq_def.set_type("simple");
  FeedInputs(&seq_ws, seed);
  FeedInputs(&dag_ws, seed);
  NetBase* seq = seq_ws.CreateNet(seq_def);
  NetBase* dag = dag_ws.CreateNet(def);
  for (int r = 0; r < runs; ++r) {
    FeedInputs(&seq_ws, seed + 100 * r);
    FeedInputs(&dag_ws, seed + 100 * r);
    seq->Run();
    dag->Run();
    auto want = Snapshot(seq_ws), got = Snapshot(dag_ws);
    REQUIRE(want.size() == got.size());
    for (const auto& [name, t] : want) {
      INFO("blob " << name << ", run " << r << ", net:\n" << def.DebugString());
      REQUIRE(got.count(name));
      REQUIRE(BitEqual(t, got.at(name)));
    }
  }
}

bool Close(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != DataType::Float) return false;
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) {
      if (std::isfinite(x[i]) != std::isfinite(y[i])) return false;
      continue;
    }
    if (std::fabs(x[i] - y[i]) > 1e-4f + 1e-4f * std::fabs(x[i])) return false;
  }
  return true;
}

caffe2::NetDef OnCpu(caffe2::NetDef def) {
  def.set_type("simple");
  for (auto& op : *def.mutable_op()) op.clear_device_option();
  return def;
}

}  // namespace

TEST_CASE("dependency graph: read/write hazards, in-place, control inputs", "[dag]") {
  caffe2::NetDef net;
  AddOp(&net, "Relu", {"x"}, {"a"});           // 0
  AddOp(&net, "Relu", {"x"}, {"b"});           // 1: independent of 0
  AddOp(&net, "Add", {"a", "b"}, {"c"});       // 2: RAW on 0 and 1
  AddOp(&net, "Relu", {"c"}, {"c"});           // 3: in place, RAW/WAW on 2
  AddOp(&net, "Relu", {"y"}, {"a"});           // 4: WAR on 2 (read a), WAW on 0
  AddOp(&net, "Relu", {"y"}, {"d"})->add_control_input("c");  // 5: control input: after 3
  AddOp(&net, "Relu", {"y"}, {"e"});           // 6: independent
  DagGraph g = BuildDependencyGraph(net);
  CHECK(g.roots == std::vector<int>{0, 1, 6});
  CHECK(g.parents[2] == std::vector<int>{0, 1});
  CHECK(g.parents[3] == std::vector<int>{2});
  CHECK(g.parents[4] == std::vector<int>{0, 2});
  CHECK(g.parents[5] == std::vector<int>{3});
  CHECK(g.children[2] == std::vector<int>{3, 4});
}

TEST_CASE("dag equals the sequential executor bit for bit on random DAGs", "[dag]") {
  std::mt19937 rng(1234);
  const int workers[] = {1, 2, 3, 4, 8};
  for (int k = 0; k < 300; ++k) {
    const int ops = 5 + static_cast<int>(rng() % 60);
    auto def = RandomNet(rng, ops, k % 3 == 0 ? "async_scheduling" : "dag", workers[k % 5]);
    CheckSameAsSequential(def, 3, 17 * k);
  }
}

TEST_CASE("Caffe2's parallel net types run on the dag executor", "[dag]") {
  for (const char* type : {"dag", "async_dag", "prof_dag", "async_scheduling", "parallel"}) {
    std::mt19937 rng(7);
    auto def = RandomNet(rng, 20, type, 3);
    Workspace ws;
    FeedInputs(&ws, 1);
    NetBase* net = ws.CreateNet(def);
    RunProfile p = ProfileRun(net);
    INFO(type);
    REQUIRE(p.ops.size() == 20u);
    for (const auto& t : p.ops) CHECK(t.lane.rfind("worker ", 0) == 0);  // timed on the worker pool
    CheckSameAsSequential(def, 2, 5);
  }
}

TEST_CASE("an error mid-run names net, op and blob, stops the run, and leaves the net runnable", "[dag]") {
  caffe2::NetDef net;
  net.set_name("wide");
  net.set_type("dag");
  net.set_num_workers(4);
  for (auto n : {"x0", "x1", "x2", "w0", "w1", "b0", "b1"}) net.add_external_input(n);
  for (int c = 0; c < 8; ++c) {  // 8 chains; chain 5 uses the weight that will have a bad shape
    std::string prev = "x" + std::to_string(c % 3);
    for (int d = 0; d < 6; ++d) {
      std::string out = "c" + std::to_string(c) + "_" + std::to_string(d);
      if (d == 3) AddOp(&net, "FC", {prev, c == 5 ? "w1" : "w0", "b0"}, {out});
      else AddOp(&net, d % 2 ? "Tanh" : "Relu", {prev}, {out});
      prev = out;
    }
  }
  Workspace ws;
  FeedInputs(&ws, 3);
  NetBase* dag = ws.CreateNet(net);
  Feed(&ws, "w1", {kDim, kDim + 1}, 9);  // K mismatch: FC of chain 5 fails
  for (int attempt = 0; attempt < 20; ++attempt) {
    try {
      dag->Run();
      FAIL("expected an error");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find("in net 'wide', operator #33 (FC)") != std::string::npos);
      CHECK(what.find("'w1'") != std::string::npos);
      CHECK(e.kind() == ErrorKind::kInvalidArgument);
    }
    const Blob* after = ws.GetBlob("c5_4");  // downstream of the failure: never ran
    CHECK((!after || !after->IsTensor() || !after->GetTensor().initialized()));
  }
  FeedInputs(&ws, 3);  // fixed: the same net runs and matches the sequential executor
  dag->Run();
  auto seq_def = net;
  seq_def.set_type("simple");
  seq_def.set_name("wide_seq");
  Workspace seq_ws;
  FeedInputs(&seq_ws, 3);
  seq_ws.CreateNet(seq_def)->Run();
  for (int c = 0; c < 8; ++c) {
    const std::string last = "c" + std::to_string(c) + "_5";
    CHECK(BitEqual(seq_ws.GetBlob(last)->GetTensor(), ws.GetBlob(last)->GetTensor()));
  }
}

TEST_CASE("stress: 16 workers, wide random nets, many runs", "[dag]") {
  std::mt19937 rng(99);
  for (int k = 0; k < 6; ++k) {
    auto def = RandomNet(rng, 200, "dag", 16);
    CheckSameAsSequential(def, 25, 31 * k);
  }
}

TEST_CASE("nets with no ops and one op", "[dag]") {
  Workspace ws;
  caffe2::NetDef empty;
  empty.set_name("empty");
  empty.set_type("dag");
  ws.CreateNet(empty)->Run();
  std::mt19937 rng(3);
  CheckSameAsSequential(RandomNet(rng, 1, "dag", 4), 3, 1);
}

TEST_CASE("gpu: mixed-device random DAGs equal the CPU result", "[gpu][dag]") {
  if (NumCudaDevices() == 0) {
    WARN("skipped: no CUDA device");
    return;
  }
  std::mt19937 rng(2024);
  for (int k = 0; k < 60; ++k) {
    auto def = RandomNet(rng, 5 + static_cast<int>(rng() % 40), "dag", 1 + k % 6, 50);
    Workspace cpu_ws, gpu_ws;
    NetBase* cpu = cpu_ws.CreateNet(OnCpu(def));
    FeedInputs(&gpu_ws, k);
    NetBase* gpu = gpu_ws.CreateNet(def);
    for (int r = 0; r < 3; ++r) {
      FeedInputs(&cpu_ws, k + 100 * r);
      FeedInputs(&gpu_ws, k + 100 * r);
      cpu->Run();
      gpu->Run();
      for (const auto& [name, want] : Snapshot(cpu_ws)) {
        INFO("net " << k << " run " << r << " blob " << name << "\n" << gpu->def().DebugString());
        REQUIRE(gpu_ws.GetBlob(name));
        CHECK(Close(want, gpu_ws.GetBlob(name)->GetTensor().To(Device::CPU())));
      }
    }
    if (k == 0) {  // GPU ops are timed on their worker's stream
      bool gpu_lane = false;
      for (const auto& t : ProfileRun(gpu).ops) gpu_lane |= t.lane.find("cuda:0") != std::string::npos;
      CHECK(gpu_lane);
    }
  }
}

TEST_CASE("gpu: caching allocator reuses blocks across worker streams without corruption", "[gpu][dag]") {
  if (NumCudaDevices() == 0) {
    WARN("skipped: no CUDA device");
    return;
  }
  // Chains over xa grow every run and free blocks of last run's size on their streams; chains over
  // xb ask for exactly that size on other streams in the same run.
  caffe2::NetDef net;
  net.set_name("alloc_stress");
  net.set_type("dag");
  net.set_num_workers(8);
  net.add_external_input("xa");
  net.add_external_input("xb");
  const std::vector<std::string> types = {"Relu", "Tanh", "Scale", "Sigmoid"};
  for (int c = 0; c < 16; ++c) {
    std::string prev = c % 2 ? "xb" : "xa";
    for (int d = 0; d < 8; ++d) {
      const std::string out = "c" + std::to_string(c) + "_" + std::to_string(d);
      auto* op = AddOp(&net, types[(c + d) % types.size()], {prev}, {out});
      op->mutable_device_option()->set_device_type(1);
      if (d % 3 == 2) {
        auto* sum = AddOp(&net, "Add", {out, prev}, {out + "_s"});
        sum->mutable_device_option()->set_device_type(1);
        prev = out + "_s";
      } else {
        prev = out;
      }
    }
  }
  Workspace cpu_ws, gpu_ws;
  for (int r = 1; r <= 40; ++r) {
    for (Workspace* ws : {&cpu_ws, &gpu_ws}) {
      Feed(ws, "xa", {64 + 8 * r, 256}, r);
      Feed(ws, "xb", {64 + 8 * (r - 1), 256}, 1000 + r);
    }
    if (r == 1) {
      cpu_ws.CreateNet(OnCpu(net));
      gpu_ws.CreateNet(net);
    }
    cpu_ws.RunNet("alloc_stress");
    gpu_ws.RunNet("alloc_stress");
    for (const auto& [name, want] : Snapshot(cpu_ws)) {
      INFO("run " << r << " blob " << name);
      CHECK(Close(want, gpu_ws.GetBlob(name)->GetTensor().To(Device::CPU())));
    }
  }
}
