// Copy-op bandwidth: a net of CopyCPUToGPU + CopyGPUToCPU (the ops the placement pass inserts) over
// sizes from 4 KB to 256 MB, against raw pinned cudaMemcpy measured in the same run (the runtime's
// own CopyBytesSync on pinned buffers). Two sources: one re-fed before every run, as a user feeds
// inputs (after the first run its memory is page-locked: one DMA each way), and one never written
// again, which stays pageable (staged through pinned buffers). Only Run() is timed; every result
// is compared with the source. Prints a markdown table; without a GPU it says so and exits 0.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "benchmarks/bench_util.h"
#include "core/net.h"
#include "core/workspace.h"

using namespace hetnet;
using Clock = std::chrono::steady_clock;

namespace {
double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

caffe2::NetDef RoundTripNet(const std::string& x) {
  caffe2::NetDef net;
  net.set_name("copy_bench_" + x);
  net.add_external_input(x);
  for (const char* type : {"CopyCPUToGPU", "CopyGPUToCPU"}) {
    auto* op = net.add_op();
    op->set_type(type);
    op->add_input(std::strcmp(type, "CopyCPUToGPU") == 0 ? x : x + "_gpu");
    op->add_output(std::strcmp(type, "CopyCPUToGPU") == 0 ? x + "_gpu" : x + "_back");
    op->mutable_device_option()->set_device_type(1);
  }
  return net;
}

// Seconds per Run(), refeeding x from src before each run (untimed) when refeed is set.
double TimeRoundTrip(Workspace& ws, const std::string& x, const Tensor& src, bool refeed, int iters, bool* exact) {
  NetBase* net = ws.CreateNet(RoundTripNet(x));
  net->Run();  // warm-up: allocations, and the copy marks its source for page-locked memory
  double total = 0;
  for (int i = 0; i < iters; ++i) {
    if (refeed) ws.CreateBlob(x)->GetMutableTensor(Device::CPU())->CopyFrom(src);
    const auto t0 = Clock::now();
    net->Run();
    total += Seconds(t0, Clock::now());
  }
  const Tensor& back = ws.GetBlob(x + "_back")->GetTensor();
  *exact = back.nbytes() == src.nbytes() && std::memcmp(back.raw_data(), src.raw_data(), src.nbytes()) == 0;
  return total / iters;
}
}  // namespace

int main() {
  if (NumCudaDevices() == 0) {
    std::printf("bench_copy: skipped, no CUDA device on this machine\n");
    return 0;
  }
  std::printf("| bytes | fed source (pinned) H2D+D2H GB/s | never-rewritten source (staged) GB/s | raw pinned memcpy GB/s "
              "| fed / raw | results exact |\n|---|---|---|---|---|---|\n");
  Allocator* pinned = FindDeviceBackend(DeviceType::CUDA)->PinnedHostAllocator();
  for (size_t bytes = 4096; bytes <= (256u << 20); bytes *= 4) {
    const int64_t n = static_cast<int64_t>(bytes / 4);
    const int iters = bytes < (1 << 20) ? 200 : bytes < (64 << 20) ? 20 : 5;
    const Tensor src = bench::RandomTensor({n}, static_cast<unsigned>(bytes));
    Workspace ws;
    ws.CreateBlob("fed")->GetMutableTensor(Device::CPU())->CopyFrom(src);
    ws.CreateBlob("kept")->GetMutableTensor(Device::CPU())->CopyFrom(src);
    bool exact_fed = false, exact_kept = false;
    const double fed_s = TimeRoundTrip(ws, "fed", src, true, iters, &exact_fed);
    const double kept_s = TimeRoundTrip(ws, "kept", src, false, iters, &exact_kept);
    auto host = pinned->Allocate(bytes);
    auto dev = GetDeviceBackend(Device::CUDA(0))->DeviceAllocator(0)->Allocate(bytes);
    CopyBytesSync(bytes, host.get(), Device::CPU(), dev.get(), Device::CUDA(0));
    const auto t0 = Clock::now();  // the mean, as for the nets
    for (int i = 0; i < iters; ++i) {
      CopyBytesSync(bytes, host.get(), Device::CPU(), dev.get(), Device::CUDA(0));
      CopyBytesSync(bytes, dev.get(), Device::CUDA(0), host.get(), Device::CPU());
    }
    const double raw_s = Seconds(t0, Clock::now()) / iters;
    auto gbs = [&](double s) { return 2.0 * bytes / s / 1e9; };
    std::printf("| %zu | %.2f | %.2f | %.2f | %.0f%% | %s |\n", bytes, gbs(fed_s), gbs(kept_s), gbs(raw_s),
                100.0 * raw_s / fed_s, exact_fed && exact_kept ? "yes" : "NO");
  }
  return 0;
}
