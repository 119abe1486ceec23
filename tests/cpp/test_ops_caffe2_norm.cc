// Caffe2 operators of issue 13, normalization group (TopK, InstanceNorm, GroupNorm, EnsureCPUOutput,
// Print): errors on bad input, gradients through the registered makers, and behaviour the harness
// cases (harness_cases_caffe2_norm_ops.cc) do not cover.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "core/op_schema.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

TEST_CASE("TopK: k errors name the op and blob", "[ops][caffe2][topk]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3}, RandomVec(6, 1));
  RequireThrowsWith(ws, MakeOp("TopK", {"X"}, {"V", "I"}), {"TopK", "k must be in [1, 2^31]", "got -1"});
  RequireThrowsWith(ws, MakeOp("TopK", {"X"}, {"V", "I"}, {ArgI("k", 0)}), {"got 0"});
  Feed<float>(ws, "Kf", {1}, {2.f});
  RequireThrowsWith(ws, MakeOp("TopK", {"X", "Kf"}, {"V", "I"}), {"input 1 ('Kf')", "int32 or int64"});
  Feed<int32_t>(ws, "K2", {2}, {1, 2});
  RequireThrowsWith(ws, MakeOp("TopK", {"X", "K2"}, {"V", "I"}), {"input 1 ('K2')", "one int32 or int64"});
  RequireThrowsWith(ws, MakeOp("TopK", {"X"}, {"V", "I"}, {ArgI("k", 1), ArgI("axis", 2)}),
                    {"axis 2 is out of range", "'X'"});
  // Integer dtypes are taken on CPU (ONNX's TopK); float16 is not.
  Feed(ws, "Xh", HostTensor<Half>({2}, {FloatToHalf(1.f), FloatToHalf(2.f)}));
  RequireThrowsWith(ws, MakeOp("TopK", {"Xh"}, {"V", "I"}, {ArgI("k", 1)}), {"'Xh'", "float16", "float32"});
}

TEST_CASE("TopK: the input k wins over the arg and gives the same values", "[ops][caffe2][topk]") {
  Workspace ws;
  const auto x = RandomVec(12, 2);
  Feed<float>(ws, "X", {3, 4}, x);
  Feed<int32_t>(ws, "K", {1}, {2});
  RunOp(ws, MakeOp("TopK", {"X", "K"}, {"V", "I"}, {ArgI("k", 3)}));
  CHECK(Fetch(ws, "V").shape() == std::vector<int64_t>{3, 2});
  const auto v = FetchVec<float>(ws, "V");
  const auto idx = FetchVec<int64_t>(ws, "I");
  for (int r = 0; r < 3; ++r) {
    std::vector<float> row(x.begin() + 4 * r, x.begin() + 4 * r + 4);
    std::vector<float> sorted = row;
    std::sort(sorted.rbegin(), sorted.rend());
    CHECK(v[2 * r] == sorted[0]);
    CHECK(v[2 * r + 1] == sorted[1]);
    CHECK(row[idx[2 * r]] == sorted[0]);
    CHECK(row[idx[2 * r + 1]] == sorted[1]);
  }
}

TEST_CASE("TopK: gradient scatters dValues to the chosen positions", "[ops][caffe2][topk][grad]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 4}, {0.1f, 0.9f, -0.3f, 0.5f, 0.7f, -0.2f, 0.4f, 0.8f});
  const auto def = MakeOp("TopK", {"X"}, {"V", "I"}, {ArgI("k", 2)});
  RunOp(ws, def);
  CHECK(FetchVec<int64_t>(ws, "I") == std::vector<int64_t>{1, 3, 3, 0});
  CheckGradient(ws, def, {0});
  // Padding index -1 is skipped; a wrong Indices dtype is refused.
  Feed<float>(ws, "dV", {2, 3}, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  Feed<int64_t>(ws, "Ip", {2, 3}, {2, -1, -1, 0, 3, -1});
  RunOp(ws, MakeOp("TopKGradient", {"dV", "Ip", "X"}, {"dX"}));
  CHECK(FetchVec<float>(ws, "dX") == std::vector<float>{0.f, 0.f, 1.f, 0.f, 4.f, 0.f, 0.f, 5.f});
  Feed<int32_t>(ws, "I32", {2, 3}, {0, 1, 2, 0, 1, 2});
  RequireThrowsWith(ws, MakeOp("TopKGradient", {"dV", "I32", "X"}, {"dX"}), {"'I32'", "int64"});
}

TEST_CASE("InstanceNorm: bad inputs are errors naming the blob", "[ops][caffe2][instancenorm]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 2, 2}, RandomVec(24, 3));
  Feed<float>(ws, "s3", {3}, {1.f, 2.f, 3.f});
  Feed<float>(ws, "s2", {2}, {1.f, 2.f});
  Feed<float>(ws, "X1", {4}, {1.f, 2.f, 3.f, 4.f});
  RequireThrowsWith(ws, MakeOp("InstanceNorm", {"X", "s2", "s3"}, {"Y"}), {"InstanceNorm", "'s2'", "C = 3"});
  RequireThrowsWith(ws, MakeOp("InstanceNorm", {"X1", "s3", "s3"}, {"Y"}), {"'X1'", "at least 2 dims"});
  RequireThrowsWith(ws, MakeOp("InstanceNorm", {"X", "s3", "s3"}, {"Y"}, {ArgS("order", "NCWH")}),
                    {"order must be NCHW or NHWC", "NCWH"});
}

TEST_CASE("InstanceNorm: gradient with and without saved statistics, and in place", "[ops][caffe2][instancenorm][grad]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 2, 3}, RandomVec(36, 4));
  Feed<float>(ws, "s", {3}, RandomVec(3, 5, 0.5f, 1.5f));
  Feed<float>(ws, "b", {3}, RandomVec(3, 6));
  const auto one_out = MakeOp("InstanceNorm", {"X", "s", "b"}, {"Y"});
  CheckGradient(ws, one_out, {0, 1, 2});
  RunOp(ws, MakeOp("InstanceNorm", {"X", "s", "b"}, {"Y3", "mean", "inv"}));
  Feed<float>(ws, "dY", {2, 3, 2, 3}, RandomVec(36, 7));
  RunOp(ws, MakeOp("InstanceNormGradient", {"X", "s", "b", "dY", "mean", "inv"}, {"dX1", "ds1", "db1"}));
  RunOp(ws, MakeOp("InstanceNormGradient", {"X", "s", "b", "dY"}, {"dX2", "ds2", "db2"}));
  for (const char* pair : {"dX", "ds", "db"}) {
    const auto a = FetchVec<float>(ws, std::string(pair) + "1"), b = FetchVec<float>(ws, std::string(pair) + "2");
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(1e-5));
  }
  // Y = X in place gives the out-of-place result.
  const auto y = FetchVec<float>(ws, "Y3");
  RunOp(ws, MakeOp("InstanceNorm", {"X", "s", "b"}, {"X"}));
  const auto inplace = FetchVec<float>(ws, "X");
  for (size_t i = 0; i < y.size(); ++i) CHECK(inplace[i] == Approx(y[i]).margin(1e-6));
}

TEST_CASE("GroupNorm: group must divide C, gradient through the maker", "[ops][caffe2][groupnorm][grad]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 6, 2, 2}, RandomVec(48, 8));
  Feed<float>(ws, "g", {6}, RandomVec(6, 9, 0.5f, 1.5f));
  Feed<float>(ws, "b", {6}, RandomVec(6, 10));
  RequireThrowsWith(ws, MakeOp("GroupNorm", {"X", "g", "b"}, {"Y", "m", "r"}, {ArgI("group", 4)}),
                    {"GroupNorm", "group (4)", "6 channels", "'X'"});
  RequireThrowsWith(ws, MakeOp("GroupNorm", {"X", "g", "b"}, {"Y", "m", "r"}), {"group (32)"});
  RequireThrowsWith(ws, MakeOp("GroupNorm", {"X", "g", "b"}, {"Y", "m", "r"}, {ArgI("group", 0)}), {"group (0)"});
  Feed<float>(ws, "g4", {4}, RandomVec(4, 11));
  RequireThrowsWith(ws, MakeOp("GroupNorm", {"X", "g4", "b"}, {"Y", "m", "r"}, {ArgI("group", 3)}),
                    {"'g4'", "C = 6"});
  const auto def = MakeOp("GroupNorm", {"X", "g", "b"}, {"Y", "m", "r"}, {ArgI("group", 3)});
  CheckGradient(ws, def, {0, 1, 2});
  CheckShapeInference(ws, def);
  CHECK(Fetch(ws, "m").shape() == std::vector<int64_t>{2, 3});
}

TEST_CASE("EnsureCPUOutput: a deep copy on CPU, any dtype, not in place", "[ops][caffe2][ensurecpu]") {
  Workspace ws;
  Feed<int64_t>(ws, "X", {2, 2}, {1, -2, 3, 4});
  RunOp(ws, MakeOp("EnsureCPUOutput", {"X"}, {"Y"}));
  Feed<int64_t>(ws, "X", {2, 2}, {9, 9, 9, 9});
  const Tensor y = Fetch(ws, "Y");
  CHECK(y.dtype() == DataType::Int64);
  CHECK(y.shape() == std::vector<int64_t>{2, 2});
  CHECK(FetchVec<int64_t>(ws, "Y") == std::vector<int64_t>{1, -2, 3, 4});
  RequireThrowsWith(ws, MakeOp("EnsureCPUOutput", {"X"}, {"X"}), {"EnsureCPUOutput", "in place"});  // as Caffe2
  CheckShapeInference(ws, MakeOp("EnsureCPUOutput", {"X"}, {"Y"}));
  const OpSchema* schema = OpSchemaRegistry::Find("EnsureCPUOutput");
  REQUIRE(schema);
  CHECK(GradientRegistry::HasNoGradient("EnsureCPUOutput"));
}

TEST_CASE("EnsureCPUOutput on CUDA: the output is a host tensor", "[ops][caffe2][ensurecpu][gpu]") {
  if (NumCudaDevices() == 0) {
    WARN("skipped: no CUDA device");
    return;
  }
  Workspace ws;
  const auto x = RandomVec(6, 12);
  Feed<float>(ws, "X", {2, 3}, x, Device::CUDA(0));
  RunOp(ws, MakeOp("EnsureCPUOutput", {"X"}, {"Y"}, {}, Device::CUDA(0)));
  CHECK(ws.GetBlobOrThrow("Y").GetTensor().device().is_cpu());
  CHECK(FetchVec<float>(ws, "Y") == x);
}

namespace {
// Runs def `times` times and returns what it wrote to std::cout.
std::string CaptureStdout(Workspace& ws, const caffe2::OperatorDef& def, int times) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  try {
    auto op = CreateOperator(def, &ws);
    for (int i = 0; i < times; ++i) op->Run();
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return captured.str();
}
}  // namespace

TEST_CASE("Print: name, dtype, shape and values, limit and every_n", "[ops][caffe2][print]") {
  Workspace ws;
  Feed<int32_t>(ws, "X", {2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(CaptureStdout(ws, MakeOp("Print", {"X"}, {}), 1) == "X (int32 [2, 3]): 1, 2, 3, 4, 5, 6\n");
  CHECK(CaptureStdout(ws, MakeOp("Print", {"X"}, {}, {ArgI("limit", 2)}), 1) ==
        "X (int32 [2, 3]): 1, 2, ... (4 more)\n");
  // every_n 2 over 5 runs prints on runs 1, 3 and 5.
  const std::string three = CaptureStdout(ws, MakeOp("Print", {"X"}, {}, {ArgI("every_n", 2)}), 5);
  CHECK(std::count(three.begin(), three.end(), '\n') == 3);
  Feed<float>(ws, "F", {2}, {0.5f, -1.25f});
  CHECK(CaptureStdout(ws, MakeOp("Print", {"F"}, {}), 1) == "F (float32 [2]): 0.5, -1.25\n");
  RequireThrowsWith(ws, MakeOp("Print", {"X"}, {}, {ArgI("every_n", 0)}), {"every_n must be >= 1"});
  CHECK(GradientRegistry::HasNoGradient("Print"));
}

TEST_CASE("Print: to_file appends to <blob>.log in the current directory", "[ops][caffe2][print]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hetnet_print_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path old = fs::current_path();
  fs::current_path(dir);
  Workspace ws;
  Feed<int64_t>(ws, "scope/X", {2}, {7, 8});
  std::string out;
  try {
    out = CaptureStdout(ws, MakeOp("Print", {"scope/X"}, {}, {ArgI("to_file", 1)}), 2);
  } catch (...) {
    fs::current_path(old);
    throw;
  }
  fs::current_path(old);
  CHECK(out.empty());
  std::ifstream f(dir / "scope_X.log");
  std::stringstream text;
  text << f.rdbuf();
  CHECK(text.str() == "scope/X (int64 [2]): 7, 8\nscope/X (int64 [2]): 7, 8\n");
  fs::remove_all(dir);
}
