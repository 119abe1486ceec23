// Issue 13 item 3: every argument form that Caffe2's writers produce (translator, ONNX-Caffe2, brew,
// core.CreateOperator) for Conv, MaxPool and AveragePool runs and gives the same result as the
// canonical form: plural and _h/_w spellings, explicit defaults (order, dilation, group, legacy_pad
// NOTSET, zero pads), cuDNN-only arguments that Caffe2's CPU ops ignored (ws_nbytes_limit,
// exhaustive_search, shared_buffer), is_test, engine names we do not have (fallback to the default
// engine), legacy_pad VALID / SAME / CAFFE_LEGACY_POOLING against the explicit pads they stand for.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

using Args = std::vector<caffe2::Argument>;

struct Form {
  std::string label;
  Args args;
  std::string engine;
};

// Runs `type` on the fed blobs with `args` (and engine) and returns output Y.
Tensor RunForm(Workspace& ws, const std::string& type, const std::vector<std::string>& in, const Form& f) {
  auto def = MakeOp(type, in, {"Y"}, f.args);
  if (!f.engine.empty()) def.set_engine(f.engine);
  RunOp(ws, def);
  return Fetch(ws, "Y");
}

void CheckSame(const Tensor& want, const Tensor& got, const std::string& label) {
  INFO("form: " << label);
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) CHECK(got.data<float>()[i] == Approx(want.data<float>()[i]).margin(1e-5));
}

Args Join(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Forms equal to kernel 3, stride 2, pad 1 (`kernel` omitted where the op reads it from the filter).
std::vector<Form> K3S2P1Forms(bool filter_kernel) {
  const Args canon{ArgI("kernel", 3), ArgI("stride", 2), ArgI("pad", 1)};
  std::vector<Form> forms{
      {"plural", {ArgInts("kernels", {3, 3}), ArgInts("strides", {2, 2}), ArgInts("pads", {1, 1, 1, 1})}, ""},
      {"_h/_w and pad_t/l/b/r",
       {ArgI("kernel_h", 3), ArgI("kernel_w", 3), ArgI("stride_h", 2), ArgI("stride_w", 2), ArgI("pad_t", 1),
        ArgI("pad_l", 1), ArgI("pad_b", 1), ArgI("pad_r", 1)},
       ""},
      {"explicit defaults", Join(canon, {ArgS("order", "NCHW"), ArgI("legacy_pad", 0), ArgI("dilation", 1)}), ""},
      {"plural dilations", Join(canon, {ArgInts("dilations", {1, 1})}), ""},
      {"is_test", Join(canon, {ArgI("is_test", 1)}), ""},
      {"cuDNN arguments", Join(canon, {ArgI("ws_nbytes_limit", 1 << 20), ArgI("exhaustive_search", 1)}), ""},
      // Other arguments of Caffe2's cuDNN ops (CudnnConvOpBase / CuDNNPoolOp), ignored here.
      {"more cuDNN arguments", Join(canon, {ArgI("deterministic", 1), ArgI("cudnn_state", 0),
                                            ArgI("enable_tensor_core", 1), ArgI("force_algo_fwd", -1),
                                            ArgI("force_algo_dgrad", -1), ArgI("force_algo_wgrad", -1)}), ""},
      {"engine CUDNN on CPU", canon, "CUDNN"},
      {"engine list NNPACK,EIGEN", canon, "NNPACK,EIGEN"},
      {"unknown engine", canon, "NOSUCHENGINE"},
  };
  if (filter_kernel) {
    forms.push_back({"kernel from the filter", {ArgI("stride", 2), ArgI("pad", 1)}, ""});
    forms.push_back({"group 1, shared_buffer", Join(canon, {ArgI("group", 1), ArgI("shared_buffer", 1)}), ""});
  }
  return forms;
}

}  // namespace

TEST_CASE("Conv: Caffe2 argument forms equal the canonical form", "[ops][conv][argforms]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 9, 8}, RandomVec(2 * 3 * 9 * 8, 1));
  Feed<float>(ws, "W", {4, 3, 3, 3}, RandomVec(4 * 27, 2));
  Feed<float>(ws, "b", {4}, RandomVec(4, 3));
  const std::vector<std::string> in{"X", "W", "b"};
  const Tensor want = RunForm(ws, "Conv", in, {"canonical", {ArgI("kernel", 3), ArgI("stride", 2), ArgI("pad", 1)}, ""});
  CHECK(want.shape() == std::vector<int64_t>{2, 4, 5, 4});
  for (const Form& f : K3S2P1Forms(true)) CheckSame(want, RunForm(ws, "Conv", in, f), f.label);

  // legacy_pad VALID = pad 0; SAME with stride 1 and kernel 3 = pad 1; explicit zero pads accepted with both.
  const Tensor valid = RunForm(ws, "Conv", in, {"pad 0", {ArgI("kernel", 3)}, ""});
  CheckSame(valid, RunForm(ws, "Conv", in, {"VALID", {ArgI("kernel", 3), ArgI("legacy_pad", 1)}, ""}), "VALID");
  CheckSame(valid, RunForm(ws, "Conv", in, {"VALID pad 0", {ArgI("kernel", 3), ArgI("legacy_pad", 1), ArgI("pad", 0)},
                                            ""}),
            "VALID with pad 0");
  const Tensor same = RunForm(ws, "Conv", in, {"pad 1", {ArgI("kernel", 3), ArgI("pad", 1)}, ""});
  CheckSame(same, RunForm(ws, "Conv", in, {"SAME", {ArgI("kernel", 3), ArgI("legacy_pad", 2)}, ""}), "SAME");
  CheckSame(same, RunForm(ws, "Conv", in, {"SAME pads 0", {ArgI("kernel", 3), ArgI("legacy_pad", 2),
                                                          ArgInts("pads", {0, 0, 0, 0})}, ""}),
            "SAME with pads 0");
  // A non-zero pad with VALID / SAME stays refused, as in Caffe2.
  CHECK_THROWS_WITH(RunForm(ws, "Conv", in, {"", {ArgI("kernel", 3), ArgI("legacy_pad", 1), ArgI("pad", 1)}, ""}),
                    Catch::Contains("no non-zero explicit pad"));
}

TEST_CASE("MaxPool and AveragePool: Caffe2 argument forms equal the canonical form", "[ops][pool][argforms]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 9, 8}, RandomVec(2 * 3 * 9 * 8, 4));
  for (const char* type : {"MaxPool", "AveragePool"}) {
    INFO(type);
    const Tensor want = RunForm(ws, type, {"X"}, {"canonical", {ArgI("kernel", 3), ArgI("stride", 2), ArgI("pad", 1)},
                                                  ""});
    CHECK(want.shape() == std::vector<int64_t>{2, 3, 5, 4});
    for (const Form& f : K3S2P1Forms(false)) CheckSame(want, RunForm(ws, type, {"X"}, f), f.label);

    // Global pooling: the translator's spelled-out defaults, the plural forms, and the kernel equal to the image.
    const Tensor global = RunForm(ws, type, {"X"}, {"global", {ArgI("global_pooling", 1)}, ""});
    CHECK(global.shape() == std::vector<int64_t>{2, 3, 1, 1});
    CheckSame(global, RunForm(ws, type, {"X"}, {"", {ArgI("global_pooling", 1), ArgI("kernel", 0), ArgI("stride", 1),
                                                     ArgI("pad", 0), ArgI("legacy_pad", 3)}, ""}),
              "translator global pooling");
    CheckSame(global, RunForm(ws, type, {"X"}, {"", {ArgI("global_pooling", 1), ArgInts("kernels", {0, 0}),
                                                     ArgInts("strides", {1, 1}), ArgInts("pads", {0, 0, 0, 0})}, ""}),
              "plural global pooling");
    CheckSame(global, RunForm(ws, type, {"X"}, {"", {ArgI("kernel_h", 9), ArgI("kernel_w", 8)}, ""}),
              "kernel = image");
    CheckSame(global, RunForm(ws, type, {"X"}, {"", {ArgI("global_pooling", 1), ArgI("is_test", 1),
                                                     ArgS("order", "NCHW")}, "CUDNN"}),
              "global pooling, is_test, order, engine CUDNN");
  }
}

TEST_CASE("MaxPool: legacy_pad CAFFE_LEGACY_POOLING equals the tail pads of Caffe's ceil mode",
          "[ops][pool][argforms]") {
  Workspace ws;
  Feed<float>(ws, "X", {1, 2, 6, 6}, RandomVec(72, 5));
  // 6 wide, kernel 3, stride 2: floor mode gives 2 outputs, ceil mode 3, i.e. 2 more pad at the tail.
  const Tensor legacy = RunForm(ws, "MaxPool", {"X"}, {"", {ArgI("kernel", 3), ArgI("stride", 2), ArgI("legacy_pad", 3)},
                                                        ""});
  CHECK(legacy.shape() == std::vector<int64_t>{1, 2, 3, 3});
  CheckSame(legacy, RunForm(ws, "MaxPool", {"X"}, {"", {ArgI("kernel", 3), ArgI("stride", 2),
                                                        ArgInts("pads", {0, 0, 2, 2})}, ""}),
            "explicit tail pads");
}

TEST_CASE("Conv and MaxPool gradients accept the plural and _h/_w forms", "[ops][conv][pool][argforms][grad]") {
  Workspace ws;
  Feed<float>(ws, "X", {1, 2, 7, 6}, RandomVec(84, 6));
  Feed<float>(ws, "W", {3, 2, 3, 3}, RandomVec(54, 7));
  Feed<float>(ws, "b", {3}, RandomVec(3, 8));
  CheckGradient(ws, MakeOp("Conv", {"X", "W", "b"}, {"Y"}, {ArgInts("kernels", {3, 3}), ArgInts("strides", {2, 1}),
                                                            ArgInts("pads", {1, 0, 1, 2})}),
                {0, 1, 2});
  // MaxPool: distinct values 0.096 apart, so the finite-difference step (0.01) never crosses a tie.
  std::vector<float> spread(84);
  for (int i = 0; i < 84; ++i) spread[i] = -4.f + 8.f * static_cast<float>((i * 37) % 84) / 83.f;
  Feed<float>(ws, "Xs", {1, 2, 7, 6}, spread);
  CheckGradient(ws, MakeOp("MaxPool", {"Xs"}, {"Y"}, {ArgI("kernel_h", 2), ArgI("kernel_w", 3), ArgI("stride_h", 2),
                                                     ArgI("stride_w", 1), ArgI("pad_t", 1), ArgI("pad_l", 0),
                                                     ArgI("pad_b", 0), ArgI("pad_r", 1)}),
                {0});
  CheckGradient(ws, MakeOp("AveragePool", {"X"}, {"Y"}, {ArgI("global_pooling", 1), ArgI("kernel", 0),
                                                         ArgI("stride", 1), ArgI("pad", 0), ArgI("legacy_pad", 3)}),
                {0});
}
