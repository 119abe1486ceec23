// Conv with fused_residual (operators/conv_op.h: Y = act(conv(X) + bias + R)): every engine and
// layout path against Conv followed by Add (numpy broadcasting) and Relu run as separate ops: the
// DNNL sum post-op on its three activation paths (blocked with reorders, plain 1x1 with a Relu pass,
// channels-last), a residual of another shape (added after, broadcasting), the default kernels; and
// the refusals (a fourth input without the argument, the residual as the output); the DNNL Conv run
// in parts on the intra-op pool (by images, row bands, output channels); fused_residual_reuse (the output
// and R swap storage unless R is a view), also along a chain of residual blocks.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/intra_op_threads.h"
#include "core/operator.h"
#include "tests/cpp/fused_conv_case.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

// Whether this build has the DNNL engine (the DNNL-only cases say so and return without it).
bool DnnlBuilt() {
  if (ResolveEngine(MakeOp("Conv", {"X", "F"}, {"Y"}), Device::CPU()) == "DNNL") return true;
  WARN("skipped: no DNNL engine in this build");
  return false;
}

struct Form {
  const char* label;
  const char* engine;
  int k;
  std::vector<int64_t> r_shape;  // empty: Y's shape
  bool relu, channels_last;
};

void Check(const Form& f) {
  INFO(f.label);
  const int64_t N = 2, C = 6, M = 8, H = 7, W = 6;
  Workspace ws;
  Feed<float>(ws, "X", {N, C, H, W}, RandomVec(N * C * H * W, 1));
  Feed<float>(ws, "F", {M, C, f.k, f.k}, RandomVec(M * C * f.k * f.k, 2));
  Feed<float>(ws, "b", {M}, RandomVec(M, 3));
  const std::vector<int64_t> y_shape{N, M, H, W};
  const std::vector<int64_t> r_shape = f.r_shape.empty() ? y_shape : f.r_shape;
  int64_t rn = 1;
  for (auto d : r_shape) rn *= d;
  Feed<float>(ws, "R", r_shape, RandomVec(rn, 4));
  const std::vector<caffe2::Argument> conv_args{ArgI("kernel", f.k), ArgI("pad", f.k / 2)};
  // Reference: separate ops, NCHW, default kernels.
  auto plain = MakeOp("Conv", {"X", "F", "b"}, {"Yc"}, conv_args);
  plain.set_engine("EIGEN");
  RunOp(ws, plain);
  RunOp(ws, MakeOp("Add", {"Yc", "R"}, {"Ya"}));
  RunOp(ws, MakeOp(f.relu ? "Relu" : "Copy", {"Ya"}, {"Want"}));
  auto args = conv_args;
  args.push_back(ArgI("fused_residual", 1));
  if (f.relu) args.push_back(ArgS("fused_activation", "Relu"));
  std::string x = "X", r = "R", y = "Y";
  if (f.channels_last) {
    args.push_back(ArgS("activation_order", "NHWC"));
    RunOp(ws, MakeOp("NCHW2NHWC", {"X"}, {"Xl"}));
    RunOp(ws, MakeOp("NCHW2NHWC", {"R"}, {"Rl"}));
    x = "Xl", r = "Rl", y = "Yl";
  }
  auto fused = MakeOp("Conv", {x, "F", "b", r}, {y}, args);
  fused.set_engine(f.engine);
  auto op = CreateOperator(fused, &ws);
  for (int run = 0; run < 2; ++run) {  // the second run reuses the cached plan and the Add
    op->Run();
    if (f.channels_last) RunOp(ws, MakeOp("NHWC2NCHW", {"Yl"}, {"Y"}));
    const auto got = FetchVec<float>(ws, "Y"), want = FetchVec<float>(ws, "Want");
    REQUIRE(got.size() == want.size());
    REQUIRE(Worst(got, want).error <= 1e-4);
  }
}

}  // namespace

TEST_CASE("Conv fused_residual equals Conv, Add and Relu run apart", "[ops][conv][fusion]") {
  const bool dnnl = ResolveEngine(MakeOp("Conv", {"X", "F"}, {"Y"}), Device::CPU()) == "DNNL";
  std::vector<Form> forms = {
      {"default kernels, same shape, Relu", "EIGEN", 3, {}, true, false},
      {"default kernels, broadcast residual", "EIGEN", 1, {1, 8, 1, 1}, true, false},
  };
  if (dnnl) {
    forms.push_back({"DNNL 3x3 (blocked, residual reordered in)", "DNNL", 3, {}, true, false});
    forms.push_back({"DNNL 1x1 (plain NCHW, Relu pass)", "DNNL", 1, {}, true, false});
    forms.push_back({"DNNL 1x1 without Relu", "DNNL", 1, {}, false, false});
    forms.push_back({"DNNL broadcast residual (added after)", "DNNL", 3, {2, 8, 1, 1}, true, false});
    forms.push_back({"DNNL channels-last", "DNNL", 3, {}, true, true});
    forms.push_back({"DNNL channels-last 1x1", "DNNL", 1, {}, false, true});
    forms.push_back({"DNNL channels-last broadcast", "DNNL", 3, {1, 8, 1, 1}, true, true});
  } else {
    WARN("no DNNL engine in this build: only the default kernels' forms run");
  }
  for (const auto& f : forms) Check(f);
}

TEST_CASE("Conv refuses a fourth input without fused_residual and the residual as its output", "[ops][conv]") {
  Workspace ws;
  Feed<float>(ws, "X", {1, 2, 4, 4}, RandomVec(32, 1));
  Feed<float>(ws, "F", {3, 2, 1, 1}, RandomVec(6, 2));
  Feed<float>(ws, "b", {3}, RandomVec(3, 3));
  Feed<float>(ws, "R", {1, 3, 4, 4}, RandomVec(48, 4));
  for (const char* engine : {"DNNL", "EIGEN"}) {
    auto four = MakeOp("Conv", {"X", "F", "b", "R"}, {"Y"}, {ArgI("kernel", 1)});
    four.set_engine(engine);
    REQUIRE_THROWS_WITH(CreateOperator(four, &ws), Catch::Contains("fused_residual"));
    auto same = MakeOp("Conv", {"X", "F", "b", "R"}, {"R"}, {ArgI("kernel", 1), ArgI("fused_residual", 1)});
    same.set_engine(engine);
    REQUIRE_THROWS_WITH(CreateOperator(same, &ws), Catch::Contains("'R'") && Catch::Contains("output"));
  }
}

TEST_CASE("DNNL Conv run in parts on the intra-op pool equals the default kernels", "[ops][conv][dnnl][pool]") {
  if (!DnnlBuilt()) return;
  struct Shape {
    const char* label;
    int64_t n, c, m, hw;
    int k;
    bool channels_last, residual, relu;
    int stride = 1;
  };
  // Parts by image (batch 3 over 2 threads: 1 + 2) and, for fewer channels-last images than threads,
  // by bands of output rows of each image (each with its own top / bottom pads and input rows; batch
  // 3 over 8 threads) or, where the filter outweighs the output, by output channels (each with its
  // filter slice), with the sum post-op and Relu.
  for (const Shape& s : {Shape{"by image, channels-last 3x3", 3, 16, 32, 20, 3, true, true, true},
                         Shape{"bands, channels-last 3x3 pad 1", 1, 32, 80, 24, 3, true, true, true},
                         Shape{"bands, channels-last 7x7 pad 3", 1, 8, 32, 25, 7, true, false, true},
                         Shape{"bands, channels-last 7x7 stride 2", 1, 3, 32, 41, 7, true, false, true, 2},
                         Shape{"bands, channels-last 3x3 stride 2", 1, 16, 48, 30, 3, true, false, false, 2},
                         Shape{"bands, channels-last 1x1", 1, 64, 80, 28, 1, true, false, false},
                         Shape{"bands, one input channel 5x5 (LeNet's conv1, 1/4 M multiply-adds)", 1, 1, 20, 28, 5,
                               true, false, true},
                         Shape{"channel parts (the last of 40), 3x3 pad 1", 1, 96, 72, 5, 3, true, true, true},
                         Shape{"channel parts, 1x1", 1, 512, 96, 6, 1, true, true, false},
                         Shape{"channel parts, 3x3 stride 2", 1, 64, 128, 7, 3, true, false, true, 2},
                         Shape{"channel parts of 2 images, 3x3 pad 1", 2, 96, 72, 5, 3, true, true, true},
                         Shape{"one NCHW 1x1 image: one primitive", 1, 64, 96, 28, 1, false, true, true},
                         Shape{"by image, NCHW 1x1", 2, 64, 64, 20, 1, false, false, true}}) {
    INFO(s.label);
    Workspace ws;
    const auto [in, args] = PrepareFusedConv(
        ws, {s.n, s.c, s.m, s.hw, s.k, s.stride, s.channels_last, s.residual, s.relu, /*filter_range=*/0.2f});
    auto op = CreateOperator(MakeOp("Conv", in, {"Y"}, args), &ws);
    // Parts, one primitive, parts again (cached plans), more threads than images (bands of each).
    for (int threads : {2, 1, 2, 8}) {
      INFO(threads << " threads");
      ScopedIntraOpThreads team(threads);
      op->Run();
      if (s.channels_last) RunOp(ws, MakeOp("NHWC2NCHW", {"Y"}, {"Yb"}));
      const auto got = FetchVec<float>(ws, s.channels_last ? "Yb" : "Y"), want = FetchVec<float>(ws, "Want");
      REQUIRE(got.size() == want.size());
      REQUIRE(Worst(got, want).error <= 1e-4);
    }
  }
}

// oneDNN fixes a primitive's OpenMP team when it is built, so a plan built for the whole team (one
// image at batch 1) and a one-thread part of the same geometry (an image of a batch of 8) are two
// plans (reusing the first made each part fork a team of 2: LeNet at batch 8, 0.31 -> 0.48 ms after
// batch-1 runs; benchmarks/RESULTS.md). Both must compute the convolution, in either order.
TEST_CASE("DNNL Conv: a geometry planned for the whole team and for one-thread parts computes the same",
          "[ops][conv][dnnl][pool]") {
  if (!DnnlBuilt()) return;
  ScopedIntraOpThreads team(2);
  Workspace ws;
  Feed<float>(ws, "F", {50, 20, 5, 5}, RandomVec(50 * 20 * 25, 2, -0.2f, 0.2f));
  Feed<float>(ws, "b", {50}, RandomVec(50, 3));
  auto feed = [&](int64_t n) {
    Feed<float>(ws, "X", {n, 20, 12, 12}, RandomVec(n * 20 * 12 * 12, 4 + static_cast<unsigned>(n)));
    RunOp(ws, MakeOp("NCHW2NHWC", {"X"}, {"Xl"}));
  };
  feed(1);
  auto op = CreateOperator(MakeOp("Conv", {"Xl", "F", "b"}, {"Y"},
                                  {ArgI("kernel", 5), ArgS("activation_order", "NHWC")}), &ws);
  auto ref = MakeOp("Conv", {"X", "F", "b"}, {"Want"}, {ArgI("kernel", 5)});
  ref.set_engine("EIGEN");
  // Batch 1 (bands of rows, and the whole image's plan), 8 (one part per image), 1 again, 8 again.
  for (int64_t n : {1, 8, 1, 8}) {
    INFO("batch " << n);
    feed(n);
    op->Run();
    {
      // The reference on one thread: Eigen's OpenMP GEMM is uninstrumented for TSan (CI's [pool] run).
      ScopedIntraOpThreads one(1);
      RunOp(ws, ref);
    }
    RunOp(ws, MakeOp("NHWC2NCHW", {"Y"}, {"Yc"}));
    CHECK(Worst(FetchVec<float>(ws, "Yc"), FetchVec<float>(ws, "Want")).error <= 1e-4);
  }
}

TEST_CASE("DNNL Conv with fused_residual_reuse writes into R's storage, never into a blob R shares",
          "[ops][conv][dnnl][fusion]") {
  if (!DnnlBuilt()) return;
  Workspace ws;
  Feed<float>(ws, "X", {1, 4, 5, 5}, RandomVec(100, 1));
  Feed<float>(ws, "F", {6, 4, 3, 3}, RandomVec(216, 2));
  Feed<float>(ws, "b", {6}, RandomVec(6, 3));
  const std::vector<caffe2::Argument> conv_args{ArgI("kernel", 3), ArgI("pad", 1)};
  auto plain = MakeOp("Conv", {"X", "F", "b"}, {"Yc"}, conv_args);
  plain.set_engine("EIGEN");
  RunOp(ws, plain);
  auto args = conv_args;
  args.push_back(ArgI("fused_residual", 1));
  args.push_back(ArgI("fused_residual_reuse", 1));
  auto fused = MakeOp("Conv", {"X", "F", "b", "R"}, {"Y"}, args);
  fused.set_engine("DNNL");
  Feed<float>(ws, "R", {1, 6, 5, 5}, RandomVec(150, 9));
  auto op = CreateOperator(fused, &ws);
  for (int run = 0; run < 3; ++run) {  // R rewritten before every run, as its producer would
    INFO("run " << run);
    const auto r = RandomVec(150, 10 + run);
    Feed<float>(ws, "R", {1, 6, 5, 5}, r);
    const Storage* r_storage = ws.GetBlobOrThrow("R").GetTensor().storage().get();
    op->Run();
    const Tensor& Y = ws.GetBlobOrThrow("Y").GetTensor();
    CHECK(Y.storage().get() == r_storage);  // Y took R's buffer ...
    CHECK_FALSE(Y.SharesStorageWith(ws.GetBlobOrThrow("R").GetTensor()));  // ... and R holds another
    auto want = FetchVec<float>(ws, "Yc");
    for (size_t i = 0; i < want.size(); ++i) want[i] += r[i];
    REQUIRE(Worst(FetchVec<float>(ws, "Y"), want).error <= 1e-4);
  }
  SECTION("R of another shape next run (added after): Y gets storage of its own again") {
    const auto r = RandomVec(6, 11);
    Feed<float>(ws, "R", {1, 6, 1, 1}, r);  // smaller: R keeps the storage Y shares
    op->Run();
    CHECK_FALSE(ws.GetBlobOrThrow("Y").GetTensor().SharesStorageWith(ws.GetBlobOrThrow("R").GetTensor()));
    REQUIRE(FetchVec<float>(ws, "R") == r);
    auto want = FetchVec<float>(ws, "Yc");
    for (size_t i = 0; i < want.size(); ++i) want[i] += r[i / 25];
    REQUIRE(Worst(FetchVec<float>(ws, "Y"), want).error <= 1e-4);
  }
  SECTION("R a view of another blob: that blob keeps its value") {
    const auto r0 = RandomVec(150, 7);
    Feed<float>(ws, "R0", {1, 6, 5, 5}, r0);
    ws.GetMutableBlob("R")->GetMutable<Tensor>()->ShareData(ws.GetBlobOrThrow("R0").GetTensor());
    op->Run();
    CHECK_FALSE(ws.GetBlobOrThrow("Y").GetTensor().SharesStorageWith(ws.GetBlobOrThrow("R0").GetTensor()));
    REQUIRE(FetchVec<float>(ws, "R0") == r0);
    auto want = FetchVec<float>(ws, "Yc");
    for (size_t i = 0; i < want.size(); ++i) want[i] += r0[i];
    REQUIRE(Worst(FetchVec<float>(ws, "Y"), want).error <= 1e-4);
  }
}

TEST_CASE("DNNL Convs with fused_residual_reuse in a chain all run in place (no residual copied)",
          "[ops][conv][dnnl][fusion]") {
  if (!DnnlBuilt()) return;
  // Y1 = Conv(X) + R; Y2 = Conv(X) + Y1; Y3 = Conv(X) + Y2, as ResNet's blocks chain their residuals:
  // each Conv takes its residual's buffer, so the first R's buffer ends in Y3.
  Workspace ws;
  Feed<float>(ws, "X", {1, 4, 5, 5}, RandomVec(100, 1));
  Feed<float>(ws, "F", {4, 4, 3, 3}, RandomVec(144, 2));
  const std::vector<caffe2::Argument> args{ArgI("kernel", 3), ArgI("pad", 1), ArgI("fused_residual", 1),
                                           ArgI("fused_residual_reuse", 1)};
  Feed<float>(ws, "F_bias", {4}, std::vector<float>(4, 0.f));
  Feed<float>(ws, "R", {1, 4, 5, 5}, RandomVec(100, 3));
  std::vector<std::unique_ptr<OperatorBase>> ops;
  const std::vector<std::pair<std::string, std::string>> chain{{"R", "Y1"}, {"Y1", "Y2"}, {"Y2", "Y3"}};
  for (const auto& link : chain) {
    auto def = MakeOp("Conv", {"X", "F", "F_bias", link.first}, {link.second}, args);
    def.set_engine("DNNL");
    ws.CreateBlob(link.second);
    ops.push_back(CreateOperator(def, &ws));
  }
  auto plain = MakeOp("Conv", {"X", "F", "F_bias"}, {"C"}, {ArgI("kernel", 3), ArgI("pad", 1)});
  plain.set_engine("EIGEN");
  RunOp(ws, plain);
  const auto c = FetchVec<float>(ws, "C");
  for (int run = 0; run < 3; ++run) {
    INFO("run " << run);
    const auto r = RandomVec(100, 20 + run);
    Feed<float>(ws, "R", {1, 4, 5, 5}, r);
    const Storage* r_storage = ws.GetBlobOrThrow("R").GetTensor().storage().get();
    for (auto& op : ops) op->Run();
    CHECK(ws.GetBlobOrThrow("Y3").GetTensor().storage().get() == r_storage);
    auto want = r;
    for (size_t i = 0; i < want.size(); ++i) want[i] += 3 * c[i];
    REQUIRE(Worst(FetchVec<float>(ws, "Y3"), want).error <= 1e-4);
  }
}
