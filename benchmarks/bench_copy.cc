// Inserted-copy bandwidth: a CPU -> GPU -> CPU net over sizes from 4 KB to 256 MB, against raw
// pinned cudaMemcpy measured in the same run (through the runtime's own CopyBytesSync on pinned
// buffers). Prints a markdown table; without a GPU it says so and exits 0.
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/net.h"
#include "core/workspace.h"

using namespace hetnet;
using Clock = std::chrono::steady_clock;

static double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

int main() {
  if (NumCudaDevices() == 0) {
    std::printf("bench_copy: skipped, no CUDA device on this machine\n");
    return 0;
  }
  std::printf("| bytes | inserted copies H2D+D2H GB/s | raw pinned memcpy H2D+D2H GB/s | ratio |\n|---|---|---|---|\n");
  Allocator* pinned = FindDeviceBackend(DeviceType::CUDA)->PinnedHostAllocator();
  for (size_t bytes = 4096; bytes <= (256u << 20); bytes *= 4) {
    const int64_t n = static_cast<int64_t>(bytes / 4);
    const int iters = bytes < (1 << 20) ? 200 : bytes < (64 << 20) ? 20 : 5;
    Workspace ws;
    Tensor* x = ws.CreateBlob("x")->GetMutableTensor(Device::CPU());
    x->Resize({n});
    float* p = x->mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
    caffe2::NetDef net;
    net.set_name("copy_bench");
    net.add_external_input("x");
    auto* a = net.add_op();  // Copy on the GPU: the pass inserts CopyCPUToGPU before and CopyGPUToCPU after
    a->set_type("Copy");
    a->add_input("x");
    a->add_output("y");
    a->mutable_device_option()->set_device_type(1);
    auto* b = net.add_op();
    b->set_type("Copy");
    b->add_input("y");
    b->add_output("z");
    NetBase* nb = ws.CreateNet(net);
    nb->Run();
    auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) nb->Run();
    const double net_s = Seconds(t0, Clock::now()) / iters;
    auto host = pinned->Allocate(bytes);
    auto dev = GetDeviceBackend(Device::CUDA(0))->DeviceAllocator(0)->Allocate(bytes);
    CopyBytesSync(bytes, host.get(), Device::CPU(), dev.get(), Device::CUDA(0));
    t0 = Clock::now();
    for (int i = 0; i < iters; ++i) {
      CopyBytesSync(bytes, host.get(), Device::CPU(), dev.get(), Device::CUDA(0));
      CopyBytesSync(bytes, dev.get(), Device::CUDA(0), host.get(), Device::CPU());
    }
    const double raw_s = Seconds(t0, Clock::now()) / iters;
    const double net_gbs = 2.0 * bytes / net_s / 1e9, raw_gbs = 2.0 * bytes / raw_s / 1e9;
    std::printf("| %zu | %.2f | %.2f | %.0f%% |\n", bytes, net_gbs, raw_gbs, 100.0 * net_gbs / raw_gbs);
  }
  return 0;
}
