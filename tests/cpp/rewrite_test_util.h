// Helpers of the inference-rewrite tests (layout passes): a net run rewritten and as written, and
// queries on the rewritten net.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/net.h"
#include "core/workspace.h"
#include "tests/cpp/op_test_util.h"
#include "test_util_io.h"

namespace hetnet_test {

using namespace hetnet;

inline void SetOptimize(caffe2::NetDef* net, int v) {
  auto* a = net->add_arg();
  a->set_name("hetnet_optimize");
  a->set_i(v);
}

// Runs `net` rewritten and as written in two workspaces; every external output must agree.
inline caffe2::NetDef RunBoth(const caffe2::NetDef& init, caffe2::NetDef net, const std::vector<int64_t>& data_shape) {
  Workspace on, off;
  caffe2::NetDef plain = net;
  SetOptimize(&net, 1);
  SetOptimize(&plain, 0);
  for (Workspace* ws : {&on, &off}) {
    ws->RunNetOnce(init);
    int64_t n = 1;
    for (auto d : data_shape) n *= d;
    *ws->CreateBlob("data")->GetMutable<Tensor>() = FloatTensor(data_shape, optest::RandomVec(n, 99));
  }
  NetBase* created = on.CreateNet(net);
  off.CreateNet(plain);
  for (int run = 0; run < 2; ++run) {
    on.RunNet(net.name());
    off.RunNet(plain.name());
    for (const auto& name : net.external_output()) {
      INFO("output " << name << ", run " << run);
      const Tensor& got = on.GetBlobOrThrow(name).GetTensor();
      const Tensor& want = off.GetBlobOrThrow(name).GetTensor();
      REQUIRE(got.shape() == want.shape());
      const auto g = Values(got), w = Values(want);
      REQUIRE(optest::Worst(g, w).error <= 1e-4);
    }
  }
  return created->def();
}

inline int Count(const caffe2::NetDef& net, const std::string& type) {
  int n = 0;
  for (const auto& op : net.op()) n += op.type() == type;
  return n;
}
inline bool HasArg(const caffe2::OperatorDef& op, const std::string& name, const std::string& value) {
  for (const auto& a : op.arg())
    if (a.name() == name) return a.s() == value;
  return false;
}

}  // namespace hetnet_test
