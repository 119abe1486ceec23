#include "core/profiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/collective_stats.h"
#include "core/net.h"
#include "core/device_events.h"

namespace hetnet {

double ProfilerNowUs() {
  static const auto epoch = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - epoch).count();
}

bool IsCopyOpType(const std::string& type) {
  return type == "Copy" || type == "CopyCPUToGPU" || type == "CopyGPUToCPU";
}

// ---- OpTimerSet ----

struct OpTimerSet::Impl {
  struct OpState {
    int device = -1;  // CUDA id, -1 for CPU
    bool ran = false;
    double begin_us = 0, end_us = 0;
    std::string lane, host_lane;
    DeviceEvent start, end;
    CollectiveRunStats collective;
    bool is_collective = false;
  };
  struct Clock {  // a GPU event taken at a known host time: maps event times onto the host clock
    DeviceEvent event;
    double host_us = 0;
    bool set = false;
  };
  RunProfile shape;
  std::vector<OpState> ops;
  std::mutex mu;  // guards clocks (ops are each touched by one thread per run)
  std::map<int, Clock> clocks;
};

OpTimerSet::OpTimerSet(const NetBase& net) : impl_(new Impl) {
  impl_->shape.net_name = net.name();
  impl_->ops.resize(net.operators().size());
  for (const auto& op : net.operators()) {
    impl_->shape.op_types.push_back(op->type());
    impl_->shape.op_names.push_back(op->def().name());
  }
}
OpTimerSet::~OpTimerSet() = default;

void OpTimerSet::StartRun() {
  for (auto& s : impl_->ops) s.ran = false;
  for (auto& kv : impl_->clocks) kv.second.set = false;
  impl_->shape.start_us = ProfilerNowUs();
}

void OpTimerSet::Begin(int op, OperatorBase* o) {
  auto& s = impl_->ops[op];
  s.device = o->device().is_cpu() ? -1 : o->device().id;
  s.ran = true;
  s.begin_us = ProfilerNowUs();
  if (s.device < 0) return;
  DeviceEvents* ev = GetDeviceEvents();
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto& clock = impl_->clocks[s.device];
    if (!clock.set) {
      ev->RecordNow(clock.event.Get(s.device, true), s.device);
      clock.host_us = ProfilerNowUs();
      clock.set = true;
    }
  }
  ev->Record(s.start.Get(s.device, true), ev->CurrentStream(o->context()), s.device);
}

void OpTimerSet::End(int op, OperatorBase* o, const std::string& lane) {
  auto& s = impl_->ops[op];
  s.end_us = ProfilerNowUs();
  s.lane = lane;
  if (const auto* c = dynamic_cast<const CollectiveStatsSource*>(o)) {
    s.collective = c->last_collective_run();
    s.is_collective = true;
  }
  if (s.device >= 0) {
    DeviceEvents* ev = GetDeviceEvents();
    ev->Record(s.end.Get(s.device, true), ev->CurrentStream(o->context()), s.device);
    const size_t at = lane.rfind(" " + o->device().str());  // OpLane: "<thread> cuda:N[ ...]"
    s.host_lane = at == std::string::npos ? lane : lane.substr(0, at);
  }
}

RunProfile OpTimerSet::Resolve() {
  RunProfile run = impl_->shape;
  run.ops.clear();
  run.wall_us = ProfilerNowUs() - run.start_us;
  for (int i = 0; i < static_cast<int>(impl_->ops.size()); ++i) {
    auto& s = impl_->ops[i];
    if (!s.ran) continue;
    OpTiming t;
    t.op = i;
    t.lane = s.lane;
    t.start_us = s.begin_us;
    t.dur_us = t.host_dur_us = s.end_us - s.begin_us;
    if (s.is_collective) {
      t.collective_bytes = s.collective.bytes;
      t.collective_peers = s.collective.peers;
      t.collective_algorithm = s.collective.algorithm;
    }
    if (s.device >= 0) {
      DeviceEvents* ev = GetDeviceEvents();
      auto& clock = impl_->clocks.at(s.device);
      ev->HostWait(s.end.handle());
      t.host_start_us = s.begin_us;
      t.host_lane = s.host_lane;
      t.start_us = clock.host_us + 1e3 * ev->ElapsedMs(clock.event.handle(), s.start.handle());
      t.dur_us = 1e3 * ev->ElapsedMs(s.start.handle(), s.end.handle());
    }
    run.ops.push_back(std::move(t));
  }
  return run;
}

// ---- running ----

RunProfile ProfileRun(NetBase* net) {
  if (auto* self_timed = dynamic_cast<ProfilingExecutor*>(net)) return self_timed->RunProfiled();
  OpTimerSet timers(*net);
  timers.StartRun();
  const auto& ops = net->operators();
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    try {
      timers.Begin(i, ops[i].get());
      ops[i]->Run();
      timers.End(i, ops[i].get(), OpLane("main thread", ops[i].get(), false));
    } catch (...) {
      RethrowWithContext(OperatorContext(net->def(), i));
    }
  }
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    if (ops[i]->device().is_cpu()) continue;
    try {
      ops[i]->Finish();
    } catch (...) {
      RethrowWithContext(OperatorContext(net->def(), i));
    }
  }
  return timers.Resolve();
}

std::string OpLane(const std::string& thread, OperatorBase* op, bool copy_streams) {
  if (op->device().is_cpu()) return thread;
  std::string lane = thread + " " + op->device().str();
  if (copy_streams && op->type() == "CopyCPUToGPU") lane += " H2D copy";
  if (copy_streams && op->type() == "CopyGPUToCPU") lane += " D2H copy";
  if (copy_streams && op->type() == "Copy") lane += " P2P copy";
  return lane;
}

ProfileResult ProfileNet(NetBase* net, int warmup, int iters, bool keep_runs) {
  HN_ENFORCE(iters > 0, "profiling needs at least one main run, got ", iters);
  ProfileResult r;
  for (int i = 0; i < warmup; ++i) net->Run();
  const double t0 = ProfilerNowUs();
  for (int i = 0; i < iters; ++i) net->Run();
  r.unprofiled_ms_per_run = (ProfilerNowUs() - t0) / 1e3 / iters;
  for (int i = 0; i < iters; ++i) {
    RunProfile run = ProfileRun(net);
    r.summary.Add(run);
    if (keep_runs) r.runs.push_back(std::move(run));
  }
  return r;
}

// ---- reports ----

void ProfileSummary::Add(const RunProfile& run) {
  if (types_.empty()) {
    types_ = run.op_types;
    op_us_.assign(types_.size(), 0.0);
  }
  HN_ENFORCE(run.op_types.size() == types_.size(), "profile of net '", run.net_name,
             "' does not match the runs summarized so far");
  for (const auto& t : run.ops) op_us_[t.op] += t.dur_us;
  wall_us_ += run.wall_us;
  ++runs_;
}

std::vector<double> ProfileSummary::MeanOpMs() const {
  std::vector<double> out;
  for (double us : op_us_) out.push_back(runs_ ? us / runs_ / 1e3 : 0.0);
  return out;
}

std::map<std::string, double> ProfileSummary::MeanTypeMs() const {
  std::map<std::string, double> out;
  const auto ms = MeanOpMs();
  for (size_t i = 0; i < types_.size(); ++i) out[types_[i]] += ms[i];
  return out;
}

std::map<std::string, int> ProfileSummary::TypeCounts() const {
  std::map<std::string, int> out;
  for (const auto& t : types_) ++out[t];
  return out;
}

double ProfileSummary::CopyShare() const {
  double all = 0, copies = 0;
  for (size_t i = 0; i < types_.size(); ++i) {
    all += op_us_[i];
    if (IsCopyOpType(types_[i])) copies += op_us_[i];
  }
  return all > 0 ? copies / all : 0.0;
}

std::string ProfileSummary::ToMarkdown() const {
  const auto type_ms = MeanTypeMs();
  const auto counts = TypeCounts();
  std::vector<std::pair<double, std::string>> rows;
  double total = 0, copies = 0;
  for (const auto& [type, ms] : type_ms) {
    rows.emplace_back(ms, type);
    total += ms;
    if (IsCopyOpType(type)) copies += ms;
  }
  std::sort(rows.rbegin(), rows.rend());
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(4);
  s << "| op type | ops | ms/run | share |\n|---|---:|---:|---:|\n";
  for (const auto& [ms, type] : rows)
    s << "| " << type << " | " << counts.at(type) << " | " << ms << " | "
      << (total > 0 ? 100.0 * ms / total : 0.0) << "% |\n";
  s << "\nop time " << total << " ms/run; copies " << copies << " ms/run (" << 100.0 * CopyShare()
    << "% of op time); wall " << MeanWallMs() << " ms/run over " << runs_ << " profiled runs\n";
  return s.str();
}

namespace {
std::string JsonString(const std::string& in) {
  std::string out = "\"";
  for (char c : in) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
}  // namespace

std::string ChromeTraceJson(const std::vector<RunProfile>& runs) {
  std::map<std::string, int> lanes;  // lane name -> tid, numbered in order of first use
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(3);
  s << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] { s << (first ? "" : ",\n"); first = false; };
  for (size_t r = 0; r < runs.size(); ++r) {
    const RunProfile& run = runs[r];
    for (const auto& t : run.ops) {
      auto it = lanes.emplace(t.lane, static_cast<int>(lanes.size())).first;
      const std::string& name = run.op_names[t.op];
      sep();
      s << "{\"name\":" << JsonString(run.op_types[t.op]) << ",\"cat\":"
        << (IsCopyOpType(run.op_types[t.op]) ? "\"copy\"" : "\"op\"") << ",\"ph\":\"X\",\"ts\":" << t.start_us
        << ",\"dur\":" << t.dur_us << ",\"pid\":0,\"tid\":" << it->second << ",\"args\":{\"op\":" << t.op
        << ",\"run\":" << r << (name.empty() ? "" : ",\"name\":" + JsonString(name));
      if (t.collective_bytes >= 0)
        s << ",\"bytes\":" << t.collective_bytes << ",\"peers\":" << t.collective_peers
          << ",\"algorithm\":" << JsonString(t.collective_algorithm);
      s << "}}";
      if (t.host_lane.empty()) continue;
      sep();  // the host's side of a GPU op: issuing it
      const int host_tid = lanes.emplace(t.host_lane, static_cast<int>(lanes.size())).first->second;
      s << "{\"name\":" << JsonString(run.op_types[t.op] + " (launch)") << ",\"cat\":\"launch\",\"ph\":\"X\",\"ts\":"
        << t.host_start_us << ",\"dur\":" << t.host_dur_us << ",\"pid\":0,\"tid\":" << host_tid
        << ",\"args\":{\"op\":" << t.op << ",\"run\":" << r << "}}";
    }
  }
  sep();
  s << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":"
    << JsonString(runs.empty() ? "" : "net " + runs[0].net_name) << "}}";
  for (const auto& [lane, tid] : lanes) {
    sep();
    s << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" << tid << ",\"args\":{\"name\":"
      << JsonString(lane) << "}}";
  }
  s << "\n]}\n";
  return s.str();
}

void WriteChromeTrace(const std::string& path, const std::vector<RunProfile>& runs) {
  std::ofstream f(path);
  HN_CHECK_KIND(kNotFound, f.good(), "cannot write trace file '", path, "'");
  f << ChromeTraceJson(runs);
  HN_CHECK_KIND(kRuntime, f.good(), "error writing trace file '", path, "'");
}

}  // namespace hetnet
