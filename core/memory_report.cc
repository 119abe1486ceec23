#include "core/memory_report.h"

#include <sstream>

#include "core/blob.h"
#include "core/checked_size.h"
#include "core/prepared_memory.h"
#include "core/tensor.h"
#include "core/workspace.h"

namespace hetnet {

namespace {

int64_t BytesOf(const TensorInfo& t) {
  if (!t.known || t.dtype == DataType::Undefined || t.dtype == DataType::String) return -1;
  try {  // inferred shapes of hostile nets may overflow: unknown then
    return CheckedNumel(t.dims, "inferred shape") * static_cast<int64_t>(ItemSize(t.dtype));
  } catch (const Error&) {
    return -1;
  }
}

Device OpDevice(const caffe2::OperatorDef& op, const caffe2::NetDef& net) {
  try {
    if (op.has_device_option()) return DeviceFromOption(op.device_option());
    if (net.has_device_option()) return DeviceFromOption(net.device_option());
  } catch (const Error&) {
  }
  return Device::CPU();
}

// `actual`: blob -> (info, device) known from a workspace (overrides inference).
MemoryReport Build(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& shapes,
                   const std::map<std::string, std::pair<TensorInfo, Device>>& actual,
                   const std::set<std::string>& params) {
  MemoryReport r;
  r.net_name = net.name();
  std::map<std::string, size_t> index;
  std::map<std::string, TensorInfo> cur;
  Device net_dev = Device::CPU();
  try {
    if (net.has_device_option()) net_dev = DeviceFromOption(net.device_option());
  } catch (const Error&) {
  }
  auto add = [&](const std::string& name, const TensorInfo& info, Device d, int producer, bool in_place) {
    auto a = actual.find(name);
    BlobMemory b;
    b.name = name;
    b.info = a != actual.end() ? a->second.first : info;
    b.device = a != actual.end() ? a->second.second : d;
    b.bytes = BytesOf(b.info);
    b.param = params.count(name) > 0;
    b.producer = producer;
    b.in_place = in_place;
    index[name] = r.blobs.size();
    r.blobs.push_back(b);
    cur[name] = b.info;
  };
  auto external = [&](const std::string& name) {
    if (index.count(name)) return;
    auto s = shapes.find(name);
    add(name, s != shapes.end() ? s->second : TensorInfo::Unknown(), net_dev, -1, false);
  };
  for (const auto& in : net.external_input()) external(in);
  for (int i = 0; i < net.op_size(); ++i) {
    const auto& op = net.op(i);
    for (const auto& in : op.input()) external(in);
    std::vector<TensorInfo> in_info;
    for (const auto& in : op.input()) in_info.push_back(cur[in]);
    std::vector<TensorInfo> out_info(op.output_size());
    const OpSchema* schema = OpSchemaRegistry::Find(op.type());
    const Device d = OpDevice(op, net);
    std::vector<Device> out_dev(op.output_size(), d);
    if (schema) {
      try {
        schema->Verify(op);
        out_info = schema->InferShapes(op, in_info);
        out_dev = schema->InferDevices(op, d).second;
      } catch (const Error&) {
        out_info.assign(op.output_size(), TensorInfo::Unknown());
      }
    }
    for (int k = 0; k < op.output_size(); ++k) {
      const std::string& name = op.output(k);
      bool in_place = false;
      for (const auto& in : op.input()) in_place = in_place || in == name;
      auto it = index.find(name);
      if (it != index.end()) {  // rewritten: one blob; keep the latest known shape
        BlobMemory& b = r.blobs[it->second];
        if (!actual.count(name) && out_info[k].known) {
          b.info = out_info[k];
          b.bytes = std::max(b.bytes, BytesOf(b.info));
        }
        cur[name] = b.info;
        continue;
      }
      add(name, out_info[k], k < static_cast<int>(out_dev.size()) ? out_dev[k] : d, i, in_place);
    }
  }
  for (const auto& b : r.blobs) {
    if (b.bytes < 0) {
      ++r.unknown;
      continue;
    }
    if (b.param) {
      r.param_bytes[b.device] += b.bytes;
      r.param_total += b.bytes;
    } else if (!b.in_place) {
      r.data_bytes[b.device] += b.bytes;
      r.data_total += b.bytes;
    }
  }
  return r;
}

}  // namespace

MemoryReport MemoryReportFromShapes(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& shapes,
                                    const std::set<std::string>& params) {
  return Build(net, shapes, {}, params);
}

MemoryReport MemoryReportFromWorkspace(const caffe2::NetDef& net, const Workspace& ws,
                                       const std::set<std::string>& params) {
  std::map<std::string, std::pair<TensorInfo, Device>> actual;
  std::map<std::string, TensorInfo> shapes;
  std::map<uint64_t, Device> storages;  // of the tensors found (id 0: no storage of its own, skipped)
  auto look = [&](const std::string& name) {
    const Blob* b = ws.GetBlob(name);
    if (!b || !b->IsTensor() || !b->GetTensor().initialized()) return;
    const Tensor& t = b->GetTensor();
    actual[name] = {TensorInfo::Of(t.shape(), t.dtype()), t.device()};
    shapes[name] = TensorInfo::Of(t.shape(), t.dtype());
    if (t.storage_id() != 0) storages.emplace(t.storage_id(), t.device());
  };
  for (const auto& in : net.external_input()) look(in);
  for (const auto& op : net.op()) {
    for (const auto& in : op.input()) look(in);
    for (const auto& out : op.output()) look(out);
  }
  MemoryReport r = Build(net, shapes, actual, params);
  // Each storage once (a weight read by several ops, or two blobs sharing one tensor's storage).
  const std::map<uint64_t, int64_t> prepared = PreparedBytesByStorage();
  for (const auto& [id, device] : storages) {
    auto it = prepared.find(id);
    if (it == prepared.end()) continue;
    r.prepared_bytes[device] += it->second;
    r.prepared_total += it->second;
  }
  return r;
}

std::string MemoryReport::ToText() const {
  std::ostringstream s;
  s << "memory of net '" << net_name << "':\n";
  for (const auto& b : blobs) {
    s << "  " << (b.param ? "param " : "top   ") << b.name << ": ";
    if (!b.info.known) {
      s << "shape unknown";
    } else {
      int64_t n = 1;
      for (int64_t d : b.info.dims) n *= d;
      s << DataTypeName(b.info.dtype) << ShapeToString(b.info.dims) << " (" << n << ") " << b.bytes << " bytes";
    }
    s << " on " << b.device.str();
    if (b.in_place) s << " [in place: adds nothing]";
    s << "\n";
  }
  for (const auto& [d, n] : param_bytes) s << "parameters on " << d.str() << ": " << n << " bytes\n";
  for (const auto& [d, n] : data_bytes) s << "data on " << d.str() << ": " << n << " bytes\n";
  s << "Memory required for data: " << data_total << " bytes";
  if (unknown) s << " (+ " << unknown << " blob(s) of unknown size)";
  s << "\nMemory required for parameters: " << param_total << " bytes\n";
  for (const auto& [d, n] : prepared_bytes)
    s << "prepared weight copies (packed, reordered) on " << d.str() << ": " << n << " bytes\n";
  if (prepared_total > 0) s << "Memory held by prepared weight copies: " << prepared_total << " bytes\n";
  return s.str();
}

}  // namespace hetnet
