// The operator tests on CUDA: each op runs on CPU and on CUDA:0 from the same inputs and the outputs
// are compared; gradients are checked on the GPU against finite differences. Without a GPU every case
// WARNs "skipped: no CUDA device" and returns.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
Tensor F(const std::vector<int64_t>& shape, unsigned seed, float lo = -1.f, float hi = 1.f) {
  return HostTensor<float>(shape, RandomVec(Numel(shape), seed, lo, hi));
}
}  // namespace

TEST_CASE("GPU: FC, activations, softmax and loss match CPU", "[gpu][ops]") {
  if (SkipWithoutGpu()) return;
  CompareCpuGpu(MakeOp("FC", {"X", "W", "b"}, {"Y"}), {{"X", F({33, 65}, 1)}, {"W", F({17, 65}, 2)}, {"b", F({17}, 3)}});
  CompareCpuGpu(MakeOp("FC", {"X", "W", "b"}, {"Y"}, {ArgI("axis", 2), ArgI("axis_w", 2)}),
                {{"X", F({2, 3, 4, 5}, 1)}, {"W", F({3, 2, 4, 5}, 2)}, {"b", F({6}, 3)}});
  CompareCpuGpu(MakeOp("FC", {"X", "W", "b"}, {"Y"}), {{"X", F({0, 4}, 1)}, {"W", F({3, 4}, 2)}, {"b", F({3}, 3)}});
  for (const char* t : {"Sigmoid", "Tanh", "Relu"}) CompareCpuGpu(MakeOp(t, {"X"}, {"Y"}), {{"X", F({7, 13}, 4, -5, 5)}});
  CompareCpuGpu(MakeOp("Softmax", {"X"}, {"Y"}), {{"X", F({5, 1000}, 5, -5, 5)}});
  CompareCpuGpu(MakeOp("Softmax", {"X"}, {"Y"}, {ArgI("axis", 2)}), {{"X", F({2, 3, 7}, 6, -5, 5)}});
  Tensor label = HostTensor<int32_t>({5}, {0, 6, 3, 3, 1});
  CompareCpuGpu(MakeOp("SoftmaxWithLoss", {"X", "L"}, {"P", "loss"}, {ArgF("scale", 0.5f)}),
                {{"X", F({5, 7}, 7, -3, 3)}, {"L", label}});
  CompareCpuGpu(MakeOp("SoftmaxWithLoss", {"X", "L", "W"}, {"P", "loss"}),
                {{"X", F({5, 7}, 7, -3, 3)}, {"L", label}, {"W", F({5}, 8, 0, 2)}});
  CompareCpuGpu(MakeOp("SoftmaxWithLoss", {"X", "Q"}, {"P", "loss"}, {ArgI("label_prob", 1)}),
                {{"X", F({5, 7}, 7, -3, 3)}, {"Q", F({5, 7}, 9, 0, 0.3f)}});
}

TEST_CASE("GPU: elementwise, Sum, Scale, Reshape, Flatten match CPU", "[gpu][ops]") {
  if (SkipWithoutGpu()) return;
  for (const char* t : {"Add", "Sub", "Mul", "Div"}) {
    CompareCpuGpu(MakeOp(t, {"A", "B"}, {"C"}), {{"A", F({4, 5}, 1, .5f, 2)}, {"B", F({4, 5}, 2, .5f, 2)}});
    CompareCpuGpu(MakeOp(t, {"A", "B"}, {"C"}, {ArgI("broadcast", 1), ArgI("axis", 1)}),
                  {{"A", F({2, 3, 5}, 1, .5f, 2)}, {"B", F({3}, 2, .5f, 2)}});
    CompareCpuGpu(MakeOp(t, {"A", "B"}, {"C"}, {ArgI("broadcast", 1)}), {{"A", F({2, 3, 5}, 1, .5f, 2)}, {"B", F({5}, 2, .5f, 2)}});
  }
  CompareCpuGpu(MakeOp("Sum", {"a", "b", "c"}, {"s"}), {{"a", F({9}, 1)}, {"b", F({9}, 2)}, {"c", F({9}, 3)}});
  CompareCpuGpu(MakeOp("Scale", {"a"}, {"s"}, {ArgF("scale", 3.f)}), {{"a", F({9}, 1)}});
  CompareCpuGpu(MakeOp("Flatten", {"a"}, {"f"}), {{"a", F({2, 3, 4}, 1)}});
  CompareCpuGpu(MakeOp("Reshape", {"a"}, {"r", "old"}, {ArgInts("shape", {0, -1})}), {{"a", F({2, 3, 4}, 1)}});
  // Reshape's shape input stays on CPU for a GPU op.
  Workspace ws;
  Feed(ws, "a", F({2, 3, 4}, 1), Device::CUDA(0));
  Feed<int64_t>(ws, "shape", {2}, {4, 6});
  RunOp(ws, MakeOp("Reshape", {"a", "shape"}, {"r", "old"}, {}, Device::CUDA(0)));
  CHECK(ws.GetBlobOrThrow("r").GetTensor().device() == Device::CUDA(0));
  CHECK(ws.GetBlobOrThrow("old").GetTensor().device() == Device::CPU());
  CHECK(Fetch(ws, "r").shape() == std::vector<int64_t>{4, 6});
}

// Conv on CUDA times cuDNN against the default engine on the first run of each float32 shape and
// runs the faster (choose_engine=1, the default): both answers, and cuDNN forced, match the CPU.
TEST_CASE("GPU: Conv with the measured engine choice matches CPU, repeated and forced to cuDNN", "[gpu][ops][conv]") {
  if (SkipWithoutGpu()) return;
  const std::vector<std::pair<std::vector<int64_t>, int>> shapes{{{1, 64, 14, 14}, 1}, {{8, 16, 12, 12}, 3}};
  for (const auto& [xs, k] : shapes) {
    const std::vector<std::pair<std::string, Tensor>> in{{"X", F(xs, 11)}, {"W", F({32, xs[1], k, k}, 12)}, {"b", F({32}, 13)}};
    const auto pad = ArgI("pad", k / 2);
    for (int choose : {1, 1, 0})  // the second 1 finds the cached choice
      CompareCpuGpu(MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgI("kernel", k), pad, ArgI("choose_engine", choose)}),
                    in);
  }
}

TEST_CASE("GPU: fills", "[gpu][ops]") {
  if (SkipWithoutGpu()) return;
  CompareCpuGpu(MakeOp("ConstantFill", {}, {"y"}, {ArgInts("shape", {3, 4}), ArgF("value", 2.5f)}), {});
  CompareCpuGpu(MakeOp("ConstantFill", {}, {"y"}, {ArgInts("shape", {3}), ArgI("value", 9), ArgI("dtype", 10)}), {});
  CompareCpuGpu(MakeOp("GivenTensorFill", {}, {"y"}, {ArgInts("shape", {2}), ArgFloats("values", {1, 2})}), {});
  CompareCpuGpu(MakeOp("GivenTensorIntFill", {}, {"y"}, {ArgInts("shape", {2}), ArgInts("values", {1, 2})}), {});
  Workspace ws;
  RunOp(ws, MakeOp("UniformFill", {}, {"u"}, {ArgInts("shape", {1000}), ArgF("min", 1.f), ArgF("max", 2.f)},
                   Device::CUDA(0)));
  for (float v : FetchVec<float>(ws, "u")) { CHECK(v >= 1.f); CHECK(v <= 2.f); }
  RunOp(ws, MakeOp("XavierFill", {}, {"x"}, {ArgInts("shape", {10, 12})}, Device::CUDA(0)));
  for (float v : FetchVec<float>(ws, "x")) CHECK(std::abs(v) <= 0.5f);
  RunOp(ws, MakeOp("GaussianFill", {}, {"g"}, {ArgInts("shape", {10})}, Device::CUDA(0)));
  CHECK(Fetch(ws, "g").numel() == 10);
}

TEST_CASE("GPU: gradients against finite differences", "[gpu][ops][grad]") {
  if (SkipWithoutGpu()) return;
  const Device g = Device::CUDA(0);
  {
    Workspace ws;
    Feed(ws, "X", F({3, 5}, 1), g);
    Feed(ws, "W", F({4, 5}, 2), g);
    Feed(ws, "b", F({4}, 3), g);
    CheckGradient(ws, MakeOp("FC", {"X", "W", "b"}, {"Y"}, {}, g), {0, 1, 2});
  }
  for (const char* t : {"Sigmoid", "Tanh", "Softmax"}) {
    Workspace ws;
    Feed(ws, "X", F({3, 4}, 4), g);
    CheckGradient(ws, MakeOp(t, {"X"}, {"Y"}, {}, g), {0}, 0, 1e-3f);
  }
  for (const char* t : {"Add", "Sub", "Mul", "Div"}) {
    Workspace ws;
    Feed(ws, "A", F({2, 3, 4}, 5, .5f, 2), g);
    Feed(ws, "B", F({3}, 6, .5f, 2), g);
    CheckGradient(ws, MakeOp(t, {"A", "B"}, {"C"}, {ArgI("broadcast", 1), ArgI("axis", 1)}, g), {0, 1}, 0, 1e-3f);
  }
  {
    Workspace ws;
    Feed(ws, "X", F({5, 7}, 7, -3, 3), g);
    Feed<int32_t>(ws, "L", {5}, {0, 6, 3, 3, 1}, g);
    Feed(ws, "W", F({5}, 8, 0.5f, 2), g);
    CheckGradient(ws, MakeOp("SoftmaxWithLoss", {"X", "L", "W"}, {"P", "loss"}, {}, g), {0}, 1, 1e-3f);
  }
}
