// Text and Graphviz renderings of a PlacementReport.
#include <cstdio>
#include <iomanip>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/placement.h"

namespace hetnet {

namespace {
std::string HumanBytes(int64_t b) {
  if (b < 0) return "unknown";
  std::ostringstream s;
  s << std::fixed << std::setprecision(1);
  if (b < 1024) return std::to_string(b) + " B";
  if (b < (1 << 20)) s << b / 1024.0 << " KiB";
  else if (b < (1LL << 30)) s << b / 1048576.0 << " MiB";
  else s << b / 1073741824.0 << " GiB";
  return s.str();
}

const char* DeviceColor(const Device& d) {
  static const char* gpu_colors[] = {"palegreen", "khaki", "plum", "lightsalmon", "aquamarine", "wheat"};
  return d.is_cpu() ? "lightblue" : gpu_colors[d.id % 6];
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}
}  // namespace

std::string PlacementReport::ToText() const {
  std::ostringstream s;
  s << "Placement of net '" << net_name << "': " << ops.size() << " operator(s), " << copies.size()
    << " inserted cop" << (copies.size() == 1 ? "y" : "ies") << "\n";
  for (const auto& p : ops) {
    s << "  #" << std::left << std::setw(4) << p.index << std::setw(21) << p.type << " " << std::setw(8) << p.device.str()
      << " engine=" << std::setw(8) << (p.engine.empty() ? "default" : p.engine) << " " << p.reason << "\n";
  }
  if (!copies.empty()) s << "Copies (per run):\n";
  std::map<std::pair<Device, Device>, std::pair<int, int64_t>> totals;
  for (const auto& c : copies) {
    s << "  #" << std::left << std::setw(4) << c.op_index << std::setw(14) << c.type << c.src_blob << " -> "
      << c.dst_blob << "  " << c.from.str() << " -> " << c.to.str() << "  " << HumanBytes(c.bytes) << "\n";
    auto& t = totals[{c.from, c.to}];
    t.first += 1;
    t.second = (t.second < 0 || c.bytes < 0) ? -1 : t.second + c.bytes;
  }
  if (!totals.empty()) s << "Totals per device boundary (per run):\n";
  for (const auto& [k, v] : totals)
    s << "  " << k.first.str() << " -> " << k.second.str() << ": " << v.first << " cop"
      << (v.first == 1 ? "y" : "ies") << ", " << HumanBytes(v.second) << (v.second < 0 ? " (shapes not known)" : "")
      << "\n";
  return s.str();
}

std::string PlacementReport::ToDot() const {
  const caffe2::NetDef& net = placed_net;
  const PlacementReport& report = *this;
  std::ostringstream s;
  s << "digraph " << Quote(net.name()) << " {\n  rankdir=TB;\n  node [shape=box, style=filled];\n";
  std::map<int, const CopyInfo*> copy_at;
  for (const auto& c : report.copies) copy_at[c.op_index] = &c;
  std::map<std::string, std::string> producer;   // blob -> node
  std::map<std::string, std::string> via_copy;   // copied blob -> label of the PCIe edge
  for (const auto& in : net.external_input()) {
    s << "  " << Quote("in:" + in) << " [label=" << Quote(in) << ", shape=ellipse, fillcolor=white];\n";
    producer[in] = Quote("in:" + in);
  }
  for (int i = 0; i < net.op_size(); ++i) {
    const auto& op = net.op(i);
    auto c = copy_at.find(i);
    if (c != copy_at.end()) {  // copies are drawn as the edges that cross the device boundary
      const CopyInfo& ci = *c->second;
      producer[ci.dst_blob] = producer.count(ci.src_blob) ? producer[ci.src_blob] : Quote("in:" + ci.src_blob);
      via_copy[ci.dst_blob] = MakeString(ci.src_blob, " ", ci.from.str(), "->", ci.to.str(), "\\n", HumanBytes(ci.bytes));
      continue;
    }
    const Device d = i < static_cast<int>(report.ops.size()) ? report.ops[i].device : Device::CPU();
    const std::string node = MakeString("op", i);
    s << "  " << node << " [label=" << Quote(MakeString("#", i, " ", op.type(), "\\n", d.str()))
      << ", fillcolor=" << DeviceColor(d) << "];\n";
    for (const auto& in : op.input()) {
      auto p = producer.find(in);
      if (p == producer.end()) continue;
      auto v = via_copy.find(in);
      if (v != via_copy.end())
        s << "  " << p->second << " -> " << node << " [color=red, penwidth=2, label=" << Quote(v->second) << "];\n";
      else
        s << "  " << p->second << " -> " << node << " [label=" << Quote(in) << "];\n";
    }
    for (const auto& out : op.output()) {
      producer[out] = node;
      via_copy.erase(out);
    }
  }
  s << "}\n";
  return s.str();
}

std::string DotToSvg(const std::string& dot) {
  char path[] = "/tmp/hetnet_dot_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return "";
  FILE* f = fdopen(fd, "w");
  fwrite(dot.data(), 1, dot.size(), f);
  fclose(f);
  std::string cmd = std::string("dot -Tsvg ") + path + " 2>/dev/null";
  std::string svg;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) svg.append(buf, n);
    if (pclose(p) != 0) svg.clear();
  }
  std::remove(path);
  return svg;
}

}  // namespace hetnet
