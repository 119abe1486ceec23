// Weights prepared once (issue 16 item 2): Tensor's write generation moves on every write path and
// never on a read; the DNNL engine re-prepares a filter after a write through each of those paths
// (and, for storage owned elsewhere, after a write behind Tensor's back); the instances of one net
// in the child workspaces of a parent share one prepared filter; fused_activation "Relu" in the DNNL
// Conv / FC / FCTransposed kernels. Expected outputs: float64 loops here and in harness_cases_dnnl.cc.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "core/net.h"
#include "core/predictor.h"
#include "tests/cpp/dnnl_test_reference.h"
#ifdef HETNET_WITH_DNNL
#include "device/dnnl_util.h"
#endif


using namespace hetnet;
using namespace hetnet::optest;
using harness::RefTensor;
using namespace hetnet::dnnl_test;

namespace {

constexpr bool kWithDnnl =
#ifdef HETNET_WITH_DNNL
    true;
#else
    false;
#endif

int64_t Preparations() {
#ifdef HETNET_WITH_DNNL
  return dnnl_util::WeightPreparations();
#else
  return 0;
#endif
}

RefTensor Relu(RefTensor t) {
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = std::max(t[i], 0.0);
  return t;
}

caffe2::OperatorDef ConvDef(const std::string& fused = "") {
  auto def = MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgI("kernel", 3), ArgI("pad", 1)});
  if (!fused.empty()) def.add_arg()->CopyFrom(ArgS("fused_activation", fused));
  def.set_engine("DNNL");
  return def;
}

}  // namespace

TEST_CASE("Tensor write generation moves on every write path and never on a read", "[tensor][dnnl]") {
  Tensor t({2, 3}, DataType::Float);
  const uint64_t id = t.storage_id();
  CHECK(id != 0);
  CHECK(!t.external_storage());
  uint64_t g = t.write_generation();
  auto moved = [&] {
    const bool m = t.write_generation() != g;
    g = t.write_generation();
    return m;
  };
  (void)t.data<float>();
  (void)t.raw_data();
  CHECK(!moved());
  t.mutable_data<float>();
  CHECK(moved());
  t.raw_mutable_data(DataType::Float);
  CHECK(moved());
  t.mutable_data_existing<float>();
  CHECK(moved());
  t.CopyFrom(Tensor({3, 2}, DataType::Float));  // same bytes: same storage, written
  CHECK(t.storage_id() == id);
  CHECK(moved());
  Tensor alias;
  alias.ShareData(t);
  alias.mutable_data<float>();  // a write through an alias is a write of the storage
  CHECK(moved());
  t.View({6}).mutable_data_existing<float>();
  CHECK(moved());
  t.Resize({100});  // growing reallocates at the next writable pointer: another storage
  t.mutable_data<float>();
  CHECK(t.storage_id() != id);
  CHECK(alias.storage_id() == id);
  auto holder = std::make_shared<std::vector<float>>(4, 1.0f);
  Tensor ext;
  ext.Resize({4});
  ext.SetExternalData(std::shared_ptr<void>(holder, holder->data()), 16, DataType::Float, Device::CPU());
  CHECK(ext.external_storage());
  CHECK(ext.storage_id() != t.storage_id());
  CHECK(Tensor().storage_id() == 0);
}

TEST_CASE("DNNL Conv re-prepares its filter after a write through each write path", "[dnnl][cnn]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 6, 6}, RandomVec(2 * 3 * 36, 1));
  Feed<float>(ws, "W", {8, 3, 3, 3}, RandomVec(8 * 27, 2));
  Feed<float>(ws, "b", {8}, RandomVec(8, 3));
  auto op = CreateOperator(ConvDef(), &ws);
  op->Run();
  CheckClose(Fetch(ws, "Y"), ExpectedConv(ws));
  const int64_t before = Preparations();
  op->Run();
  CHECK(Preparations() == before);
  Tensor* w = ws.CreateBlob("W")->GetMutableTensor(Device::CPU());
  const uint64_t id = w->storage_id();
  SECTION("mutable_data") { w->mutable_data<float>()[5] = 2.0f; }
  SECTION("raw_mutable_data") { static_cast<float*>(w->raw_mutable_data(DataType::Float))[6] = -2.0f; }
  SECTION("mutable_data_existing") { w->mutable_data_existing<float>()[7] = 3.0f; }
  SECTION("CopyFrom a tensor of the same size") {
    Tensor src({8, 3, 3, 3}, DataType::Float);
    const auto v = RandomVec(8 * 27, 7);
    std::copy(v.begin(), v.end(), src.mutable_data<float>());
    w->CopyFrom(src);
    CHECK(w->storage_id() == id);  // same storage, rewritten
  }
  SECTION("an alias (ShareData) written") {
    Tensor alias;
    alias.ShareData(*w);
    alias.mutable_data<float>()[0] = 4.0f;
  }
  SECTION("a view written") { w->View({8 * 27}).mutable_data_existing<float>()[1] = -4.0f; }
  op->Run();
  CheckClose(Fetch(ws, "Y"), ExpectedConv(ws));
  if (kWithDnnl) CHECK(Preparations() == before + 1);
  op->Run();
  if (kWithDnnl) CHECK(Preparations() == before + 1);
}

TEST_CASE("DNNL Conv checks the contents of a filter whose storage is owned elsewhere", "[dnnl][cnn]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 6, 6}, RandomVec(2 * 3 * 36, 1));
  Feed<float>(ws, "b", {8}, RandomVec(8, 3));
  auto buf = std::make_shared<std::vector<float>>(RandomVec(8 * 27, 2));
  Tensor* w = ws.CreateBlob("W")->GetMutableTensor(Device::CPU());
  w->Resize({8, 3, 3, 3});
  w->SetExternalData(std::shared_ptr<void>(buf, buf->data()), buf->size() * 4, DataType::Float, Device::CPU());
  auto op = CreateOperator(ConvDef(), &ws);
  op->Run();
  CheckClose(Fetch(ws, "Y"), ExpectedConv(ws));
  const int64_t before = Preparations();
  op->Run();
  CHECK(Preparations() == before);
  (*buf)[20] += 1.25f;  // behind Tensor's back: no generation moves
  op->Run();
  CheckClose(Fetch(ws, "Y"), ExpectedConv(ws));
  if (kWithDnnl) CHECK(Preparations() == before + 1);
}

namespace {
// init: W, b filled; predict: Y = Conv(X, W, b), k3 pad 1.
void ConvNets(caffe2::NetDef* init, caffe2::NetDef* predict, int64_t c, int64_t m) {
  init->set_name("init");
  *init->add_op() = MakeOp("GivenTensorFill", {}, {"W"}, {ArgInts("shape", {m, c, 3, 3}),
                                                          ArgFloats("values", RandomVec(m * c * 9, 2))});
  *init->add_op() = MakeOp("GivenTensorFill", {}, {"b"}, {ArgInts("shape", {m}), ArgFloats("values", RandomVec(m, 3))});
  predict->set_name("predict");
  *predict->add_op() = MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgI("kernel", 3), ArgI("pad", 1)});
  for (const char* n : {"X", "W", "b"}) predict->add_external_input(n);
  predict->add_external_output("Y");
}
}  // namespace

TEST_CASE("Net instances in child workspaces share one prepared filter", "[dnnl][cnn][predictor]") {
  caffe2::NetDef init, predict;
  ConvNets(&init, &predict, 3, 8);
  Workspace parent;
  parent.RunNetOnce(init);
  // What Predictor::NewInstance does for each instance: a child workspace, the net created in it.
  Workspace a(&parent), b(&parent);
  for (Workspace* ws : {&a, &b}) {
    Feed<float>(*ws, "X", {2, 3, 6, 6}, RandomVec(2 * 3 * 36, ws == &a ? 1 : 5));
    ws->CreateNet(predict);
  }
  const int64_t before = Preparations();
  for (int round = 0; round < 2; ++round)
    for (Workspace* ws : {&a, &b}) {
      ws->RunNet("predict");
      CheckClose(Fetch(*ws, "Y"), ExpectedConv(*ws));
    }
  if (kWithDnnl) CHECK(Preparations() == before + 1);
#ifdef HETNET_WITH_DNNL
  // Both hold the same copy: dropping one instance keeps it alive, dropping both frees it.
  const size_t live = dnnl_util::LivePreparedWeights();
  a.DeleteNet("predict");
  CHECK(dnnl_util::LivePreparedWeights() == live);
  b.DeleteNet("predict");
  CHECK(dnnl_util::LivePreparedWeights() == live - 1);
#endif
}

TEST_CASE("A Predictor run from several threads prepares its filter once", "[dnnl][cnn][predictor]") {
  caffe2::NetDef init, predict;
  ConvNets(&init, &predict, 16, 32);
  Predictor p(init, predict);
  const int64_t before = Preparations();
  std::atomic<int> ready{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Tensor x({4, 16, 28, 28}, DataType::Float);
      const auto v = RandomVec(x.numel(), 40 + t);
      std::copy(v.begin(), v.end(), x.mutable_data<float>());
      ++ready;
      while (ready.load() < 4) std::this_thread::yield();  // all at once: several instances
      // Until the pool has grown past one instance (a busy host can serialize the first rounds).
      for (int r = 0; r < 3 || (p.NumInstances() < 2 && r < 200); ++r) {
        auto out = p.Run(Predictor::TensorMap{{"X", x}});
        if (out.at("Y").shape() != std::vector<int64_t>{4, 32, 28, 28}) failed = true;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(!failed);
  CHECK(p.NumInstances() >= 2);
  if (kWithDnnl) CHECK(Preparations() == before + 1);
  // And the result is the convolution of the shared weights.
  Tensor x({1, 16, 28, 28}, DataType::Float);
  const auto v = RandomVec(x.numel(), 77);
  std::copy(v.begin(), v.end(), x.mutable_data<float>());
  auto out = p.Run(Predictor::TensorMap{{"X", x}});
  const RefTensor b = RefOf(p.weights().GetBlobOrThrow("b").GetTensor());
  CheckClose(out.at("Y"), harness::DnnlNaiveConv(RefOf(x), RefOf(p.weights().GetBlobOrThrow("W").GetTensor()), &b,
                                                 harness::DnnlConvGeo{3, 3, 1, 1, 1, 1, 1, 1}));
}

#ifdef HETNET_WITH_DNNL  // the default kernels' fused_activation is tested with them
TEST_CASE("DNNL Conv, FC and FCTransposed apply fused_activation Relu", "[dnnl][cnn]") {
  SECTION("Conv") {
    Workspace ws;
    Feed<float>(ws, "X", {2, 3, 6, 6}, RandomVec(2 * 3 * 36, 1));
    Feed<float>(ws, "W", {8, 3, 3, 3}, RandomVec(8 * 27, 2));
    Feed<float>(ws, "b", {8}, RandomVec(8, 3));
    RunOp(ws, ConvDef("Relu"));
    const RefTensor want = Relu(ExpectedConv(ws));
    CheckClose(Fetch(ws, "Y"), want);
    bool some_clamped = false;
    const RefTensor plain = ExpectedConv(ws);
    for (int64_t i = 0; i < plain.numel(); ++i) some_clamped |= plain[i] < -0.1;
    CHECK(some_clamped);  // the case tests something
  }
  SECTION("Conv 1x1 (the NCHW GEMM path, where the Relu is a pass over Y)") {
    Workspace ws;
    Feed<float>(ws, "X", {2, 3, 6, 6}, RandomVec(2 * 3 * 36, 1));
    Feed<float>(ws, "W", {8, 3, 1, 1}, RandomVec(8 * 3, 2));
    Feed<float>(ws, "b", {8}, RandomVec(8, 3));
    auto def = MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgI("kernel", 1), ArgS("fused_activation", "Relu")});
    def.set_engine("DNNL");
    RunOp(ws, def);
    const RefTensor b = RefOf(ws, "b");
    CheckClose(Fetch(ws, "Y"), Relu(harness::DnnlNaiveConv(RefOf(ws, "X"), RefOf(ws, "W"), &b, {1, 1})));
  }
  for (bool transposed : {false, true})
    for (int64_t m : {1, 6}) {  // one row: the fallback GEMV, which applies the Relu itself
      DYNAMIC_SECTION((transposed ? "FCTransposed" : "FC") << " with " << m << " rows") {
        const int64_t k = 5, n = 4;
        Workspace ws;
        Feed<float>(ws, "X", {m, k}, RandomVec(m * k, 1));
        Feed<float>(ws, "W", transposed ? std::vector<int64_t>{k, n} : std::vector<int64_t>{n, k},
                    RandomVec(n * k, 2));
        Feed<float>(ws, "b", {n}, RandomVec(n, 3));
        auto def = MakeOp(transposed ? "FCTransposed" : "FC", {"X", "W", "b"}, {"Y"},
                          {ArgS("fused_activation", "Relu")});
        def.set_engine("DNNL");
        RunOp(ws, def);
        const RefTensor X = RefOf(ws, "X"), W = RefOf(ws, "W"), b = RefOf(ws, "b");
        RefTensor want({m, n});
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; j < n; ++j) {
            double s = b[j];
            for (int64_t i = 0; i < k; ++i) s += X[r * k + i] * (transposed ? W[i * n + j] : W[j * k + i]);
            want[r * n + j] = std::max(s, 0.0);
          }
        CheckClose(Fetch(ws, "Y"), want);
      }
    }
  SECTION("an unknown activation is refused, naming the argument") {
    Workspace ws;
    Feed<float>(ws, "X", {1, 3, 6, 6}, RandomVec(3 * 36, 1));
    Feed<float>(ws, "W", {8, 3, 3, 3}, RandomVec(8 * 27, 2));
    Feed<float>(ws, "b", {8}, RandomVec(8, 3));
    std::string msg;
    try {
      CreateOperator(ConvDef("Sigmoid"), &ws);
    } catch (const std::exception& e) {
      msg = e.what();
    }
    CHECK(msg.find("fused_activation") != std::string::npos);
    CHECK(msg.find("Sigmoid") != std::string::npos);
  }
}
#endif
