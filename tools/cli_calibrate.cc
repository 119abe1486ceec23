// `hetnet calibrate`: measures this machine's devices by running hetnet's own operators through a
// Workspace (FC, Conv, Relu, and the copy operators; GPU work through the same operators placed on
// cuda:N, so no CUDA headers here) and writes a device profile (core/device_profile.h) as JSON.
// Usage errors print this command's help here, so the dispatcher needs no entry for it.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "core/device_profile.h"
#include "core/error.h"
#include "core/net.h"
#include "core/workspace.h"
#include "tools/cli_common.h"

namespace hetnet_cli {

int CalibrateCommand(int argc, char** argv);

namespace {

using hetnet::Device;
using hetnet::DeviceCaps;
using hetnet::DeviceProfile;
using hetnet::LinkCaps;

const char* const kCalibrateHelp =
    "usage: hetnet calibrate [--output FILE] [--quick]\n"
    "\n"
    "Measures this machine by running hetnet's operators on the CPU and on every GPU, and writes a\n"
    "device profile (JSON) for placement=\"auto\" and `hetnet inspect --placement --auto`:\n"
    "  per device: FC (GEMM) and Conv GFLOP/s per shape class (small < 1 MFLOP, medium < 100 MFLOP,\n"
    "  large), memory bandwidth (a large Relu), per-op dispatch / launch overhead (a tiny Relu), per-run\n"
    "  overhead (a net of one tiny Relu, less its dispatch: on a GPU the end-of-run wait) and\n"
    "  memory size (CPU: /proc/meminfo MemTotal; GPU: nvidia-smi where present, else 0 = unknown);\n"
    "  per device pair: copy bandwidth and latency (CopyCPUToGPU from pinned and from pageable host\n"
    "  memory, CopyGPUToCPU into pinned memory, GPU-to-GPU Copy).\n"
    "Throughputs exclude the dispatch overhead (the cost model adds it per op).\n"
    "\n"
    "  -o, --output FILE   write the profile here (default: stdout)\n"
    "  --quick             small shapes, few repetitions (a second or two; for CI)\n"
    "  -h, --help          this help\n";

struct Settings {
  bool quick = false;
  double target_s = 0.25;  // timed runs of one measurement last about this long in all
};

caffe2::Argument IntsArg(const std::string& name, const std::vector<int64_t>& v) {
  caffe2::Argument a;
  a.set_name(name);
  for (int64_t x : v) a.add_ints(x);
  return a;
}
caffe2::Argument IntArg(const std::string& name, int64_t v) {
  caffe2::Argument a;
  a.set_name(name);
  a.set_i(v);
  return a;
}

caffe2::OperatorDef MakeOp(const std::string& type, const std::vector<std::string>& ins, const std::string& out,
                           Device d, const std::vector<caffe2::Argument>& args = {}) {
  caffe2::OperatorDef op;
  op.set_type(type);
  for (const auto& i : ins) op.add_input(i);
  op.add_output(out);
  for (const auto& a : args) *op.add_arg() = a;
  hetnet::DeviceToOption(d, op.mutable_device_option());
  return op;
}

// Times operators in one workspace. Each measurement is a net repeating one operator `reps`
// times (a run of a simple net waits for its GPU work at the end, so repetitions amortize that
// wait), run once to warm up (allocations, algorithm choice) and then until target_s has passed.
class Bench {
 public:
  explicit Bench(const Settings& s) : s_(s) {}
  hetnet::Workspace& ws() { return ws_; }

  // `name` on `d`, shape `shape`, filled with a small constant by a fill op on that device.
  void Fill(const std::string& name, const std::vector<int64_t>& shape, Device d) {
    caffe2::OperatorDef fill = MakeOp("ConstantFill", {}, name, d, {IntsArg("shape", shape)});
    caffe2::Argument v;
    v.set_name("value");
    v.set_f(0.01f);
    *fill.add_arg() = v;
    ws_.RunOperatorOnce(fill);
  }

  // Best (shortest) seconds per operator over the timed runs.
  double SecondsPerOp(const caffe2::OperatorDef& op, int reps) {
    caffe2::NetDef net;
    net.set_name("calibrate_" + std::to_string(nets_++));
    for (const auto& in : op.input()) net.add_external_input(in);
    for (int r = 0; r < reps; ++r) *net.add_op() = op;
    hetnet::NetBase* n = ws_.CreateNet(net);
    n->Run();
    double best = std::numeric_limits<double>::infinity(), total = 0;
    for (int runs = 0; runs < 3 || (total < s_.target_s && runs < 10000); ++runs) {
      const auto t0 = std::chrono::steady_clock::now();
      n->Run();
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, dt);
      total += dt;
    }
    ws_.DeleteNet(net.name());
    return best / reps;
  }

 private:
  Settings s_;
  hetnet::Workspace ws_;
  int nets_ = 0;
};

// GFLOP/s of `flops` done in `seconds`, of which `dispatch_s` is fixed overhead. Overhead-dominated
// measurements keep at least a tenth of the time so that noise cannot make the rate explode.
double Rate(double flops_or_bytes, double seconds, double dispatch_s) {
  const double busy = std::max(seconds - dispatch_s, 0.1 * seconds);
  return flops_or_bytes / busy / 1e9;
}

struct GemmShape { const char* cls; int64_t M, K, N; };
struct ConvShape { const char* cls; int64_t N, C, H, M; };  // square H x H input, 3x3 kernel, pad 1

void MeasureDevice(Bench& b, Device d, const Settings& s, DeviceCaps* caps) {
  const std::string p = d.str() + "_";
  const int reps = d.is_cpu() ? 1 : (s.quick ? 5 : 20);
  // Dispatch: a one-element Relu, 100 (quick: 20) to a net.
  b.Fill(p + "tiny", {1}, d);
  const double dispatch_s = b.SecondsPerOp(MakeOp("Relu", {p + "tiny"}, p + "tiny_y", d), s.quick ? 20 : 100);
  caps->dispatch_us = dispatch_s * 1e6;
  // Per run: a net of that one Relu, less its dispatch (on a GPU, the wait for its work at the end).
  const double one_run_s = b.SecondsPerOp(MakeOp("Relu", {p + "tiny"}, p + "tiny_y", d), 1);
  caps->run_overhead_us = std::max(0.0, one_run_s - dispatch_s) * 1e6;

  // Memory bandwidth: a large Relu reads and writes every element once.
  const int64_t n = s.quick ? (1 << 22) : (d.is_cpu() ? (1 << 25) : (1 << 27));
  b.Fill(p + "big", {n}, d);
  const double relu_s = b.SecondsPerOp(MakeOp("Relu", {p + "big"}, p + "big_y", d), reps);
  caps->mem_bandwidth_gbs = Rate(8.0 * n, relu_s, dispatch_s);
  b.ws().RemoveBlob(p + "big");
  b.ws().RemoveBlob(p + "big_y");

  const std::vector<GemmShape> gemms = s.quick
      ? std::vector<GemmShape>{{"small", 8, 64, 64}, {"medium", 32, 256, 512}, {"large", 128, 512, 1024}}
      : std::vector<GemmShape>{{"small", 16, 128, 128}, {"medium", 64, 512, 1024}, {"large", 512, 2048, 2048}};
  for (const GemmShape& g : gemms) {
    const std::string x = p + "fc_x_" + g.cls, w = p + "fc_w_" + g.cls, bias = p + "fc_b_" + g.cls;
    b.Fill(x, {g.M, g.K}, d);
    b.Fill(w, {g.N, g.K}, d);
    b.Fill(bias, {g.N}, d);
    const double t = b.SecondsPerOp(MakeOp("FC", {x, w, bias}, p + "fc_y", d), reps);
    caps->gemm_gflops[g.cls] = Rate(2.0 * g.M * g.N * g.K, t, dispatch_s);
  }
  const std::vector<ConvShape> convs = s.quick
      ? std::vector<ConvShape>{{"small", 1, 4, 8, 4}, {"medium", 1, 16, 32, 16}, {"large", 1, 64, 40, 64}}
      : std::vector<ConvShape>{{"small", 1, 8, 8, 8}, {"medium", 1, 32, 32, 32}, {"large", 8, 64, 56, 64}};
  for (const ConvShape& c : convs) {
    const std::string x = p + "conv_x_" + c.cls, w = p + "conv_w_" + c.cls;
    b.Fill(x, {c.N, c.C, c.H, c.H}, d);
    b.Fill(w, {c.M, c.C, 3, 3}, d);
    const double t =
        b.SecondsPerOp(MakeOp("Conv", {x, w}, p + "conv_y", d, {IntArg("kernel", 3), IntArg("pad", 1)}), reps);
    caps->conv_gflops[c.cls] = Rate(2.0 * c.N * c.M * c.H * c.H * c.C * 9, t, dispatch_s);
  }
}

// One link: latency from a 4-byte copy, bandwidth from the extra time of a large one.
LinkCaps MeasureLink(Bench& b, const caffe2::OperatorDef& small, const caffe2::OperatorDef& large, double bytes,
                     int reps) {
  LinkCaps l;
  const double t_small = b.SecondsPerOp(small, reps);
  const double t_large = b.SecondsPerOp(large, reps);
  l.latency_us = t_small * 1e6;
  l.bandwidth_gbs = (bytes - 4) / std::max(t_large - t_small, 0.1 * t_large) / 1e9;
  return l;
}

// Host blob `name` of `n` floats in page-locked (pinned) or pageable memory; returns what it got.
bool HostBlob(Bench& b, const std::string& name, int64_t n, bool pinned) {
  b.Fill(name, {n}, Device::CPU());
  hetnet::Tensor* t = b.ws().GetMutableBlob(name)->GetMutableTensor(Device::CPU());
  t->set_pinned_host(pinned);
  t->mutable_data<float>();  // a write moves the storage where asked (core/tensor.h)
  return t->storage_pinned();
}

void MeasureLinks(Bench& b, int gpus, const Settings& s, DeviceProfile* profile, std::vector<std::string>* notes) {
  const int64_t n = s.quick ? (1 << 21) : (1 << 24);  // 8 MiB / 64 MiB
  const double bytes = 4.0 * n;
  const int reps = s.quick ? 3 : 10;
  for (int g = 0; g < gpus; ++g) {
    const Device d = Device::CUDA(g);
    const std::string p = d.str() + "_";
    b.Fill(p + "dev_small", {1}, d);  // sources of the device-to-host and device-to-device copies
    b.Fill(p + "dev", {n}, d);
    for (bool pinned : {true, false}) {
      const std::string hs = p + (pinned ? "pinned" : "pageable") + "_small", hl = p + (pinned ? "pinned" : "pageable");
      const bool got_small = HostBlob(b, hs, 1, pinned), got_large = HostBlob(b, hl, n, pinned);
      if (got_small != pinned || got_large != pinned) {
        notes->push_back("host to " + d.str() + (pinned ? " pinned" : " pageable") +
                         ": the runtime did not provide that kind of host memory; not measured");
        continue;
      }
      LinkCaps l = MeasureLink(b, MakeOp("CopyCPUToGPU", {hs}, p + "dev_small", d),
                               MakeOp("CopyCPUToGPU", {hl}, p + "dev", d), bytes, reps);
      if (b.ws().GetBlob(hl)->GetTensor().storage_pinned() != pinned) {
        notes->push_back("host to " + d.str() + " pageable: the runtime moved the source to pinned memory while "
                         "copying; not recorded");
        continue;
      }
      l.from = "cpu", l.to = d.str(), l.pinned = pinned;
      profile->links.push_back(l);
    }
    // CopyGPUToCPU always writes page-locked host memory: only the pinned link exists.
    LinkCaps down = MeasureLink(b, MakeOp("CopyGPUToCPU", {p + "dev_small"}, p + "back_small", d),
                                MakeOp("CopyGPUToCPU", {p + "dev"}, p + "back", d), bytes, reps);
    down.from = d.str(), down.to = "cpu", down.pinned = true;
    profile->links.push_back(down);
  }
  if (gpus > 0)
    notes->push_back("device to host is pinned only: CopyGPUToCPU always writes page-locked memory");
  // A GPU Copy reads its input from any GPU (core/placement.cc): that is the device-to-device copy.
  for (int from = 0; from < gpus; ++from)
    for (int to = 0; to < gpus; ++to) {
      if (from == to) continue;
      const std::string src = Device::CUDA(from).str() + "_";
      LinkCaps l = MeasureLink(b, MakeOp("Copy", {src + "dev_small"}, "d2d_small", Device::CUDA(to)),
                               MakeOp("Copy", {src + "dev"}, "d2d", Device::CUDA(to)), bytes, reps);
      l.from = Device::CUDA(from).str(), l.to = Device::CUDA(to).str();
      profile->links.push_back(l);
    }
}

std::string FirstLine(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  return out;
}

int64_t HostMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  while (in >> key >> kb) {
    if (key == "MemTotal:") return kb * 1024;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// Total memory of each GPU from nvidia-smi (the runtime's device API does not expose it); empty when
// nvidia-smi is absent, or when CUDA_VISIBLE_DEVICES may renumber the GPUs it lists.
std::vector<int64_t> GpuMemoryBytes(int gpus) {
  if (gpus == 0 || getenv("CUDA_VISIBLE_DEVICES")) return {};
  std::istringstream lines(FirstLine(
      "timeout 10 nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null"));
  std::vector<int64_t> out;
  int64_t mib = 0;
  while (lines >> mib) out.push_back(mib << 20);
  return static_cast<int>(out.size()) == gpus ? out : std::vector<int64_t>{};
}

std::string MachineText(int gpus) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  std::ostringstream s;
  s << sysconf(_SC_NPROCESSORS_ONLN) << " CPU cores" << (model.empty() ? "" : " (" + model + ")") << ", " << gpus
    << " GPU" << (gpus == 1 ? "" : "s");
  return s.str();
}

int Calibrate(int argc, char** argv) {
  ArgReader args(argc, argv, 1);
  std::string output;
  Settings s;
  while (!args.Done()) {
    if (args.Switch("--help") || args.Switch("-h")) {
      std::cout << kCalibrateHelp;
      return kExitOk;
    }
    if (args.Flag("--output", &output) || args.Flag("-o", &output)) continue;
    if (args.Switch("--quick")) {
      s.quick = true;
      s.target_s = 0.02;
      continue;
    }
    throw UsageError("unknown option '" + args.Peek() + "' for calibrate");
  }
  // Refuse an unwritable output before measuring for a minute.
  if (!output.empty()) {
    const size_t slash = output.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : output.substr(0, slash);
    if (access(dir.c_str(), W_OK) != 0)
      HN_THROW(kRuntime, "cannot write the profile to '", output, "': directory '", dir, "' ",
               errno == ENOENT ? "does not exist" : "is not writable");
  }
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));

  const int gpus = hetnet::NumCudaDevices();
  DeviceProfile profile;
  profile.machine = std::string(host) + ": " + MachineText(gpus);
  profile.source = std::string("measured by hetnet calibrate on ") + host + ", " + date + (s.quick ? " (--quick)" : "");
  std::vector<std::string> notes;
  Bench bench(s);
  std::vector<Device> devices{Device::CPU()};
  for (int g = 0; g < gpus; ++g) devices.push_back(Device::CUDA(g));
  const std::vector<int64_t> gpu_memory = GpuMemoryBytes(gpus);
  for (const Device& d : devices) {
    DeviceCaps caps;
    caps.name = d.str();
    MeasureDevice(bench, d, s, &caps);
    caps.memory_bytes = d.is_cpu() ? HostMemoryBytes() : gpu_memory.empty() ? 0 : gpu_memory[d.id];
    std::cerr << "calibrate: " << caps.name << ": FC large " << caps.gemm_gflops["large"] << " GFLOP/s, Conv large "
              << caps.conv_gflops["large"] << " GFLOP/s, " << caps.mem_bandwidth_gbs << " GB/s, dispatch "
              << caps.dispatch_us << " us, run overhead " << caps.run_overhead_us << " us\n";
    profile.devices.push_back(caps);
  }
  if (gpus > 0 && gpu_memory.empty()) notes.push_back("GPU memory unknown (0): nvidia-smi unavailable");
  MeasureLinks(bench, gpus, s, &profile, &notes);
  profile.notes = "FC / Conv throughputs and memory bandwidth exclude the per-op dispatch overhead.";
  for (const auto& n : notes) profile.notes += " " + n + ".";
  if (output.empty())
    std::cout << profile.ToJson();
  else
    profile.Save(output);
  return kExitOk;
}

}  // namespace

int CalibrateCommand(int argc, char** argv) {
  try {
    return Calibrate(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "hetnet: " << e.what() << "\n" << kCalibrateHelp;
    return kExitUsage;
  }
}

}  // namespace hetnet_cli
