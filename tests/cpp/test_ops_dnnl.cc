// The DNNL engine of CPU Conv and FC (operators/*_dnnl.cc): filters prepared once and again when
// they change (also in place, behind the same pointer), primitives per input shape, which engine a
// def resolves to, and fallbacks that behave exactly as the default kernels (same outputs, same
// errors). Expected outputs come from the float64 loops of tests/cpp/harness_cases_dnnl.cc
// (tests/cpp/dnnl_test_reference.h).
#include <catch2/catch.hpp>

#include <cstdlib>

#include "tests/cpp/dnnl_test_reference.h"
#ifdef HETNET_WITH_DNNL
#include "device/dnnl_util.h"
#endif


using namespace hetnet;
using namespace hetnet::optest;
using harness::RefTensor;
using namespace hetnet::dnnl_test;

namespace {

int64_t Preparations() {
#ifdef HETNET_WITH_DNNL
  return dnnl_util::WeightPreparations();
#else
  return 0;
#endif
}

caffe2::OperatorDef ConvDef(const char* engine) {
  auto def = MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgI("kernel", 3), ArgI("pad", 1)});
  def.set_engine(engine);
  return def;
}

// what() of the exception running def on ws throws ("" when none).
std::string ErrorOf(Workspace& ws, const caffe2::OperatorDef& def) {
  try {
    RunOp(ws, def);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("DNNL Conv prepares a constant filter once and again whenever it changes", "[dnnl][cnn]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 6, 6}, RandomVec(2 * 3 * 36, 1));
  Feed<float>(ws, "W", {8, 3, 3, 3}, RandomVec(8 * 27, 2));
  Feed<float>(ws, "b", {8}, RandomVec(8, 3));
  auto op = CreateOperator(ConvDef("DNNL"), &ws);
  const bool dnnl = op->engine() == "DNNL";
#ifdef HETNET_WITH_DNNL
  REQUIRE(dnnl);
#endif
  op->Run();
  CheckClose(ws, "Y", ExpectedConv(ws));
  const int64_t after_first = Preparations();
  for (int r = 0; r < 3; ++r) op->Run();
  CHECK(Preparations() == after_first);  // the blocked filter is reused
  CheckClose(ws, "Y", ExpectedConv(ws));

  SECTION("one element rewritten in place, same pointer") {
    Tensor* w = ws.CreateBlob("W")->GetMutableTensor(Device::CPU());
    const void* before = w->raw_data();
    w->mutable_data<float>()[13] += 0.75f;
    REQUIRE(w->raw_data() == before);
    op->Run();
    CheckClose(ws, "Y", ExpectedConv(ws));
    if (dnnl) CHECK(Preparations() == after_first + 1);
    op->Run();
    if (dnnl) CHECK(Preparations() == after_first + 1);
  }
  SECTION("two elements swapped in place") {
    float* w = ws.CreateBlob("W")->GetMutableTensor(Device::CPU())->mutable_data<float>();
    std::swap(w[0], w[100]);
    op->Run();
    CheckClose(ws, "Y", ExpectedConv(ws));
  }
  SECTION("a new filter fed into the blob") {
    Feed<float>(ws, "W", {8, 3, 3, 3}, RandomVec(8 * 27, 4));
    op->Run();
    CheckClose(ws, "Y", ExpectedConv(ws));
  }
  SECTION("the blob replaced by a tensor of another kernel size (kernel from the filter)") {
    auto def = MakeOp("Conv", {"X", "W", "b"}, {"Y"});
    def.set_engine("DNNL");
    auto from_filter = CreateOperator(def, &ws);
    from_filter->Run();
    const RefTensor b = RefOf(ws, "b");
    CheckClose(ws, "Y", harness::DnnlNaiveConv(RefOf(ws, "X"), RefOf(ws, "W"), &b, {3, 3}));
    Feed<float>(ws, "W", {8, 3, 1, 1}, RandomVec(8 * 3, 5));
    from_filter->Run();
    CheckClose(ws, "Y", harness::DnnlNaiveConv(RefOf(ws, "X"), RefOf(ws, "W"), &b, {1, 1}));
  }
}

TEST_CASE("DNNL Conv keeps one primitive per input shape", "[dnnl][cnn]") {
  Workspace ws;
  Feed<float>(ws, "W", {4, 2, 3, 3}, RandomVec(4 * 18, 2));
  Feed<float>(ws, "b", {4}, RandomVec(4, 3));
  Feed<float>(ws, "X", {1, 2, 7, 5}, RandomVec(70, 9));
  auto op = CreateOperator(ConvDef("DNNL"), &ws);
  int64_t after_first_pass = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t n : {1, 5}) {
      Feed<float>(ws, "X", {n, 2, 7, 5}, RandomVec(n * 70, static_cast<unsigned>(10 + n + pass)));
      op->Run();
      CheckClose(ws, "Y", ExpectedConv(ws));
    }
    if (pass == 0) after_first_pass = Preparations();
  }
  CHECK(Preparations() == after_first_pass);  // both shapes' primitives and filters were kept
  // More shapes than an op keeps primitives for (dnnl_util::kMaxPlansPerOp): it starts over, still right.
  for (int64_t n = 1; n <= 10; ++n) {
    Feed<float>(ws, "X", {n, 2, 7, 5}, RandomVec(n * 70, static_cast<unsigned>(30 + n)));
    op->Run();
    CheckClose(ws, "Y", ExpectedConv(ws));
  }
  Feed<float>(ws, "X", {1, 2, 7, 5}, RandomVec(70, 98));
  op->Run();
  // Back at a shape seen before: nothing prepared again (the filter did not change).
  const int64_t now = Preparations();
  Feed<float>(ws, "X", {1, 2, 7, 5}, RandomVec(70, 99));
  op->Run();
  CheckClose(ws, "Y", ExpectedConv(ws));
  CHECK(Preparations() == now);
}

TEST_CASE("Conv and FC resolve to DNNL by default on CPU, engine EIGEN to the portable kernels", "[dnnl]") {
  Workspace ws;
  const bool env_set = std::getenv("HETNET_CPU_ENGINE") != nullptr;
  auto engine_of = [&](const std::string& type, const char* engine) {
    auto def = MakeOp(type, {"X", "W", "b"}, {"Y"});
    def.set_engine(engine);
    return ResolveEngine(def, Device::CPU());
  };
#ifdef HETNET_WITH_DNNL
  if (!env_set) {
    CHECK(engine_of("Conv", "") == "DNNL");
    CHECK(engine_of("FC", "") == "DNNL");  // PACKED is chosen by the inference rewrite only
    CHECK(engine_of("FCTransposed", "") == "DNNL");
  }
  CHECK(engine_of("FC", "PACKED") == "PACKED");
  if (!env_set) CHECK(engine_of("Conv", "CUDNN") == "DNNL");  // brew writes CUDNN: the CPU default order follows
  CHECK(engine_of("Conv", "DNNL") == "DNNL");
#endif
  CHECK(engine_of("Conv", "EIGEN") == "");
  CHECK(engine_of("FC", "EIGEN") == "");
  CHECK(engine_of("ConvGradient", "") == "");  // no DNNL gradient: the default kernel
  CHECK(engine_of("Relu", "") == "");
  (void)env_set;
}

TEST_CASE("DNNL Conv and FC fall back to the default kernels with the same results and errors", "[dnnl]") {
  SECTION("float16 Conv input: the default kernel's error") {
    std::string msgs[2];
    int i = 0;
    for (const char* e : {"DNNL", "EIGEN"}) {
      Workspace ws;
      Tensor x({1, 2, 4, 4}, DataType::Float16);
      for (int64_t k = 0; k < x.numel(); ++k) x.mutable_data<Half>()[k] = FloatToHalf(0.5f);
      Feed(ws, "X", x);
      Feed<float>(ws, "W", {3, 2, 3, 3}, RandomVec(54, 2));
      Feed<float>(ws, "b", {3}, RandomVec(3, 3));
      msgs[i++] = ErrorOf(ws, ConvDef(e));
    }
    CHECK(msgs[0].find("float32") != std::string::npos);
    CHECK(msgs[0] == msgs[1]);
  }
  SECTION("a filter of the wrong shape: the same message") {
    std::string msgs[2];
    int i = 0;
    for (const char* e : {"DNNL", "EIGEN"}) {
      Workspace ws;
      Feed<float>(ws, "X", {1, 2, 4, 4}, RandomVec(32, 1));
      Feed<float>(ws, "W", {3, 4, 3, 3}, RandomVec(108, 2));
      Feed<float>(ws, "b", {3}, RandomVec(3, 3));
      msgs[i++] = ErrorOf(ws, ConvDef(e));
    }
    CHECK(msgs[0].find("'W'") != std::string::npos);
    CHECK(msgs[0] == msgs[1]);
  }
  SECTION("3-D kernels are refused as by the default kernel") {
    std::string msgs[2];
    int i = 0;
    for (const char* e : {"DNNL", "EIGEN"}) {
      Workspace ws;
      Feed<float>(ws, "X", {1, 2, 4, 4, 4}, RandomVec(128, 1));
      Feed<float>(ws, "W", {3, 2, 3, 3, 3}, RandomVec(162, 2));
      Feed<float>(ws, "b", {3}, RandomVec(3, 3));
      auto def = MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgInts("kernels", {3, 3, 3})});
      def.set_engine(e);
      msgs[i++] = ErrorOf(ws, def);
    }
    CHECK(!msgs[0].empty());
    CHECK(msgs[0] == msgs[1]);
  }
  SECTION("an empty batch runs the default kernel") {
    Workspace ws;
    Feed<float>(ws, "X", {0, 2, 4, 4}, {});
    Feed<float>(ws, "W", {3, 2, 3, 3}, RandomVec(54, 2));
    Feed<float>(ws, "b", {3}, RandomVec(3, 3));
    RunOp(ws, ConvDef("DNNL"));
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{0, 3, 4, 4});
  }
  SECTION("FC: in-place weight changes and single rows") {
    for (int64_t m : {1, 6}) {
      Workspace ws;
      Feed<float>(ws, "X", {m, 5}, RandomVec(m * 5, 1));
      Feed<float>(ws, "W", {4, 5}, RandomVec(20, 2));
      Feed<float>(ws, "b", {4}, RandomVec(4, 3));
      auto def = MakeOp("FC", {"X", "W", "b"}, {"Y"});
      def.set_engine("DNNL");
      auto op = CreateOperator(def, &ws);
      for (int round = 0; round < 2; ++round) {
        if (round == 1) ws.CreateBlob("W")->GetMutableTensor(Device::CPU())->mutable_data<float>()[7] -= 1.5f;
        op->Run();
        const RefTensor X = RefOf(ws, "X"), W = RefOf(ws, "W"), b = RefOf(ws, "b");
        RefTensor want({m, 4});
        for (int64_t r = 0; r < m; ++r)
          for (int64_t n = 0; n < 4; ++n) {
            double s = b[n];
            for (int64_t k = 0; k < 5; ++k) s += X[r * 5 + k] * W[n * 5 + k];
            want[r * 4 + n] = s;
          }
        CheckClose(ws, "Y", want);
      }
    }
  }
}
