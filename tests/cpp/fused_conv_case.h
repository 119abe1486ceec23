// A Conv with fused residual and Relu against the default kernels run apart, shared by the DNNL
// Conv tests (test_conv_residual.cc, test_conv_dnnl_winograd.cc).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace optest {

struct FusedConvCase {
  int64_t n, c, m, hw;
  int k, stride;
  bool channels_last, residual, relu;
  float filter_range;  // the filter's values in [-filter_range, filter_range]
};

// Feeds X, F, b and R (Y's shape) into ws, runs the EIGEN Conv (then Add R, then Relu, as asked)
// into "Want", and returns the fused Conv's inputs (channels-last copies Xl, Rl where asked) and
// arguments. Its output, channels-last where asked, is to be compared with Want.
inline std::pair<std::vector<std::string>, std::vector<caffe2::Argument>> PrepareFusedConv(Workspace& ws,
                                                                                          const FusedConvCase& s) {
  Feed<float>(ws, "X", {s.n, s.c, s.hw, s.hw}, RandomVec(s.n * s.c * s.hw * s.hw, 1));
  Feed<float>(ws, "F", {s.m, s.c, s.k, s.k}, RandomVec(s.m * s.c * s.k * s.k, 2, -s.filter_range, s.filter_range));
  Feed<float>(ws, "b", {s.m}, RandomVec(s.m, 3));
  const int64_t ohw = (s.hw + 2 * (s.k / 2) - s.k) / s.stride + 1;
  Feed<float>(ws, "R", {s.n, s.m, ohw, ohw}, RandomVec(s.n * s.m * ohw * ohw, 4));
  std::vector<caffe2::Argument> args{ArgI("kernel", s.k), ArgI("pad", s.k / 2), ArgI("stride", s.stride)};
  auto ref = MakeOp("Conv", {"X", "F", "b"}, {"Want"}, args);
  ref.set_engine("EIGEN");
  RunOp(ws, ref);
  if (s.residual) RunOp(ws, MakeOp("Add", {"Want", "R"}, {"Want"}));
  if (s.relu) RunOp(ws, MakeOp("Relu", {"Want"}, {"Want"}));
  std::vector<std::string> in{"X", "F", "b"};
  if (s.residual) in.push_back("R"), args.push_back(ArgI("fused_residual", 1));
  if (s.relu) args.push_back(ArgS("fused_activation", "Relu"));
  if (s.channels_last) {
    args.push_back(ArgS("activation_order", "NHWC"));
    RunOp(ws, MakeOp("NCHW2NHWC", {"X"}, {"Xl"}));
    RunOp(ws, MakeOp("NCHW2NHWC", {"R"}, {"Rl"}));
    in[0] = "Xl";
    if (s.residual) in[3] = "Rl";
  }
  return {in, args};
}

// The largest differences of a Winograd result from the reference and from the direct kernel's.
struct WinogradGaps {
  double to_ref = 0, between = 0;
};
inline WinogradGaps Gaps(const std::vector<float>& winograd, const std::vector<float>& direct,
                         const std::vector<float>& want) {
  WinogradGaps g;
  for (size_t i = 0; i < want.size(); ++i) {
    g.to_ref = std::max(g.to_ref, std::abs(double(winograd[i]) - want[i]));
    g.between = std::max(g.between, std::abs(double(winograd[i]) - direct[i]));
  }
  return g;
}

}  // namespace optest
}  // namespace hetnet
