// Placement rules, machine adjustments (CPU fallback, soft placement) and CrossDeviceCopyPass.
#include "core/placement.h"

#include <iostream>
#include <mutex>
#include <set>

#include "core/argument.h"
#include "core/auto_placement.h"
#include "core/checked_size.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace hetnet {

PlacementOptions& DefaultPlacementOptions() {
  static PlacementOptions opts;
  return opts;
}

namespace {

const char* CopyTypeFor(Device from, Device to) {
  if (from.is_cpu()) return "CopyCPUToGPU";
  if (to.is_cpu()) return "CopyGPUToCPU";
  return "Copy";
}
// Caffe2 placed CopyGPUToCPU under the source GPU, the others under the destination.
Device CopyOpDevice(Device from, Device to) { return to.is_cpu() ? from : to; }
std::string CopyName(const std::string& blob, Device to) {
  return to.is_cpu() ? blob + "_cpu" : MakeString(blob, "_gpu_", to.id);
}
// Bytes of an inferred shape; -1 when unknown or not a valid shape (checked: never wraps).
int64_t Bytes(const TensorInfo& t) {
  if (!t.known) return -1;
  try {
    return CheckedNumel(t.dims, "inferred shape") * static_cast<int64_t>(ItemSize(t.dtype));
  } catch (const Error&) {
    return -1;
  }
}

// Shape inference of hostile arguments may produce shapes no tensor can have (negative dims,
// products that overflow): such a shape is dropped (unknown), the kernel reports the error.
bool ValidShape(const TensorInfo& t) {
  if (!t.known) return false;
  try {
    CheckedNumel(t.dims, "inferred shape");
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Walks the ops in order, tracking where the latest value of every blob lives.
class CopyPass {
 public:
  CopyPass(const caffe2::NetDef& net, const std::map<std::string, Device>& input_devices,
           const std::map<std::string, TensorInfo>& input_shapes, std::vector<std::string> reasons)
      : in_(net), reasons_(std::move(reasons)) {
    const Device net_dev = net.has_device_option() ? DeviceFromOption(net.device_option()) : Device::CPU();
    for (const auto& name : net.external_input()) {
      auto it = input_devices.find(name);
      dev_[name] = it != input_devices.end() ? it->second : net_dev;
    }
    for (const auto& [name, d] : input_devices) dev_.emplace(name, d);
    for (const auto& [name, s] : input_shapes) shape_[name] = s;
    out_.net = net;
    out_.net.clear_op();
    out_.report.net_name = net.name();
  }

  CopyPassResult Run() {
    for (int i = 0; i < in_.op_size(); ++i) Visit(i, in_.op(i));
    // Leave every blob name holding its latest value (an in-place update on another device).
    std::vector<std::pair<std::string, std::string>> moved;
    for (const auto& [logical, phys] : latest_)
      if (phys != logical && dev_.count(logical)) moved.emplace_back(logical, phys);
    for (const auto& [logical, phys] : moved) EmitCopy(logical, phys, logical, dev_[phys], dev_[logical]);
    out_.blob_devices = dev_;
    out_.blob_shapes = shape_;
    out_.report.placed_net = out_.net;
    return std::move(out_);
  }

 private:
  std::string Latest(const std::string& name) const {
    auto it = latest_.find(name);
    return it == latest_.end() ? name : it->second;
  }

  void Visit(int index, caffe2::OperatorDef op) {
    const Device d = DeviceFromOption(op.device_option());
    const OpSchema* schema = OpSchemaRegistry::Find(op.type());
    if (schema) {
      try {
        schema->Verify(op);  // counts and in-place rules, before anything indexes the inputs
      } catch (Error& e) {
        throw e.AddContext(MakeString("operator #", index, " (", op.type(), ")"));
      }
    }
    auto [in_need, out_need] = schema ? schema->InferDevices(op, d)
                                      : std::make_pair(std::vector<Device>(op.input_size(), d),
                                                       std::vector<Device>(op.output_size(), d));
    // A GPU Copy reads from any GPU: it is the copy.
    const bool gpu_copy = op.type() == "Copy" && !d.is_cpu();
    for (int k = 0; k < op.input_size(); ++k) {
      const std::string name = op.input(k);
      const std::string phys = Latest(name);
      auto have = dev_.find(phys);
      if (have == dev_.end()) {  // unknown origin (e.g. already in the workspace): assume it is where needed
        op.set_input(k, phys);
        continue;
      }
      if (gpu_copy && !have->second.is_cpu()) in_need[k] = have->second;
      op.set_input(k, have->second == in_need[k] ? phys : CopyFor(name, phys, have->second, in_need[k]));
    }
    std::set<std::string> logical_reads(in_.op(index).input().begin(), in_.op(index).input().end());
    for (int k = 0; k < op.output_size(); ++k) {
      const std::string name = op.output(k);
      const std::string phys = Latest(name);
      std::string target = name;
      auto live = dev_.find(phys);
      if (live != dev_.end() && live->second != out_need[k]) {
        // The blob's latest value lives elsewhere: only an op that reads it may update it.
        if (!logical_reads.count(name))
          HN_THROW(kInvalidArgument, "operator #", index, " (", op.type(), ") on ", d.str(), " overwrites blob '",
                   name, "', which lives on ", live->second.str(),
                   ", without reading it; give the output another name or place the operator on ",
                   live->second.str());
        target = op.input(IndexOf(in_.op(index), name));  // in place on the copy it read
      } else if (live != dev_.end()) {
        target = phys;
      }
      op.set_output(k, target);
      dev_[target] = out_need[k];
      if (target != name || latest_.count(name)) latest_[name] = target;
      auto& copies = cache_[name];  // older copies of the blob are stale now
      copies.clear();
      copies[out_need[k]] = target;
    }
    Emit(op, reasons_[index], schema);
  }

  static int IndexOf(const caffe2::OperatorDef& op, const std::string& input) {
    for (int k = 0; k < op.input_size(); ++k)
      if (op.input(k) == input) return k;
    return 0;
  }

  std::string CopyFor(const std::string& name, const std::string& phys, Device from, Device to) {
    auto it = cache_.find(name);
    if (it != cache_.end()) {
      auto copy = it->second.find(to);
      if (copy != it->second.end()) return copy->second;
    }
    // Copying back to the blob's own device refreshes the blob itself.
    const std::string dst = (dev_.count(name) && dev_[name] == to && phys != name) ? name : CopyName(name, to);
    EmitCopy(name, phys, dst, from, to);
    cache_[name][to] = dst;
    return dst;
  }

  void EmitCopy(const std::string& logical, const std::string& src, const std::string& dst, Device from, Device to) {
    caffe2::OperatorDef copy;
    copy.set_type(CopyTypeFor(from, to));
    copy.set_name("");
    copy.add_input(src);
    copy.add_output(dst);
    DeviceToOption(CopyOpDevice(from, to), copy.mutable_device_option());
    dev_[dst] = to;
    if (dst == logical) latest_.erase(logical);
    CopyInfo info;
    info.op_index = out_.net.op_size();
    info.type = copy.type();
    info.src_blob = src;
    info.dst_blob = dst;
    info.from = from;
    info.to = to;
    auto s = shape_.find(src);
    if (s != shape_.end()) info.bytes = Bytes(s->second);
    out_.report.copies.push_back(info);
    Emit(copy, "inserted copy", OpSchemaRegistry::Find(copy.type()));
  }

  void Emit(const caffe2::OperatorDef& op, const std::string& reason, const OpSchema* schema) {
    if (schema && schema->HasShapeInference()) {
      std::vector<TensorInfo> in;
      for (const auto& name : op.input()) {
        auto it = shape_.find(name);
        in.push_back(it == shape_.end() ? TensorInfo::Unknown() : it->second);
      }
      try {
        auto out = schema->InferShapes(op, in);
        for (int k = 0; k < op.output_size(); ++k)
          if (ValidShape(out[k])) shape_[op.output(k)] = out[k]; else shape_.erase(op.output(k));
      } catch (const Error&) {  // bad shapes are reported by the kernel, with context
        for (const auto& o : op.output()) shape_.erase(o);
      }
    } else {
      for (const auto& o : op.output()) shape_.erase(o);
    }
    OpPlacement p;
    p.index = out_.net.op_size();
    p.type = op.type();
    p.device = DeviceFromOption(op.device_option());
    p.engine = ResolveEngine(op, p.device);
    p.reason = reason;
    out_.report.ops.push_back(p);
    *out_.net.add_op() = op;
  }

  const caffe2::NetDef& in_;
  std::vector<std::string> reasons_;
  CopyPassResult out_;
  std::map<std::string, Device> dev_;             // physical blob -> device
  std::map<std::string, std::string> latest_;     // blob -> physical name of its latest value
  // blob -> (device -> copy holding it); by blob so that invalidating one blob's copies is not a
  // scan over every blob's (that made net creation quadratic in the number of blobs)
  std::map<std::string, std::map<Device, std::string>> cache_;
  std::map<std::string, TensorInfo> shape_;
};

// Placement rules: the op's own option, else the net's, else CPU. Ops get the net's option written
// in, so the rewritten net says where every op runs.
std::vector<std::string> ResolveDevices(caffe2::NetDef* net) {
  std::vector<std::string> reasons;
  for (int i = 0; i < net->op_size(); ++i) {
    auto& op = *net->mutable_op(i);
    if (op.has_device_option()) {
      reasons.push_back("own device option");
    } else if (net->has_device_option()) {
      *op.mutable_device_option() = net->device_option();
      reasons.push_back("net device option");
    } else {
      reasons.push_back("default (CPU)");
    }
    try {
      DeviceFromOption(op.device_option());  // unknown device types fail here
    } catch (Error& e) {
      throw e.AddContext(MakeString("operator #", i, " (", op.type(), ") of net '", net->name(), "'"));
    }
  }
  return reasons;
}

void SayFallbackOnce(const std::string& type) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (said.insert(type).second)
    std::cerr << "hetnet: operator type '" << type
              << "' has no CUDA kernel; its CPU kernel runs for ops placed on GPUs (copies inserted)\n";
}

}  // namespace

CopyPassResult CrossDeviceCopyPass(const caffe2::NetDef& net, const std::map<std::string, Device>& input_devices,
                                   const std::map<std::string, TensorInfo>& input_shapes) {
  caffe2::NetDef resolved = net;
  auto reasons = ResolveDevices(&resolved);
  return CopyPass(resolved, input_devices, input_shapes, std::move(reasons)).Run();
}

CopyPassResult PlaceNetWith(const caffe2::NetDef& def, const std::map<std::string, Device>& input_devices,
                            const std::map<std::string, TensorInfo>& input_shapes, const PlacementOptions& opts,
                            int gpu_count, const std::function<bool(const std::string&)>& has_cuda_kernel) {
  caffe2::NetDef net = def;
  ArgumentHelper net_args(def);
  const bool strict = opts.strict || net_args.GetSingleArgument<int>("strict_placement", 0) != 0;
  const bool soft = opts.soft_placement || net_args.GetSingleArgument<int>("soft_placement", 0) != 0;
  std::vector<std::string> reasons = ResolveDevices(&net);
  std::string missing_gpu, no_kernel;
  for (int i = 0; i < net.op_size(); ++i) {
    auto& op = *net.mutable_op(i);
    const Device d = DeviceFromOption(op.device_option());
    if (d.is_cpu()) continue;
    if (d.id >= gpu_count) {
      if (soft) {
        DeviceToOption(Device::CPU(), op.mutable_device_option());
        reasons[i] = MakeString("soft placement (", d.str(), " not available)");
      } else {
        missing_gpu += MakeString("\n    #", i, " ", op.type(), " on ", d.str());
      }
    } else if (!has_cuda_kernel(op.type())) {
      const OpSchema* schema = OpSchemaRegistry::Find(op.type());
      const bool can_fallback = OperatorRegistry::Has(op.type(), DeviceType::CPU) && (!schema || schema->allows_cpu_fallback());
      if (strict || !can_fallback) {
        no_kernel += MakeString("\n    #", i, " ", op.type(), " on ", d.str());
      } else {
        SayFallbackOnce(op.type());
        DeviceToOption(Device::CPU(), op.mutable_device_option());
        reasons[i] = MakeString("CPU fallback (no CUDA kernel for ", d.str(), ")");
      }
    }
  }
  if (!missing_gpu.empty())
    HN_THROW(kUnsupported, "net '", def.name(), "' places operators on GPUs this machine does not have (it has ",
             gpu_count, " CUDA device(s)):", missing_gpu,
             "\n  set the net argument soft_placement=1 (or the runtime's soft-placement option) to run them on CPU");
  if (!no_kernel.empty())
    HN_THROW(kUnsupported, "net '", def.name(), "' places operators on GPUs that have no CUDA kernel",
             strict ? " and strict placement forbids the CPU fallback" : " and no usable CPU kernel", ":", no_kernel);
  // Soft placement: inputs said to be on a GPU this machine lacks (the net's device, or where they
  // were to be fed) can only be on the CPU.
  std::map<std::string, Device> inputs = input_devices;
  auto missing = [&](const Device& d) { return !d.is_cpu() && d.id >= gpu_count; };
  if (soft) {
    if (net.has_device_option() && missing(DeviceFromOption(net.device_option())))
      DeviceToOption(Device::CPU(), net.mutable_device_option());
    for (auto& [name, d] : inputs)
      if (missing(d)) d = Device::CPU();
  }
  return CopyPass(net, inputs, input_shapes, std::move(reasons)).Run();
}

void ExternalInputsFromWorkspace(const caffe2::NetDef& def, const Workspace& ws,
                                 std::map<std::string, Device>* devices, std::map<std::string, TensorInfo>* shapes) {
  std::set<std::string> produced;  // only blobs read before the net writes them come from the workspace
  for (const auto& op : def.op()) {
    for (const auto& name : op.input()) {
      const Blob* b = produced.count(name) ? nullptr : ws.GetBlob(name);
      if (!b || !b->IsTensor() || !b->GetTensor().initialized()) continue;
      const Tensor& t = b->GetTensor();
      (*devices)[name] = t.device();
      (*shapes)[name] = TensorInfo::Of(t.shape(), t.dtype());
    }
    produced.insert(op.output().begin(), op.output().end());
  }
}

CopyPassResult PlaceNet(const caffe2::NetDef& def, const Workspace& ws, const PlacementOptions& opts,
                        const std::map<std::string, Device>& fed_input_devices) {
  std::map<std::string, Device> devices;
  std::map<std::string, TensorInfo> shapes;
  ExternalInputsFromWorkspace(def, ws, &devices, &shapes);
  for (const auto& [name, device] : fed_input_devices) devices.emplace(name, device);  // data wins
  auto has_kernel = [](const std::string& type) { return !OperatorRegistry::Engines(type, DeviceType::CUDA).empty(); };
  AutoPlacementResult automatic;  // net argument placement="auto" (core/auto_placement.h)
  if (!MaybeAutoPlace(def, devices, shapes, NumCudaDevices(), &automatic))
    return PlaceNetWith(def, devices, shapes, opts, NumCudaDevices(), has_kernel);
  CopyPassResult placed = PlaceNetWith(automatic.net, devices, shapes, opts, NumCudaDevices(), has_kernel);
  AnnotateAutoPlacement(automatic, &placed.report);
  return placed;
}

int PlannedGpuCount(const std::vector<std::string>& devices) {
  const char* expected = " (expected cpu or cuda:N, e.g. cpu,cuda:0,cuda:1)";
  if (devices.empty()) HN_THROW(kInvalidArgument, "the device list is empty", expected);
  std::set<std::string> seen;
  std::set<int> gpus;
  for (const auto& name : devices) {
    if (name.empty()) HN_THROW(kInvalidArgument, "empty device name in the device list", expected);
    if (!seen.insert(name).second) HN_THROW(kInvalidArgument, "device '", name, "' is listed twice");
    if (name == "cpu") continue;
    const std::string digits = name.rfind("cuda:", 0) == 0 ? name.substr(5) : "";
    const bool number = !digits.empty() && digits.size() <= 4 &&
                        digits.find_first_not_of("0123456789") == std::string::npos &&
                        (digits.size() == 1 || digits[0] != '0');
    if (!number) HN_THROW(kInvalidArgument, "unknown device '", name, "'", expected);
    gpus.insert(std::stoi(digits));
  }
  const int count = static_cast<int>(gpus.size());
  if (count && *gpus.rbegin() != count - 1) {
    int missing = 0;
    while (gpus.count(missing)) ++missing;
    HN_THROW(kInvalidArgument, "the device list has cuda:", *gpus.rbegin(), " but not cuda:", missing,
             "; a machine numbers its GPUs from 0 without gaps (CUDA_VISIBLE_DEVICES renumbers them too)");
  }
  return count;
}

CopyPassResult PlanPlacement(const caffe2::NetDef& def, const std::vector<std::string>& devices,
                             const std::map<std::string, Device>& input_devices,
                             const std::map<std::string, TensorInfo>& input_shapes, const PlacementOptions& opts) {
  const int gpu_count = PlannedGpuCount(devices);
  std::string list = "cpu";
  for (int i = 0; i < gpu_count; ++i) list += MakeString(", cuda:", i);
  const bool registry = HasCudaSupport();  // a CPU-only build registers no CUDA kernels at all
  auto has_kernel = [registry](const std::string& type) {
    return !registry || !OperatorRegistry::Engines(type, DeviceType::CUDA).empty();
  };
  try {
    return PlaceNetWith(def, input_devices, input_shapes, opts, gpu_count, has_kernel);
  } catch (Error& e) {
    throw e.AddContext(MakeString("(planned offline for a machine with ", list, "; nothing was run)"));
  }
}

}  // namespace hetnet
