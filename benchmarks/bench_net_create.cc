// Net creation time against net size (issue 18, item 4): nets of N operators where every op writes
// a new blob (a chain of Relu, the worst case for per-blob bookkeeping) and where every op works in
// place on one blob, for both executors. Prints a markdown table; creation must grow about linearly
// (100k ops in under 2 s on the 2-core machine).
//   bench_net_create [max_ops]   (default 100000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/net.h"
#include "core/workspace.h"

using namespace hetnet;
using Clock = std::chrono::steady_clock;

namespace {
caffe2::NetDef Chain(int n, bool new_blobs, const std::string& type) {
  caffe2::NetDef net;
  net.set_name("chain");
  net.set_type(type);
  net.add_external_input("b0");
  for (int i = 0; i < n; ++i) {
    auto* op = net.add_op();
    op->set_type("Relu");
    op->add_input(new_blobs ? "b" + std::to_string(i) : "b0");
    op->add_output(new_blobs ? "b" + std::to_string(i + 1) : "b0");
  }
  return net;
}

double CreateSeconds(const caffe2::NetDef& net) {
  Workspace ws;
  const auto t0 = Clock::now();
  ws.CreateNet(net);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  const int max_ops = argc > 1 ? std::atoi(argv[1]) : 100000;
  std::printf("| ops | blobs | executor | create s | us per op |\n|---:|---|---|---:|---:|\n");
  for (int n = max_ops / 100; n <= max_ops; n *= 10) {
    for (const char* type : {"simple", "dag"}) {
      for (bool new_blobs : {true, false}) {
        const double s = CreateSeconds(Chain(n, new_blobs, type));
        std::printf("| %d | %s | %s | %.3f | %.2f |\n", n, new_blobs ? "one new per op" : "one, in place", type, s,
                    1e6 * s / n);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
