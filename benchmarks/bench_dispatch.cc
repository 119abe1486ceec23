// Dispatch overhead: a NetDef of 1,000 trivial CPU ops (Scale, in place, on a one-element tensor),
// created once and run many times; prints ns per op as a markdown table. Also times the same
// operators called directly (op->Run() in a loop) to separate the executor from the operator path.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/net.h"
#include "core/workspace.h"

using namespace hetnet;
using Clock = std::chrono::steady_clock;

namespace {
caffe2::NetDef MakeNet(const std::string& type, int n_ops) {
  caffe2::NetDef net;
  net.set_name("dispatch_" + type);
  net.add_external_input("x");
  for (int i = 0; i < n_ops; ++i) {
    auto* op = net.add_op();
    op->set_type(type);
    op->add_input("x");
    op->add_output("x");
    if (type == "Scale") {
      auto* a = op->add_arg();
      a->set_name("scale");
      a->set_f(1.0f);
    }
  }
  return net;
}

template <typename F>
double BestNsPerOp(F run, int n_ops, int reps) {
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) run();
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    best = std::min(best, ns / (static_cast<double>(reps) * n_ops));
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  const int n_ops = 1000;
  const int reps = argc > 1 ? std::atoi(argv[1]) : 2000;
  std::printf("| op (in place, 1 element) | path | ns/op (best of 5 x %d runs of %d ops) |\n|---|---|---|\n", reps,
              n_ops);
  for (const std::string type : {"Scale", "Relu"}) {
    Workspace ws;
    Tensor* x = ws.CreateBlob("x")->GetMutableTensor(Device::CPU());
    x->Resize({1});
    x->mutable_data<float>()[0] = 1.f;
    NetBase* net = ws.CreateNet(MakeNet(type, n_ops));
    net->Run();  // warm up
    const double via_net = BestNsPerOp([&] { net->Run(); }, n_ops, reps);
    const auto& ops = net->operators();
    const double direct = BestNsPerOp([&] { for (const auto& op : ops) op->Run(); }, n_ops, reps);
    std::printf("| %s | NetBase::Run (simple net) | %.1f |\n", type.c_str(), via_net);
    std::printf("| %s | op->Run() loop, no net | %.1f |\n", type.c_str(), direct);
  }
  return 0;
}
