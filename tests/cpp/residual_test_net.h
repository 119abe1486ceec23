// A small residual CNN shared by the layout and precision tests: data [N,3,H,W] -> conv 3x3 + relu ->
// maxpool 3/s2/p1 -> conv 3x3 + relu -> conv 1x1 + skip -> relu -> global average -> Flatten -> FC 5.
#pragma once

#include <string>

#include "tests/cpp/op_test_util.h"
#include "test_util_io.h"

namespace hetnet_test {

// y = Conv(x) with a filter [m, c, k, k] and bias filled by `init` (pad k/2), then Relu in place.
inline caffe2::OperatorDef* AddConv(caffe2::NetDef* net, caffe2::NetDef* init, const std::string& x, const std::string& y,
                                    int64_t c, int64_t m, int k, int stride, bool relu) {
  using hetnet::optest::ArgI;
  using hetnet::optest::RandomVec;
  AddFill(init, y + "_w", {m, c, k, k}, RandomVec(m * c * k * k, static_cast<unsigned>(m * 7 + c), -0.3f, 0.3f));
  AddFill(init, y + "_b", {m}, RandomVec(m, static_cast<unsigned>(m + 1)));
  auto* op = AddOp(net, "Conv", {x, y + "_w", y + "_b"}, {y});
  op->add_arg()->CopyFrom(ArgI("kernel", k));
  op->add_arg()->CopyFrom(ArgI("stride", stride));
  op->add_arg()->CopyFrom(ArgI("pad", k / 2));
  if (relu) AddOp(net, "Relu", {y}, {y});
  return op;
}

// The net named "residual", `width` channels wide, reading "data" and writing "out".
inline void ResidualNet(caffe2::NetDef* init, caffe2::NetDef* net, int64_t width = 8) {
  using hetnet::optest::ArgI;
  using hetnet::optest::RandomVec;
  net->set_name("residual");
  AddConv(net, init, "data", "c1", 3, width, 3, 1, true);
  auto* pool = AddOp(net, "MaxPool", {"c1"}, {"p1"});
  for (const auto& a : {ArgI("kernel", 3), ArgI("stride", 2), ArgI("pad", 1)}) pool->add_arg()->CopyFrom(a);
  AddConv(net, init, "p1", "c2", width, width, 3, 1, true);
  AddConv(net, init, "c2", "c3", width, width, 1, 1, false);
  AddOp(net, "Add", {"c3", "p1"}, {"s"});
  AddOp(net, "Relu", {"s"}, {"s"});
  auto* gap = AddOp(net, "AveragePool", {"s"}, {"g"});
  gap->add_arg()->CopyFrom(ArgI("global_pooling", 1));
  AddOp(net, "Flatten", {"g"}, {"f"});
  AddFill(init, "fc_w", {5, width}, RandomVec(5 * width, 3));
  AddFill(init, "fc_b", {5}, RandomVec(5, 4));
  AddOp(net, "FC", {"f", "fc_w", "fc_b"}, {"out"});
  net->add_external_input("data");
  net->add_external_output("out");
}

}  // namespace hetnet_test
