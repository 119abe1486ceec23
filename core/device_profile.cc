#include "core/device_profile.h"

#include <cmath>
#include <set>

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "core/error.h"
#include "core/json_document.h"
#include "core/profiler.h"
#include "core/proto_io.h"

namespace hetnet {

ShapeClass ShapeClassOf(double flops) {
  if (flops < 1e6) return ShapeClass::kSmall;
  if (flops < 1e8) return ShapeClass::kMedium;
  return ShapeClass::kLarge;
}

const char* ShapeClassName(ShapeClass c) {
  switch (c) {
    case ShapeClass::kSmall: return "small";
    case ShapeClass::kMedium: return "medium";
    case ShapeClass::kLarge: return "large";
  }
  return "large";
}

const DeviceCaps* DeviceProfile::Find(const std::string& device) const {
  for (const DeviceCaps& d : devices)
    if (d.name == device) return &d;
  return nullptr;
}

const LinkCaps* DeviceProfile::FindLink(const std::string& from, const std::string& to, bool pinned) const {
  for (const LinkCaps& l : links)
    if (l.from == from && l.to == to && l.pinned == pinned) return &l;
  return nullptr;
}

double DeviceProfile::Correction(const std::string& device, const std::string& op_type) const {
  auto it = corrections.find(device + "/" + op_type);
  return it == corrections.end() ? 1.0 : it->second;
}

double DeviceProfile::MeasuredUs(const std::string& device, const std::string& signature) const {
  auto it = measured_op_us.find(device + "|" + signature);
  return it == measured_op_us.end() ? -1.0 : it->second;
}

bool DeviceProfile::MeasuredSplit(const std::string& device, const std::string& signature, double* launch_us,
                                  double* device_us) const {
  if (!overlap_gpu_launches) return false;
  const std::string key = device + "|" + signature;
  auto l = measured_launch_us.find(key);
  auto d = measured_device_us.find(key);
  if (l == measured_launch_us.end() || d == measured_device_us.end()) return false;
  *launch_us = l->second;
  *device_us = d->second;
  return true;
}

namespace {

using rapidjson::Value;
using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void WriteClassMap(Writer& w, const char* key, const std::map<std::string, double>& m) {
  w.Key(key);
  w.StartObject();
  for (const auto& kv : m) {
    w.Key(kv.first.c_str());
    w.Double(kv.second);
  }
  w.EndObject();
}

// Reads one JSON object strictly: every member must be expected, every value of the right type and
// range. `where` names the file and the field path in every message.
class ObjectReader {
 public:
  ObjectReader(const Value& v, std::string what, std::string where) : v_(v), what_(std::move(what)), where_(std::move(where)) {
    if (!v.IsObject()) Fail(where_, "must be a JSON object");
  }

  // Rejects members not in `known` (a typo would otherwise silently fall back to a default).
  void OnlyKeys(const std::set<std::string>& known) const {
    for (auto it = v_.MemberBegin(); it != v_.MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      if (!known.count(key)) Fail(Path(key), "is not a known field");
    }
  }

  const Value* Get(const char* key, bool required) const {
    auto it = v_.FindMember(key);
    if (it == v_.MemberEnd()) {
      if (required) Fail(Path(key), "is missing");
      return nullptr;
    }
    return &it->value;
  }

  std::string String(const char* key, bool required, bool non_empty = false) const {
    const Value* v = Get(key, required);
    if (!v) return "";
    if (!v->IsString()) Fail(Path(key), "must be a string");
    std::string s(v->GetString(), v->GetStringLength());
    if (non_empty && s.empty()) Fail(Path(key), "must not be empty");
    return s;
  }

  // A finite number >= 0 (> 0 with `positive`).
  double Number(const Value& v, const std::string& path, bool positive) const {
    if (!v.IsNumber()) Fail(path, "must be a number");
    const double d = v.GetDouble();
    if (!std::isfinite(d) || d < 0 || (positive && d == 0))
      Fail(path, positive ? "must be a positive finite number" : "must be a finite number >= 0", " (got ", d, ")");
    return d;
  }
  double Number(const char* key, double dflt) const {
    const Value* v = Get(key, false);
    return v ? Number(*v, Path(key), false) : dflt;
  }

  int64_t Int(const char* key) const {
    const Value* v = Get(key, false);
    if (!v) return 0;
    if (v->IsInt64()) {
      if (v->GetInt64() < 0) Fail(Path(key), "must be >= 0");
      return v->GetInt64();
    }
    if (v->IsUint64()) Fail(Path(key), "is too large");
    // Whole-valued doubles (1.6e11) are accepted; 2^63 and up are not.
    const double d = Number(*v, Path(key), false);
    if (d != std::floor(d) || d >= 9.2e18) Fail(Path(key), "must be a whole number of bytes (got ", d, ")");
    return static_cast<int64_t>(d);
  }

  bool Bool(const char* key, bool dflt) const {
    const Value* v = Get(key, false);
    if (!v) return dflt;
    if (!v->IsBool()) Fail(Path(key), "must be true or false");
    return v->GetBool();
  }

  // {"small": 1.0, "medium": 2.0, "large": 3.0}; any subset of the shape classes.
  std::map<std::string, double> ClassMap(const char* key) const {
    std::map<std::string, double> out;
    const Value* v = Get(key, false);
    if (!v) return out;
    ObjectReader r(*v, what_, Path(key));
    r.OnlyKeys({"small", "medium", "large"});
    for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
      const std::string cls = it->name.GetString();
      out[cls] = Number(it->value, r.Path(cls), true);
    }
    return out;
  }

  std::string Path(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }

  template <typename... Args>
  [[noreturn]] void Fail(const std::string& path, const Args&... args) const {
    HN_THROW(kInvalidArgument, "device profile '", what_, "': field '", path.empty() ? "(top level)" : path, "' ",
             args...);
  }

 private:
  const Value& v_;
  std::string what_, where_;
};

const Value& ArrayOf(const ObjectReader& r, const char* key, bool required) {
  static const Value kEmpty(rapidjson::kArrayType);
  const Value* v = r.Get(key, required);
  if (!v) return kEmpty;
  if (!v->IsArray()) r.Fail(r.Path(key), "must be an array");
  return *v;
}

}  // namespace

std::string DeviceProfile::ToJson() const {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("machine"); w.String(machine.c_str());
  w.Key("source"); w.String(source.c_str());
  if (!notes.empty()) { w.Key("notes"); w.String(notes.c_str()); }
  w.Key("devices");
  w.StartArray();
  for (const DeviceCaps& d : devices) {
    w.StartObject();
    w.Key("name"); w.String(d.name.c_str());
    WriteClassMap(w, "gemm_gflops", d.gemm_gflops);
    WriteClassMap(w, "conv_gflops", d.conv_gflops);
    w.Key("mem_bandwidth_gbs"); w.Double(d.mem_bandwidth_gbs);
    w.Key("dispatch_us"); w.Double(d.dispatch_us);
    w.Key("run_overhead_us"); w.Double(d.run_overhead_us);
    w.Key("memory_bytes"); w.Int64(d.memory_bytes);
    w.EndObject();
  }
  w.EndArray();
  w.Key("links");
  w.StartArray();
  for (const LinkCaps& l : links) {
    w.StartObject();
    w.Key("from"); w.String(l.from.c_str());
    w.Key("to"); w.String(l.to.c_str());
    w.Key("pinned"); w.Bool(l.pinned);
    w.Key("bandwidth_gbs"); w.Double(l.bandwidth_gbs);
    w.Key("latency_us"); w.Double(l.latency_us);
    w.EndObject();
  }
  w.EndArray();
  WriteClassMap(w, "corrections", corrections);
  if (!measured_op_us.empty()) WriteClassMap(w, "measured_ops", measured_op_us);
  if (!measured_launch_us.empty()) WriteClassMap(w, "measured_launch_us", measured_launch_us);
  if (!measured_device_us.empty()) WriteClassMap(w, "measured_device_us", measured_device_us);
  if (overlap_gpu_launches) { w.Key("overlap_gpu_launches"); w.Bool(true); }
  if (!measured_copy_latency_us.empty()) WriteClassMap(w, "measured_copy_latency_us", measured_copy_latency_us);
  if (!run_time_scales.empty()) WriteClassMap(w, "run_time_scales", run_time_scales);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

DeviceProfile DeviceProfile::FromJson(const std::string& text, const std::string& what) {
  rapidjson::Document doc;
  // Strict JSON (no NaN/Infinity, comments or trailing commas): the file is machine-written. Numbers
  // are read exactly: a measured time read back equals the one written (or given from Python).
  JsonParseResult parsed = ParseJsonDocument(text, &doc);
  if (!parsed.ok)
    HN_THROW(kInvalidArgument, "device profile '", what, "': not valid JSON at offset ", parsed.offset, ": ",
             parsed.message);
  ObjectReader top(doc, what, "");
  top.OnlyKeys({"machine", "source", "notes", "devices", "links", "corrections", "measured_ops",
                "measured_launch_us", "measured_device_us", "measured_copy_latency_us", "overlap_gpu_launches",
                "run_time_scales"});
  DeviceProfile p;
  if (const Value* v = top.Get("overlap_gpu_launches", false)) {
    if (!v->IsBool()) HN_THROW(kInvalidArgument, "device profile '", what, "': overlap_gpu_launches must be true or false");
    p.overlap_gpu_launches = v->GetBool();
  }
  p.machine = top.String("machine", false);
  p.source = top.String("source", false);
  p.notes = top.String("notes", false);

  const Value& devices = ArrayOf(top, "devices", true);
  for (rapidjson::SizeType i = 0; i < devices.Size(); ++i) {
    ObjectReader r(devices[i], what, "devices[" + std::to_string(i) + "]");
    r.OnlyKeys({"name", "gemm_gflops", "conv_gflops", "mem_bandwidth_gbs", "dispatch_us", "run_overhead_us",
                "memory_bytes"});
    DeviceCaps d;
    d.name = r.String("name", true, true);
    if (p.Find(d.name)) r.Fail(r.Path("name"), "repeats device '", d.name, "'");
    d.gemm_gflops = r.ClassMap("gemm_gflops");
    d.conv_gflops = r.ClassMap("conv_gflops");
    d.mem_bandwidth_gbs = r.Number("mem_bandwidth_gbs", 0);
    d.dispatch_us = r.Number("dispatch_us", 0);
    d.run_overhead_us = r.Number("run_overhead_us", 0);
    d.memory_bytes = r.Int("memory_bytes");
    p.devices.push_back(std::move(d));
  }

  const Value& links = ArrayOf(top, "links", false);
  for (rapidjson::SizeType i = 0; i < links.Size(); ++i) {
    ObjectReader r(links[i], what, "links[" + std::to_string(i) + "]");
    r.OnlyKeys({"from", "to", "pinned", "bandwidth_gbs", "latency_us"});
    LinkCaps l;
    l.from = r.String("from", true, true);
    l.to = r.String("to", true, true);
    l.pinned = r.Bool("pinned", true);
    l.bandwidth_gbs = r.Number(*r.Get("bandwidth_gbs", true), r.Path("bandwidth_gbs"), true);
    l.latency_us = r.Number("latency_us", 0);
    if (p.FindLink(l.from, l.to, l.pinned))
      r.Fail(r.Path("from"), "repeats the link ", l.from, " -> ", l.to, l.pinned ? " (pinned)" : " (pageable)");
    p.links.push_back(std::move(l));
  }

  if (const Value* c = top.Get("corrections", false)) {
    ObjectReader r(*c, what, "corrections");
    for (auto it = c->MemberBegin(); it != c->MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      const size_t slash = key.find('/');
      if (slash == std::string::npos || slash == 0 || slash + 1 == key.size())
        r.Fail(r.Path(key), "is not of the form \"<device>/<op type>\"");
      p.corrections[key] = r.Number(it->value, r.Path(key), true);
    }
  }
  // Measured operator times, keyed "<device>|<op signature>".
  auto read_measured = [&](const char* field, std::map<std::string, double>* out) {
    const Value* m = top.Get(field, false);
    if (!m) return;
    ObjectReader r(*m, what, field);
    for (auto it = m->MemberBegin(); it != m->MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      const size_t bar = key.find('|');
      if (bar == std::string::npos || bar == 0 || bar + 1 == key.size())
        r.Fail(r.Path(key), "is not of the form \"<device>|<op signature>\"");
      (*out)[key] = r.Number(it->value, r.Path(key), false);
    }
  };
  read_measured("measured_ops", &p.measured_op_us);
  read_measured("measured_launch_us", &p.measured_launch_us);
  read_measured("measured_device_us", &p.measured_device_us);
  read_measured("run_time_scales", &p.run_time_scales);
  if (const Value* m = top.Get("measured_copy_latency_us", false)) {
    ObjectReader r(*m, what, "measured_copy_latency_us");
    for (auto it = m->MemberBegin(); it != m->MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      const size_t arrow = key.find("->");
      if (arrow == std::string::npos || arrow == 0 || arrow + 2 == key.size())
        r.Fail(r.Path(key), "is not of the form \"<from device>-><to device>\"");
      p.measured_copy_latency_us[key] = r.Number(it->value, r.Path(key), false);
    }
  }
  return p;
}

DeviceProfile DeviceProfile::Load(const std::string& path) {
  const std::string text = ReadFileBytes(path);  // kNotFound when missing
  HN_ENFORCE(text.size() <= (16u << 20), "device profile '", path, "' is ", text.size(),
             " bytes; a profile is a few KB (limit 16 MiB)");
  return FromJson(text, path);
}

void DeviceProfile::Save(const std::string& path) const { WriteFileBytes(path, ToJson()); }

int FoldProfiledRun(DeviceProfile* profile, const RunProfile& run, const std::vector<std::string>& op_devices,
                    const std::vector<double>& predicted_us) {
  HN_ENFORCE(profile != nullptr, "FoldProfiledRun: no profile");
  HN_ENFORCE(op_devices.size() == run.op_types.size() && predicted_us.size() == run.op_types.size(),
             "FoldProfiledRun: run of net '", run.net_name, "' has ", run.op_types.size(), " ops but ",
             op_devices.size(), " devices and ", predicted_us.size(), " predictions were given");
  // Sum of log(measured / predicted) and count per "<device>/<type>".
  std::map<std::string, std::pair<double, int>> logs;
  for (const OpTiming& t : run.ops) {
    HN_ENFORCE(t.op >= 0 && static_cast<size_t>(t.op) < run.op_types.size(), "FoldProfiledRun: timing of op ", t.op,
               " outside net '", run.net_name, "' (", run.op_types.size(), " ops)");
    const std::string& type = run.op_types[t.op];
    const double predicted = predicted_us[t.op];
    if (IsCopyOpType(type) || !(t.dur_us > 0) || !(predicted > 0) || !std::isfinite(predicted) ||
        op_devices[t.op].empty())
      continue;
    auto& acc = logs[op_devices[t.op] + "/" + type];
    acc.first += std::log(t.dur_us / predicted);
    acc.second += 1;
  }
  int changed = 0;
  for (const auto& kv : logs) {
    const double ratio = std::exp(kv.second.first / kv.second.second);
    auto it = profile->corrections.find(kv.first);
    const double old = it == profile->corrections.end() ? 1.0 : it->second;
    const double updated = old * ratio;
    if (!std::isfinite(updated) || updated <= 0) continue;
    profile->corrections[kv.first] = updated;
    ++changed;
  }
  return changed;
}

}  // namespace hetnet
