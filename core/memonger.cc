#include "core/memonger.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <vector>

#include "core/checked_size.h"
#include "core/placement.h"

namespace hetnet {

namespace {

int64_t Bytes(const TensorInfo& t) {
  if (!t.known) return -1;
  try {  // inferred shapes of hostile nets may overflow: unknown then
    return CheckedNumel(t.dims, "inferred shape") * static_cast<int64_t>(ItemSize(t.dtype));
  } catch (const Error&) {
    return -1;
  }
}

std::string Mib(int64_t b) {
  if (b < 0) return "unknown";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(3);
  s << b / 1048576.0 << " MiB";
  return s.str();
}

struct Lifetime {
  int first = -1, last = -1;  // op indices of first write and last use
};

struct Buffer {
  std::string name;
  Device device;
  int64_t bytes = 0;  // the largest blob assigned so far (-1: some size unknown)
};

}  // namespace

std::map<std::string, TensorInfo> InferBlobShapes(const caffe2::NetDef& net, std::map<std::string, TensorInfo> known) {
  for (const auto& op : net.op()) {
    const OpSchema* schema = OpSchemaRegistry::Find(op.type());
    std::vector<TensorInfo> in;
    for (const auto& name : op.input()) {
      auto it = known.find(name);
      in.push_back(it == known.end() ? TensorInfo::Unknown() : it->second);
    }
    std::vector<TensorInfo> out;
    if (schema && schema->HasShapeInference()) {
      try {
        out = schema->InferShapes(op, in);
      } catch (const Error&) {
        out.clear();  // inconsistent shapes: the net will say so when it runs
      }
    }
    for (int k = 0; k < op.output_size(); ++k) {
      if (k < static_cast<int>(out.size()) && out[k].known) known[op.output(k)] = out[k];
      else known.erase(op.output(k));
    }
  }
  return known;
}

OptimizedNet OptimizeInferenceNet(const caffe2::NetDef& net, const MemongerOptions& options) {
  CopyPassResult placed = CrossDeviceCopyPass(net, options.input_devices, options.input_shapes);
  caffe2::NetDef& def = placed.net;
  const std::set<std::string> external_in(def.external_input().begin(), def.external_input().end());
  const std::set<std::string> external_out(def.external_output().begin(), def.external_output().end());

  // Lifetimes of blobs the net writes before anything reads them, in op order.
  std::map<std::string, Lifetime> life;
  std::set<std::string> keep(external_in.begin(), external_in.end());
  keep.insert(external_out.begin(), external_out.end());
  for (int i = 0; i < def.op_size(); ++i) {
    const auto& op = def.op(i);
    std::vector<std::string> reads(op.input().begin(), op.input().end());
    reads.insert(reads.end(), op.control_input().begin(), op.control_input().end());
    for (const auto& b : reads) {
      auto it = life.find(b);
      if (it == life.end()) keep.insert(b);  // comes from the workspace
      else it->second.last = i;
    }
    for (const auto& b : op.output()) {
      auto& l = life[b];
      if (l.first < 0) l.first = i;
      l.last = i;
    }
  }
  for (const auto& b : keep) life.erase(b);

  // Greedy assignment in op order: a blob takes a free buffer of its device (the smallest that
  // holds it, else the largest) released strictly before its first write, so no op ever finds one
  // of its outputs aliasing an input it did not ask to be in place with.
  const auto shapes = InferBlobShapes(def, options.input_shapes);
  auto size_of = [&](const std::string& b) {
    auto it = shapes.find(b);
    return it == shapes.end() ? int64_t{-1} : Bytes(it->second);
  };
  std::vector<Buffer> buffers;
  std::vector<int> free_buffers;
  std::map<std::string, int> assigned;
  std::vector<std::vector<std::string>> dies_at(def.op_size());
  for (const auto& [b, l] : life) dies_at[l.last].push_back(b);
  MemongerReport report;
  report.net_name = def.name();
  report.intermediate_blobs = static_cast<int>(life.size());
  int64_t before = 0;
  for (int i = 0; i < def.op_size(); ++i) {
    for (const auto& b : def.op(i).output()) {
      auto l = life.find(b);
      if (l == life.end() || l->second.first != i || assigned.count(b)) continue;
      const Device dev = placed.blob_devices.count(b) ? placed.blob_devices.at(b) : Device::CPU();
      const int64_t bytes = size_of(b);
      before = (before < 0 || bytes < 0) ? -1 : before + bytes;
      int best = -1;
      for (int k : free_buffers) {
        if (buffers[k].device != dev) continue;
        const bool fits = bytes >= 0 && buffers[k].bytes >= bytes;
        const bool best_fits = best >= 0 && bytes >= 0 && buffers[best].bytes >= bytes;
        if (best < 0 || (fits && (!best_fits || buffers[k].bytes < buffers[best].bytes)) ||
            (!fits && !best_fits && buffers[k].bytes > buffers[best].bytes))
          best = k;
      }
      if (best < 0) {
        best = static_cast<int>(buffers.size());
        buffers.push_back({"__m" + std::to_string(best) + "_shared", dev, 0});
      } else {
        free_buffers.erase(std::find(free_buffers.begin(), free_buffers.end(), best));
      }
      Buffer& buf = buffers[best];
      buf.bytes = (buf.bytes < 0 || bytes < 0) ? -1 : std::max(buf.bytes, bytes);
      assigned[b] = best;
    }
    for (const auto& b : dies_at[i]) free_buffers.push_back(assigned.at(b));
  }

  // Rename every use; a buffer used by one blob only keeps that blob's name.
  std::map<int, int> users;
  for (const auto& kv : assigned) ++users[kv.second];
  auto rename = [&](std::string* name) {
    auto it = assigned.find(*name);
    if (it == assigned.end() || users[it->second] < 2) return;
    report.renamed[*name] = buffers[it->second].name;
    *name = buffers[it->second].name;
  };
  for (auto& op : *def.mutable_op()) {
    for (auto& n : *op.mutable_input()) rename(&n);
    for (auto& n : *op.mutable_output()) rename(&n);
    for (auto& n : *op.mutable_control_input()) rename(&n);
  }

  report.shared_buffers = static_cast<int>(buffers.size());
  report.intermediate_bytes_before = before;
  int64_t after = 0;
  for (const auto& b : buffers) after = (after < 0 || b.bytes < 0) ? -1 : after + b.bytes;
  report.intermediate_bytes_after = after;
  int64_t ext = 0;
  for (const auto& b : keep) {
    const int64_t n = size_of(b);
    ext = (ext < 0 || n < 0) ? -1 : ext + n;
  }
  report.external_bytes = ext;
  return {std::move(def), std::move(report)};
}

int64_t MemongerReport::PeakBefore() const {
  return external_bytes < 0 || intermediate_bytes_before < 0 ? -1 : external_bytes + intermediate_bytes_before;
}
int64_t MemongerReport::PeakAfter() const {
  return external_bytes < 0 || intermediate_bytes_after < 0 ? -1 : external_bytes + intermediate_bytes_after;
}

std::string MemongerReport::ToText() const {
  std::ostringstream s;
  s << "memonger on net '" << net_name << "': " << intermediate_blobs << " intermediate blobs in " << shared_buffers
    << " buffers (" << renamed.size() << " blobs renamed)\n";
  s << "  intermediates: " << Mib(intermediate_bytes_before) << " without, " << Mib(intermediate_bytes_after)
    << " with the plan";
  if (intermediate_bytes_before > 0 && intermediate_bytes_after >= 0)
    s << " (" << static_cast<double>(intermediate_bytes_after) / intermediate_bytes_before << "x)";
  s << "\n  inputs, weights, outputs (not shared): " << Mib(external_bytes) << "\n  peak: " << Mib(PeakBefore())
    << " without, " << Mib(PeakAfter()) << " with the plan";
  if (PeakBefore() > 0 && PeakAfter() >= 0) s << " (" << static_cast<double>(PeakAfter()) / PeakBefore() << "x)";
  s << "\n";
  return s.str();
}

}  // namespace hetnet
