// Reduced-precision inference (core/reduced_precision.h): the rewrite's op list (narrow runs, casts
// at their edges, CastConstant for weights, the engine that has the narrow kernel), outputs against
// the float32 net, weights changed after creation, a Predictor's in-place weight conversion (the
// halving), float16 where no kernel has it, a bad precision value; and the DNNL engine's bfloat16
// Conv on each of its paths against its float32 result on the same (rounded) values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/bfloat16.h"
#include "core/half.h"
#include "core/inference_fusion.h"
#include "core/net.h"
#include "core/operator.h"
#include "core/predictor.h"
#include "core/reduced_precision.h"
#include "core/workspace.h"
#include "tests/cpp/op_test_util.h"
#include "test_util_io.h"

using namespace hetnet;
using hetnet_test::AddFill;
using hetnet_test::AddOp;
using hetnet_test::FloatTensor;
using hetnet_test::Values;
using optest::ArgI;
using optest::ArgS;
using optest::RandomVec;

namespace {

// Why a bfloat16 test cannot run here ("" when it can): the CPU Conv's engine and its narrow kernel.
std::string Bf16Unavailable() {
  const caffe2::OperatorDef conv = optest::MakeOp("Conv", {"x", "w"}, {"y"});
  const std::string engine = ResolveEngine(conv, Device::CPU());
  const ReducedPrecisionKernel* k = FindReducedPrecisionKernel("Conv", DeviceType::CPU, engine);
  if (!k) return "no bfloat16 kernel for CPU Conv in this build (engine '" + engine + "')";
  if (k->accepts && !k->accepts(conv, DataType::BFloat16)) return "oneDNN has no bfloat16 kernels on this CPU";
  return "";
}

// True, with the reason shown, when bfloat16 cannot run here.
bool SkipWithoutBf16() {
  const std::string why = Bf16Unavailable();
  if (!why.empty()) WARN("skipped: " << why);
  return !why.empty();
}

// data [N,3,12,12] -> Conv 3x3 16 + Relu -> MaxPool 2/2 -> Conv 3x3 32 + Relu -> global AveragePool
// -> Flatten -> FC 10 -> out.
void SmallConvNet(caffe2::NetDef* init, caffe2::NetDef* net) {
  net->set_name("small_conv");
  auto conv = [&](const std::string& x, const std::string& y, int64_t c, int64_t m) {
    AddFill(init, y + "_w", {m, c, 3, 3}, RandomVec(m * c * 9, static_cast<unsigned>(m + c), -0.3f, 0.3f));
    AddFill(init, y + "_b", {m}, RandomVec(m, static_cast<unsigned>(m)));
    auto* op = AddOp(net, "Conv", {x, y + "_w", y + "_b"}, {y});
    op->add_arg()->CopyFrom(ArgI("kernel", 3));
    op->add_arg()->CopyFrom(ArgI("pad", 1));
    AddOp(net, "Relu", {y}, {y});
  };
  conv("data", "c1", 3, 16);
  auto* pool = AddOp(net, "MaxPool", {"c1"}, {"p1"});
  pool->add_arg()->CopyFrom(ArgI("kernel", 2));
  pool->add_arg()->CopyFrom(ArgI("stride", 2));
  conv("p1", "c2", 16, 32);
  auto* gap = AddOp(net, "AveragePool", {"c2"}, {"g"});
  gap->add_arg()->CopyFrom(ArgI("global_pooling", 1));
  AddOp(net, "Flatten", {"g"}, {"f"});
  AddFill(init, "fc_w", {10, 32}, RandomVec(320, 5));
  AddFill(init, "fc_b", {10}, RandomVec(10, 6));
  AddOp(net, "FC", {"f", "fc_w", "fc_b"}, {"out"});
  net->add_external_input("data");
  net->add_external_output("out");
}

void SetArg(caffe2::NetDef* net, const std::string& name, int v) {
  auto* a = net->add_arg();
  a->set_name(name);
  a->set_i(v);
}

// SmallConvNet for bfloat16, rewritten for inference as a Predictor's net is.
void SmallBf16Net(caffe2::NetDef* init, caffe2::NetDef* net) {
  SmallConvNet(init, net);
  SetNetPrecision(net, DataType::BFloat16);
  SetArg(net, "hetnet_optimize", 1);
}

int Count(const caffe2::NetDef& net, const std::string& type) {
  return static_cast<int>(std::count_if(net.op().begin(), net.op().end(),
                                        [&](const caffe2::OperatorDef& op) { return op.type() == type; }));
}

Tensor Data(int64_t n) { return FloatTensor({n, 3, 12, 12}, RandomVec(n * 3 * 144, 42)); }

// out's worst error against want, relative to want's largest magnitude (bfloat16 keeps 8 bits).
double RelativeError(const Tensor& got, const Tensor& want) {
  REQUIRE(got.dtype() == DataType::Float);
  REQUIRE(got.shape() == want.shape());
  const auto g = Values(got), w = Values(want);
  double scale = 0, worst = 0;
  for (size_t i = 0; i < w.size(); ++i) scale = std::max(scale, std::abs(double(w[i])));
  for (size_t i = 0; i < w.size(); ++i) worst = std::max(worst, std::abs(double(g[i]) - w[i]));
  return worst / std::max(scale, 1e-6);
}

// The float32 net's `out` for data, in a workspace of its own.
Tensor Float32Out(const caffe2::NetDef& init, caffe2::NetDef net, const Tensor& data) {
  Workspace ws;
  ws.RunNetOnce(init);
  SetNetPrecision(&net, DataType::Float);
  SetArg(&net, "hetnet_optimize", 0);
  *ws.CreateBlob("data")->GetMutable<Tensor>() = data;
  ws.RunNetOnce(net);
  return ws.GetBlobOrThrow("out").GetTensor();  // shares the storage, which outlives ws
}

}  // namespace

TEST_CASE("bfloat16 inference runs Conv and FC narrow, casts at the edges, outputs float32 close to float32",
          "[reduced_precision]") {
  if (SkipWithoutBf16()) return;
  caffe2::NetDef init, net;
  SmallBf16Net(&init, &net);
  const Tensor data = Data(2);
  const Tensor want = Float32Out(init, net, data);
  for (bool channels_last : {false, true}) {
    INFO("channels-last pass " << channels_last);
    DefaultInferenceFusionOptions().channels_last = channels_last;
    Workspace ws;
    ws.RunNetOnce(init);
    *ws.CreateBlob("data")->GetMutable<Tensor>() = data;
    NetBase* created = ws.CreateNet(net);
    DefaultInferenceFusionOptions().channels_last = true;
    for (int run = 0; run < 2; ++run) {
      ws.RunNet(net.name());
      CHECK(RelativeError(ws.GetBlobOrThrow("out").GetTensor(), want) < 2e-2);
    }
    const caffe2::NetDef& r = created->def();
    CHECK(Count(r, "CastConstant") == 6);  // two filters, two biases, the FC's weight and bias
    int narrow_ops = 0;
    for (const auto& op : r.op()) {
      if (op.type() != "Conv" && op.type() != "FC") continue;
      ++narrow_ops;
      for (const auto& in : op.input()) CHECK(in.find("_bf16") != std::string::npos);
      if (op.type() == "FC") CHECK(op.engine() == "DNNL");  // PACKED (the rewrite's) has no bfloat16 kernel
    }
    CHECK(narrow_ops == 3);
    // out is written back in float32 under its own name, by the last op.
    CHECK(r.op(r.op_size() - 1).type() == "Cast");
    CHECK(r.op(r.op_size() - 1).output(0) == "out");
    if (!channels_last) {
      // data in; c1 back for MaxPool, p1 in for c2; c2 back for AveragePool, f in for the FC; out back.
      CHECK(Count(r, "Cast") == 6);
    } else {
      // NHWC pools, the order switch and Flatten run bfloat16 too: one Cast in, one out.
      CHECK(Count(r, "Cast") == 2);
    }
  }
}

TEST_CASE("A weight changed after the net was created is converted again", "[reduced_precision]") {
  if (SkipWithoutBf16()) return;
  caffe2::NetDef init, net;
  SmallBf16Net(&init, &net);
  const Tensor data = Data(1);
  Workspace ws;
  ws.RunNetOnce(init);
  *ws.CreateBlob("data")->GetMutable<Tensor>() = data;
  ws.CreateNet(net);
  ws.RunNet(net.name());
  const Tensor& narrow = ws.GetBlobOrThrow("fc_w_bf16").GetTensor();
  REQUIRE(narrow.dtype() == DataType::BFloat16);
  const uint64_t generation = narrow.write_generation();
  ws.RunNet(net.name());
  CHECK(ws.GetBlobOrThrow("fc_w_bf16").GetTensor().write_generation() == generation);  // not converted again
  // A new FC weight (fed as a user would): the next run uses it.
  const std::vector<float> new_w = RandomVec(320, 77);
  *ws.GetMutableBlob("fc_w")->GetMutable<Tensor>() = FloatTensor({10, 32}, new_w);
  caffe2::NetDef init2 = init;
  REQUIRE(init2.op(4).output(0) == "fc_w");
  auto* values = init2.mutable_op(4)->mutable_arg(1);
  REQUIRE(values->name() == "values");
  values->clear_floats();
  for (float v : new_w) values->add_floats(v);
  ws.RunNet(net.name());
  CHECK(RelativeError(ws.GetBlobOrThrow("out").GetTensor(), Float32Out(init2, net, data)) < 2e-2);
}

TEST_CASE("A bfloat16 Predictor converts its weights in place: half the bytes, same answers",
          "[reduced_precision][predictor]") {
  if (SkipWithoutBf16()) return;
  caffe2::NetDef init, net;
  SmallConvNet(&init, &net);
  Predictor full(init, net);
  caffe2::NetDef narrow_net = net;
  SetNetPrecision(&narrow_net, DataType::BFloat16);
  Predictor narrow(init, narrow_net);
  CHECK(full.narrowed_weights().empty());
  CHECK(narrow.narrowed_weights().size() == 6);
  size_t full_bytes = 0, narrow_bytes = 0;
  for (const auto& name : narrow.narrowed_weights()) {
    const Tensor& w = narrow.weights().GetBlobOrThrow(name).GetTensor();
    CHECK(w.dtype() == DataType::BFloat16);
    narrow_bytes += w.nbytes();
    full_bytes += full.weights().GetBlobOrThrow(name).GetTensor().nbytes();
  }
  CHECK(narrow_bytes * 2 == full_bytes);
  const Tensor data = Data(3);
  for (int run = 0; run < 2; ++run) {
    const Tensor want = full.Run({{"data", data}}).at("out");
    CHECK(RelativeError(narrow.Run({{"data", data}}).at("out"), want) < 2e-2);
  }
}

TEST_CASE("float16 where no operator has a float16 kernel leaves the net in float32 and says why",
          "[reduced_precision]") {
  caffe2::NetDef init, net;
  SmallConvNet(&init, &net);
  SetNetPrecision(&net, DataType::Float16);
  SetArg(&net, "hetnet_optimize", 1);
  Workspace ws;
  ws.RunNetOnce(init);
  const InferenceRewrite r = RewriteForInference(net, &ws);
  CHECK(Count(r.net, "Cast") == 0);
  CHECK(Count(r.net, "CastConstant") == 0);
  bool said = false;
  for (const auto& line : r.notes) said |= line.find("no operator of the net has a float16 kernel") != std::string::npos;
  CHECK(said);
}

TEST_CASE("A precision the runtime does not know is an error naming the net", "[reduced_precision]") {
  caffe2::NetDef init, net;
  SmallConvNet(&init, &net);
  auto* a = net.add_arg();
  a->set_name("hetnet_precision");
  a->set_s("int3");
  SetArg(&net, "hetnet_optimize", 1);
  Workspace ws;
  ws.RunNetOnce(init);
  try {
    ws.CreateNet(net);
    FAIL("created");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    CHECK_THAT(std::string(e.what()), Catch::Contains("small_conv") && Catch::Contains("int3") &&
                                          Catch::Contains("bfloat16"));
  }
  CHECK(ws.GetBlob("fc_w") != nullptr);  // the workspace is still usable
  CHECK(ParsePrecision("BF16") == DataType::BFloat16);
  CHECK(ParsePrecision("half") == DataType::Float16);
  CHECK(ParsePrecision("") == DataType::Float);
}

TEST_CASE("DNNL bfloat16 Conv equals its float32 result on the same values on every path", "[reduced_precision][conv]") {
  if (SkipWithoutBf16()) return;
  struct Case {
    const char* what;
    int64_t n, c, h, m;
    bool nhwc, residual;
  };
  // One NHWC image of 28x28 splits into bands of rows, of 7x7 with many channels into channel parts,
  // several images into images; NCHW goes through oneDNN's reorders.
  for (const Case& k : {Case{"rows", 1, 32, 28, 64, true, true}, Case{"channels", 1, 128, 7, 128, true, false},
                        Case{"images", 4, 16, 14, 32, true, false}, Case{"nchw reorders", 2, 8, 10, 16, false, true}}) {
    INFO(k.what);
    const std::vector<int64_t> x_shape = k.nhwc ? std::vector<int64_t>{k.n, k.h, k.h, k.c}
                                                : std::vector<int64_t>{k.n, k.c, k.h, k.h};
    const std::vector<int64_t> y_shape = k.nhwc ? std::vector<int64_t>{k.n, k.h, k.h, k.m}
                                                : std::vector<int64_t>{k.n, k.m, k.h, k.h};
    // Values exactly representable in bfloat16, so both runs see the same inputs.
    auto rounded = [](std::vector<float> v) {
      for (auto& x : v) x = BFloat16ToFloat(FloatToBFloat16(x));
      return v;
    };
    auto numel = [](const std::vector<int64_t>& s) {
      int64_t n = 1;
      for (auto d : s) n *= d;
      return n;
    };
    const std::vector<float> x = rounded(RandomVec(numel(x_shape), 1)), w = rounded(RandomVec(k.m * k.c * 9, 2, -.2f, .2f)),
                             b = rounded(RandomVec(k.m, 3)), r = rounded(RandomVec(numel(y_shape), 4));
    std::vector<float> outputs[2];
    for (int narrow = 0; narrow < 2; ++narrow) {
      Workspace ws;
      auto feed = [&](const char* name, std::vector<int64_t> shape, const std::vector<float>& v) {
        Tensor f = FloatTensor(shape, v);
        if (narrow) {
          Tensor t(shape, DataType::BFloat16);
          for (int64_t i = 0; i < f.numel(); ++i) t.mutable_data<BFloat16>()[i] = FloatToBFloat16(v[i]);
          f = std::move(t);
        }
        *ws.CreateBlob(name)->GetMutable<Tensor>() = std::move(f);
      };
      feed("x", x_shape, x);
      feed("w", {k.m, k.c, 3, 3}, w);
      feed("b", {k.m}, b);
      std::vector<std::string> ins{"x", "w", "b"};
      if (k.residual) feed("r", y_shape, r), ins.push_back("r");
      caffe2::OperatorDef op = optest::MakeOp("Conv", ins, {"y"});
      op.add_arg()->CopyFrom(ArgI("kernel", 3));
      op.add_arg()->CopyFrom(ArgI("pad", 1));
      op.add_arg()->CopyFrom(ArgS("fused_activation", "Relu"));
      if (k.residual) op.add_arg()->CopyFrom(ArgI("fused_residual", 1));
      if (k.nhwc) op.add_arg()->CopyFrom(ArgS("activation_order", "NHWC"));
      op.set_engine("DNNL");
      ws.RunOperatorOnce(op);
      const Tensor& y = ws.GetBlobOrThrow("y").GetTensor();
      REQUIRE(y.dtype() == (narrow ? DataType::BFloat16 : DataType::Float));
      REQUIRE(y.shape() == y_shape);
      for (int64_t i = 0; i < y.numel(); ++i)
        outputs[narrow].push_back(narrow ? BFloat16ToFloat(y.data<BFloat16>()[i]) : y.data<float>()[i]);
    }
    // float32 accumulation: only the output's rounding to bfloat16 differs (8 bits: 2^-8 relative).
    const optest::WorstError e = optest::Worst(outputs[1], outputs[0]);
    CHECK(e.error < 1.0 / 128);
    CHECK(*std::max_element(outputs[0].begin(), outputs[0].end()) > 0.5f);  // not all zeros after the Relu
  }
}

TEST_CASE("A batch norm folded into a bfloat16 Conv is folded straight into bfloat16", "[reduced_precision][fusion]") {
  if (SkipWithoutBf16()) return;
  caffe2::NetDef init, net;
  net.set_name("conv_bn");
  AddFill(&init, "w", {8, 3, 3, 3}, RandomVec(8 * 27, 1, -0.3f, 0.3f));
  for (const char* s : {"scale", "shift", "mean"}) AddFill(&init, s, {8}, RandomVec(8, 2));
  std::vector<float> var = RandomVec(8, 3, 0.5f, 2.f);
  AddFill(&init, "var", {8}, var);
  auto* conv = AddOp(&net, "Conv", {"data", "w"}, {"c"});
  conv->add_arg()->CopyFrom(ArgI("kernel", 3));
  conv->add_arg()->CopyFrom(ArgI("pad", 1));
  auto* bn = AddOp(&net, "SpatialBN", {"c", "scale", "shift", "mean", "var"}, {"out"});
  bn->add_arg()->CopyFrom(ArgI("is_test", 1));
  net.add_external_input("data");
  net.add_external_output("out");
  const Tensor data = Data(2);
  const Tensor want = Float32Out(init, net, data);
  SetNetPrecision(&net, DataType::BFloat16);
  SetArg(&net, "hetnet_optimize", 1);
  Workspace ws;
  ws.RunNetOnce(init);
  *ws.CreateBlob("data")->GetMutable<Tensor>() = data;
  const caffe2::NetDef& r = ws.CreateNet(net)->def();
  ws.RunNet(net.name());
  CHECK(RelativeError(ws.GetBlobOrThrow("out").GetTensor(), want) < 2e-2);
  CHECK(Count(r, "CastConstant") == 0);  // the fold writes bfloat16 itself: no float32 folded copy
  REQUIRE(Count(r, "FoldBatchNormWeights") == 1);
  for (const auto& op : r.op())
    if (op.type() == "FoldBatchNormWeights")
      for (const auto& o : op.output()) CHECK(ws.GetBlobOrThrow(o).GetTensor().dtype() == DataType::BFloat16);
  SECTION("a Predictor converts the filter the fold reads: the weights halve") {
    Predictor narrow(init, net);
    CHECK(narrow.narrowed_weights() == std::vector<std::string>{"w"});  // the statistics stay float32
    CHECK(narrow.weights().GetBlobOrThrow("w").GetTensor().dtype() == DataType::BFloat16);
    for (int run = 0; run < 2; ++run) CHECK(RelativeError(narrow.Run({{"data", data}}).at("out"), want) < 2e-2);
    // The net it runs still folds the batch norm, from the bfloat16 filter, straight into bfloat16.
    Workspace converted;
    converted.RunNetOnce(init);
    caffe2::NetDef asked = net;
    CHECK(NarrowConstantsInPlace(asked, &converted) == std::vector<std::string>{"w"});
    const caffe2::NetDef rewritten = RewriteForInference(asked, &converted).net;
    CHECK(Count(rewritten, "SpatialBN") == 0);
    CHECK(Count(rewritten, "CastConstant") == 0);
    CHECK(Count(rewritten, "FoldBatchNormWeights") == 1);
  }
}

TEST_CASE("bfloat16 MaxPool and AveragePool (NHWC) equal their float32 results on the same values",
          "[reduced_precision][pool]") {
  const int64_t n = 2, h = 9, w = 7, c = 19;
  std::vector<float> x = RandomVec(n * h * w * c, 11, -4.f, 4.f);
  for (auto& v : x) v = BFloat16ToFloat(FloatToBFloat16(v));
  for (const char* type : {"MaxPool", "AveragePool"}) {
    INFO(type);
    std::vector<float> outputs[2];
    for (int narrow = 0; narrow < 2; ++narrow) {
      Workspace ws;
      Tensor t = FloatTensor({n, h, w, c}, x);
      if (narrow) {
        Tensor b({n, h, w, c}, DataType::BFloat16);
        for (size_t i = 0; i < x.size(); ++i) b.mutable_data<BFloat16>()[i] = FloatToBFloat16(x[i]);
        t = std::move(b);
      }
      *ws.CreateBlob("x")->GetMutable<Tensor>() = std::move(t);
      caffe2::OperatorDef op = optest::MakeOp(type, {"x"}, {"y"});
      for (const auto& a : {ArgI("kernel", 3), ArgI("stride", 2), ArgI("pad", 1)}) op.add_arg()->CopyFrom(a);
      op.add_arg()->CopyFrom(ArgS("order", "NHWC"));
      ws.RunOperatorOnce(op);
      const Tensor& y = ws.GetBlobOrThrow("y").GetTensor();
      REQUIRE(y.dtype() == (narrow ? DataType::BFloat16 : DataType::Float));
      REQUIRE(y.shape() == std::vector<int64_t>{n, 5, 4, c});
      for (int64_t i = 0; i < y.numel(); ++i)
        outputs[narrow].push_back(narrow ? BFloat16ToFloat(y.data<BFloat16>()[i]) : y.data<float>()[i]);
    }
    const double e = optest::Worst(outputs[1], outputs[0]).error;
    if (std::string(type) == "MaxPool") CHECK(e == 0);  // a maximum of bfloat16 values is one of them
    else CHECK(e < 1.0 / 128);
  }
  SECTION("NCHW bfloat16 is refused, naming the input") {
    Workspace ws;
    *ws.CreateBlob("x")->GetMutable<Tensor>() = Tensor({1, 2, 4, 4}, DataType::BFloat16);
    caffe2::OperatorDef op = optest::MakeOp("MaxPool", {"x"}, {"y"});
    op.add_arg()->CopyFrom(ArgI("kernel", 2));
    CHECK_THROWS_WITH(ws.RunOperatorOnce(op), Catch::Contains("'x'") && Catch::Contains("NHWC"));
  }
}

TEST_CASE("GPU: float16 FC (with its fused Relu) on the GPU, CastConstant there, close to float32",
          "[gpu][reduced_precision]") {
  if (optest::SkipWithoutGpu()) return;
  caffe2::NetDef init, net;
  net.set_name("gpu_mlp");
  AddFill(&init, "w1", {64, 32}, RandomVec(64 * 32, 1, -0.2f, 0.2f));
  AddFill(&init, "b1", {64}, RandomVec(64, 2));
  AddFill(&init, "w2", {10, 64}, RandomVec(640, 3, -0.2f, 0.2f));
  AddFill(&init, "b2", {10}, RandomVec(10, 4));
  AddOp(&net, "FC", {"data", "w1", "b1"}, {"h"});
  AddOp(&net, "Relu", {"h"}, {"h"});
  AddOp(&net, "FC", {"h", "w2", "b2"}, {"out"});
  net.add_external_input("data");
  net.add_external_output("out");
  net.mutable_device_option()->set_device_type(1);  // every op on CUDA:0, weights copied there
  const Tensor data = FloatTensor({8, 32}, RandomVec(256, 5));
  Predictor full(init, net);
  caffe2::NetDef narrow_net = net;
  SetNetPrecision(&narrow_net, DataType::Float16);
  Predictor narrow(init, narrow_net);
  const Tensor want = full.Run({{"data", data}}).at("out");
  const Tensor got = narrow.Run({{"data", data}}).at("out");
  CHECK(RelativeError(got, want) < 1e-2);
  CHECK(narrow.narrowed_weights().size() == 4);  // the init net ran on the CPU: converted there
}

TEST_CASE("float16 FC applies a fused Relu (the kernel the GPU's float16 FC shares its rule with)",
          "[reduced_precision][fc]") {
  auto half_tensor = [](std::vector<int64_t> shape, const std::vector<float>& v) {
    Tensor t(std::move(shape), DataType::Float16);
    for (size_t i = 0; i < v.size(); ++i) t.mutable_data<Half>()[i] = FloatToHalf(v[i]);
    return t;
  };
  std::vector<float> outputs[2];
  for (int relu = 0; relu < 2; ++relu) {
    Workspace ws;
    *ws.CreateBlob("x")->GetMutable<Tensor>() = half_tensor({4, 16}, RandomVec(64, 1));
    *ws.CreateBlob("w")->GetMutable<Tensor>() = half_tensor({8, 16}, RandomVec(128, 2));
    *ws.CreateBlob("b")->GetMutable<Tensor>() = half_tensor({8}, RandomVec(8, 3));
    caffe2::OperatorDef op = optest::MakeOp("FC", {"x", "w", "b"}, {"y"});
    if (relu) op.add_arg()->CopyFrom(ArgS("fused_activation", "Relu"));
    op.set_engine("EIGEN");  // the default kernels (FCOp), where float16 runs
    ws.RunOperatorOnce(op);
    const Tensor& y = ws.GetBlobOrThrow("y").GetTensor();
    REQUIRE(y.dtype() == DataType::Float16);
    for (int64_t i = 0; i < y.numel(); ++i) outputs[relu].push_back(HalfToFloat(y.data<Half>()[i]));
  }
  int negatives = 0;
  for (size_t i = 0; i < outputs[0].size(); ++i) {
    negatives += outputs[0][i] < 0;
    CHECK(outputs[1][i] == std::max(outputs[0][i], 0.f));
  }
  CHECK(negatives > 0);  // the Relu had something to do
}
