// CNN operator tests beyond the harness: error messages, gradient-maker wiring (no_bias, is_test),
// legacy-padding shape inference, Dropout seeding; [gpu] tests for the cuDNN engines and the shared
// cuDNN workspace (skipped without a device).
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"
#if defined(HETNET_WITH_CUDNN)
#include "device/cuda/cudnn_workspace.h"
#endif

using namespace hetnet;
using namespace hetnet::optest;

TEST_CASE("Conv: bad inputs give errors naming blobs, shapes and args", "[ops][cnn]") {
  Workspace ws;
  Feed<float>(ws, "X", {1, 3, 5, 5}, RandomVec(75, 1));
  Feed<float>(ws, "W", {4, 2, 3, 3}, RandomVec(72, 2));
  Feed<float>(ws, "b", {4}, RandomVec(4, 3));
  RequireThrowsWith(ws, MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgI("kernel", 3)}), {"'W'", "[4, 2, 3, 3]", "[4, 3, 3, 3]"});
  RequireThrowsWith(ws, MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgI("kernel", 3), ArgI("group", 2)}),
                    {"not divisible by group 2"});
  Feed<float>(ws, "W3", {4, 3, 3, 3}, RandomVec(108, 2));
  Feed<float>(ws, "W7", {4, 3, 7, 7}, RandomVec(588, 2));
  RequireThrowsWith(ws, MakeOp("Conv", {"X", "W7", "b"}, {"Y"}), {"smaller than the (dilated) kernel"});
  RequireThrowsWith(ws, MakeOp("Conv", {"X", "W3", "b"}, {"Y"}, {ArgI("kernel", 3), ArgI("stride", 0)}),
                    {"stride must be positive"});
  RequireThrowsWith(ws, MakeOp("Conv", {"X", "W3", "b"}, {"Y"}, {ArgI("kernel", 3), ArgI("pad", 1), ArgI("legacy_pad", 2)}),
                    {"legacy_pad VALID or SAME"});
  Feed<float>(ws, "X2", {3, 5, 5}, RandomVec(75, 1));
  RequireThrowsWith(ws, MakeOp("Conv", {"X2", "W3", "b"}, {"Y"}, {ArgI("kernel", 3)}), {"'X2'", "4-D NCHW"});
  // The workspace stays usable.
  RunOp(ws, MakeOp("Conv", {"X", "W3", "b"}, {"Y"}, {ArgI("kernel", 3), ArgI("pad", 1)}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{1, 4, 5, 5});
}

TEST_CASE("Conv gradient maker: no_bias with two inputs, no_gradient_to_input", "[ops][cnn]") {
  auto make = [](const caffe2::OperatorDef& def) {
    auto m = (*GradientRegistry::Find("Conv"))(def, {"Y_grad"});
    return m->GetGradientDefs();
  };
  auto g2 = make(MakeOp("Conv", {"X", "W"}, {"Y"}, {ArgI("kernel", 3)}));
  REQUIRE(g2.size() == 1);
  CHECK(g2[0].type() == "ConvGradient");
  CHECK(g2[0].output_size() == 2);  // dW, dX
  bool no_bias = false;
  for (const auto& a : g2[0].arg()) no_bias |= a.name() == "no_bias" && a.i() == 1;
  CHECK(no_bias);
  auto g3 = make(MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgI("kernel", 3), ArgI("no_gradient_to_input", 1)}));
  CHECK(g3[0].output_size() == 2);  // dW, db
  // ConvGradient with no bias runs and gives dW, dX.
  Workspace ws;
  Feed<float>(ws, "X", {1, 2, 4, 4}, RandomVec(32, 1));
  Feed<float>(ws, "W", {3, 2, 3, 3}, RandomVec(54, 2));
  RunOp(ws, MakeOp("Conv", {"X", "W"}, {"Y"}, {ArgI("kernel", 3)}));
  Feed<float>(ws, "Y_grad", {1, 3, 2, 2}, RandomVec(12, 3));
  RunOp(ws, g2[0]);
  CHECK(Fetch(ws, "W_grad").shape() == std::vector<int64_t>{3, 2, 3, 3});
  CHECK(Fetch(ws, "X_grad").shape() == std::vector<int64_t>{1, 2, 4, 4});
}

TEST_CASE("Pooling shape inference: legacy padding and global pooling", "[ops][cnn]") {
  const OpSchema* s = OpSchemaRegistry::Find("MaxPool");
  REQUIRE(s);
  auto out = [&](std::vector<caffe2::Argument> args, std::vector<int64_t> x) {
    return s->InferShapes(MakeOp("MaxPool", {"X"}, {"Y"}, args), {TensorInfo::Of(x, DataType::Float)})[0].dims;
  };
  // Caffe ceil mode: 112 -> ceil((112 - 3) / 2 + 1) = 56 (floor mode 55).
  CHECK(out({ArgI("kernel", 3), ArgI("stride", 2), ArgI("legacy_pad", 3)}, {1, 64, 112, 112}) ==
        std::vector<int64_t>{1, 64, 56, 56});
  CHECK(out({ArgI("kernel", 3), ArgI("stride", 2)}, {1, 64, 112, 112}) == std::vector<int64_t>{1, 64, 55, 55});
  CHECK(out({ArgI("global_pooling", 1)}, {2, 8, 13, 13}) == std::vector<int64_t>{2, 8, 1, 1});
  CHECK(out({ArgI("kernel", 2), ArgI("stride", 2), ArgI("legacy_pad", 1)}, {1, 1, 7, 7}) == std::vector<int64_t>{1, 1, 3, 3});
  CHECK(out({ArgI("kernel", 3), ArgI("stride", 2), ArgI("legacy_pad", 2)}, {1, 1, 7, 7}) == std::vector<int64_t>{1, 1, 4, 4});
}

TEST_CASE("SpatialBN: training updates running stats in place; is_test gradient", "[ops][cnn]") {
  Workspace ws;
  Feed<float>(ws, "X", {4, 2, 3, 3}, RandomVec(72, 1, -2, 2));
  Feed<float>(ws, "s", {2}, {1.f, 2.f});
  Feed<float>(ws, "b", {2}, {0.f, 1.f});
  Feed<float>(ws, "rm", {2}, {0.f, 0.f});
  Feed<float>(ws, "rv", {2}, {1.f, 1.f});
  RequireThrowsWith(ws, MakeOp("SpatialBN", {"X", "s", "b", "rm", "rv"}, {"Y", "m2", "rv", "sm", "si"}), {"in place"});
  RunOp(ws, MakeOp("SpatialBN", {"X", "s", "b", "rm", "rv"}, {"Y", "rm", "rv", "sm", "si"}, {ArgF("momentum", 0.5f)}));
  auto rm = FetchVec<float>(ws, "rm");
  auto sm = FetchVec<float>(ws, "sm");
  CHECK(rm[0] == Approx(0.5f * sm[0]));
  // Y has zero mean and unit variance per channel (then scale/bias).
  auto y = FetchVec<float>(ws, "Y");
  double mean0 = 0;
  for (int n = 0; n < 4; ++n)
    for (int k = 0; k < 9; ++k) mean0 += y[n * 18 + k];
  CHECK(mean0 / 36 == Approx(0.0).margin(1e-5));
  auto g = (*GradientRegistry::Find("SpatialBN"))(
      MakeOp("SpatialBN", {"X", "s", "b", "rm", "rv"}, {"Y"}, {ArgI("is_test", 1)}), {"Y_grad"})->GetGradientDefs();
  REQUIRE(g.size() == 1);
  CHECK(g[0].input(3) == "rm");
  CHECK(g[0].input(4) == "rv");
}

TEST_CASE("Dropout: seeded masks repeat; gradient uses the mask", "[ops][cnn]") {
  auto def = MakeOp("Dropout", {"X"}, {"Y", "mask"}, {ArgF("ratio", 0.5f)});
  def.mutable_device_option()->set_random_seed(42);
  Workspace a, b;
  for (Workspace* w : {&a, &b}) {
    Feed<float>(*w, "X", {100}, RandomVec(100, 1));
    RunOp(*w, def);
  }
  CHECK(FetchVec<bool>(a, "mask") == FetchVec<bool>(b, "mask"));
  Feed<float>(a, "Y_grad", {100}, std::vector<float>(100, 1.f));
  RunOp(a, MakeOp("DropoutGrad", {"Y_grad", "mask"}, {"X_grad"}, {ArgF("ratio", 0.5f)}));
  auto m = FetchVec<bool>(a, "mask");
  auto dx = FetchVec<float>(a, "X_grad");
  for (int i = 0; i < 100; ++i) CHECK(dx[i] == (m[i] ? 2.f : 0.f));
  Workspace c;
  Feed<float>(c, "X", {3}, {1.f, 2.f, 3.f});
  RequireThrowsWith(c, MakeOp("Dropout", {"X"}, {"Y", "mask"}, {ArgF("ratio", 1.f)}), {"ratio 1"});
}

TEST_CASE("cuDNN Conv: one shared workspace for many convolutions; matches CPU", "[gpu][cnn]") {
  if (SkipWithoutGpu()) return;
#if defined(HETNET_WITH_CUDNN)
  ResetCudnnWorkspaceStats();
  Workspace ws;
  const Device gpu = Device::CUDA(0);
  Feed<float>(ws, "X", {2, 16, 14, 14}, RandomVec(2 * 16 * 196, 1), gpu);
  std::vector<std::string> prev{"X"};
  for (int i = 0; i < 4; ++i) {
    const std::string w = "W" + std::to_string(i), y = "Y" + std::to_string(i);
    Feed<float>(ws, w, {16, 16, 3, 3}, RandomVec(16 * 16 * 9, 10 + i, -0.1f, 0.1f), gpu);
    RunOp(ws, MakeOp("Conv", {prev.back(), w}, {y}, {ArgI("kernel", 3), ArgI("pad", 1), ArgI("exhaustive_search", i % 2)}, gpu));
    prev.push_back(y);
  }
  const CudnnWorkspaceStats s = GetCudnnWorkspaceStats();
  CHECK(s.workspaces >= 1);
  CHECK(s.shared_bytes <= s.per_op_sum_bytes);
  CHECK(s.shared_bytes == s.largest_request);
  // The CUDNN engine (float32, FMA math) vs the CPU kernel.
  Tensor x = Tensor({1, 8, 6, 6}, DataType::Float);
  auto xv = RandomVec(288, 4);
  std::copy(xv.begin(), xv.end(), x.mutable_data<float>());
  CompareCpuGpu(MakeOp("Conv", {"X", "W"}, {"Y"}, {ArgI("kernel", 3), ArgI("pad", 1)}),
                {{"X", x}, {"W", HostTensor<float>({8, 8, 3, 3}, RandomVec(576, 5))}}, 1e-4);
#else
  WARN("skipped: built without cuDNN");
#endif
}

TEST_CASE("Pooling, LRN, SpatialBN, ConvTranspose: bad inputs are errors, not crashes", "[ops][cnn]") {
  Workspace ws;
  Feed<float>(ws, "X", {1, 2, 3, 3}, RandomVec(18, 1));
  Feed<float>(ws, "X3", {2, 3, 3}, RandomVec(18, 1));
  Feed<int32_t>(ws, "I", {1, 2, 3, 3}, std::vector<int32_t>(18, 1));
  RequireThrowsWith(ws, MakeOp("MaxPool", {"X"}, {"Y"}), {"needs a kernel"});
  RequireThrowsWith(ws, MakeOp("MaxPool", {"X"}, {"Y"}, {ArgI("kernel", 5)}), {"smaller than the (dilated) kernel"});
  RequireThrowsWith(ws, MakeOp("AveragePool", {"X"}, {"Y"}, {ArgI("kernel", 2), ArgI("pad", -1)}), {"pads must be >= 0"});
  RequireThrowsWith(ws, MakeOp("AveragePool", {"X"}, {"Y"}, {ArgI("kernel", 2), ArgI("dilation", 2)}), {"dilation"});
  RequireThrowsWith(ws, MakeOp("MaxPool", {"X3"}, {"Y"}, {ArgI("kernel", 2)}), {"'X3'", "4-D NCHW"});
  RequireThrowsWith(ws, MakeOp("MaxPool", {"I"}, {"Y"}, {ArgI("kernel", 2)}), {"'I'", "int32"});
  // order NHWC runs on CPU (test_channels_last_pass.cc); other orders are refused.
  RequireThrowsWith(ws, MakeOp("MaxPool", {"X"}, {"Y"}, {ArgI("kernel", 2), ArgS("order", "NWHC")}), {"order 'NWHC'"});
  RequireThrowsWith(ws, MakeOp("LRN", {"X"}, {"Y"}), {"'size' must be positive"});
  RequireThrowsWith(ws, MakeOp("LRN", {"X3"}, {"Y"}, {ArgI("size", 3)}), {"NCHW"});
  Feed<float>(ws, "s", {3}, {1.f, 1.f, 1.f});
  RequireThrowsWith(ws, MakeOp("SpatialBN", {"X", "s", "s", "s", "s"}, {"Y"}, {ArgI("is_test", 1)}), {"'s'", "[3]", "[2]"});
  Feed<float>(ws, "W", {2, 3, 3, 3}, RandomVec(54, 2));
  RequireThrowsWith(ws, MakeOp("ConvTranspose", {"X", "W"}, {"Y"}, {ArgI("kernel", 3), ArgI("stride", 2), ArgI("adj", 2)}),
                    {"adj 2"});
  RequireThrowsWith(ws, MakeOp("ConvTranspose", {"X", "W"}, {"Y"}, {ArgI("kernel", 3), ArgI("legacy_pad", 3)}),
                    {"CAFFE_LEGACY_POOLING"});
  RunOp(ws, MakeOp("ConvTranspose", {"X", "W"}, {"Y"}, {ArgI("kernel", 3), ArgI("stride", 2)}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{1, 3, 7, 7});
}
