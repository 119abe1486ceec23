// `hetnet inspect`: a NetDef as text (one line per op), and optionally its placement report.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "core/auto_placement.h"
#include "core/device.h"
#include "core/inference_fusion.h"
#include "core/memonger.h"
#include "core/memory_report.h"
#include "core/placement.h"
#include "core/proto_io.h"
#include "core/reduced_precision.h"
#include "core/types.h"
#include "core/workspace.h"
#include "tools/cli_common.h"

namespace hetnet_cli {

const char* const kInspectHelp =
    "usage: hetnet inspect NET [--init INIT_NET] [--placement [--devices LIST]] [--dot] [--svg FILE] [--memory [--precision P]]\n"
    "                      [--shape NAME=D0,D1,...]... [--auto [--profile-file P] [--objective O]]\n"
    "\n"
    "Prints NET's name, type, one line per operator (index, type, device, engine, inputs -> outputs)\n"
    "and its external inputs and outputs. NET is a NetDef file, binary or text format, or an ONNX\n"
    "model (*.onnx), imported: its init net stands for --init.\n"
    "  --init FILE    run this init net first so weights' devices and shapes are known (with\n"
    "                 --devices it is planned on those devices instead, not run)\n"
    "  --placement    also print where each operator runs and the cross-device copies hetnet inserts\n"
    "  --dot          print the placement as a Graphviz graph instead of text (ops coloured by device,\n"
    "                 copies as red edges across device boundaries, with bytes per run)\n"
    "  --svg FILE     write that graph as SVG (needs Graphviz's `dot`)\n"
    "  --devices LIST plan the placement for a machine with these devices instead of this one, e.g.\n"
    "                 cpu,cuda:0,cuda:1 (the CPU is always there; GPUs are numbered from 0): nothing\n"
    "                 runs and no GPU is needed; --init is planned on the same devices, not run, and\n"
    "                 copy bytes come from shape inference (--shape gives external inputs' shapes);\n"
    "                 implies --placement\n"
    "  --memory       each blob's shape and bytes, parameters per device and the memory required for\n"
    "                 data (Caffe's count: in-place outputs add nothing); parameters are the init net's\n"
    "                 outputs, input shapes come from --shape and the init net (ONNX: and the\n"
    "                 model's declared input shapes)\n"
    "  --precision P  with --memory: the net a Predictor runs (rewritten for inference) in precision\n"
    "                 P (float32, bfloat16, float16: `hetnet run --precision`), weights converted;\n"
    "                 needs the weights (--init, or an ONNX model)\n"
    "  --shape NAME=D0,D1,...[:TYPE]  an external input's shape and element type (default float32,\n"
    "                 e.g. label=16:int32), for --memory and --devices\n"
    "  --auto         choose every unpinned operator's device from predicted costs (cost-based\n"
    "                 placement, docs/auto_placement.md) and print why; with --devices, for that\n"
    "                 machine (nothing runs, no GPU needed); implies --placement\n"
    "  --profile-file P  the target machine's device profile (JSON from `hetnet calibrate`) for --auto;\n"
    "                 default $HETNET_DEVICE_PROFILE, else rough built-in constants\n"
    "  --objective O  latency (default: one run) or throughput (busiest device per run) for --auto\n"
    "  -h, --help     this help\n"
    "placement:\n";

namespace {

// The device an op runs on, as written in the net (own option, else the net's, else CPU). Never
// throws: inspect must describe nets that cannot run here.
std::string DeviceText(const caffe2::OperatorDef& op, const caffe2::NetDef& net) {
  const caffe2::DeviceOption* opt =
      op.has_device_option() ? &op.device_option() : net.has_device_option() ? &net.device_option() : nullptr;
  if (!opt || opt->device_type() == 0) return "cpu";
  if (opt->device_type() == 1) return "cuda:" + std::to_string(opt->device_id());
  return std::string(hetnet::DeviceTypeName(opt->device_type())) + "(type " + std::to_string(opt->device_type()) +
         "):" + std::to_string(opt->device_id()) + " [unsupported]";
}

std::string Join(const google::protobuf::RepeatedPtrField<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// "cpu,cuda:0" -> {"cpu", "cuda:0"} (spaces around names ignored); the names are checked by
// hetnet::PlannedGpuCount.
std::vector<std::string> SplitDeviceList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
  }
  if (!list.empty() && list.back() == ',') out.push_back("");
  return out;
}

std::map<std::string, hetnet::TensorInfo> ParseShapeFlags(const std::vector<std::string>& flags) {
  std::map<std::string, hetnet::TensorInfo> shapes;
  for (const auto& f : flags) {
    const size_t eq = f.find('=');
    if (eq == std::string::npos) throw UsageError("--shape wants NAME=D0,D1,..., got '" + f + "'");
    std::string value = f.substr(eq + 1);
    hetnet::DataType dtype = hetnet::DataType::Float;
    const size_t colon = value.rfind(':');
    if (colon != std::string::npos) {  // NAME=D0,D1:int32
      const std::string type_name = value.substr(colon + 1);
      value.resize(colon);
      bool found = false;
      std::string known;
      for (int v = 1; v <= 103; ++v) {  // Caffe2's numbers, then hetnet's own (uint32, uint64, bfloat16)
        if (!hetnet::IsKnownDataType(v) || v == static_cast<int>(hetnet::DataType::String)) continue;
        const auto t = static_cast<hetnet::DataType>(v);
        known += std::string(known.empty() ? "" : ", ") + hetnet::DataTypeName(t);
        if (type_name == hetnet::DataTypeName(t)) dtype = t, found = true;
      }
      if (!found) throw UsageError("--shape '" + f + "': unknown element type '" + type_name + "' (" + known + ")");
    }
    std::vector<int64_t> dims;
    std::stringstream ds(value);
    for (std::string d; std::getline(ds, d, ',');) {
      try {
        dims.push_back(std::stoll(d));
      } catch (const std::exception&) {
        throw UsageError("--shape: bad dimension '" + d + "' in '" + f + "'");
      }
    }
    shapes[f.substr(0, eq)] = hetnet::TensorInfo::Of(dims, dtype);
  }
  return shapes;
}

// Offline plan: the init net (if any) is planned on the same devices, not run; its outputs' planned
// devices and inferred shapes, then --shape, describe the net's external inputs.
hetnet::CopyPassResult PlanOffline(const caffe2::NetDef& net, const caffe2::NetDef* init,
                                   const std::vector<std::string>& devices,
                                   const std::map<std::string, hetnet::TensorInfo>& flag_shapes) {
  std::map<std::string, hetnet::Device> input_devices;
  std::map<std::string, hetnet::TensorInfo> input_shapes;
  const hetnet::PlacementOptions& opts = hetnet::DefaultPlacementOptions();
  if (init) {
    hetnet::CopyPassResult planned;
    try {
      planned = hetnet::PlanPlacement(*init, devices, {}, {}, opts);
    } catch (hetnet::Error& e) {
      throw e.AddContext("in the init net '" + init->name() + "'");
    }
    for (const auto& op : init->op())
      for (const auto& name : op.output()) {
        auto d = planned.blob_devices.find(name);
        if (d != planned.blob_devices.end()) input_devices[name] = d->second;
        auto s = planned.blob_shapes.find(name);
        if (s != planned.blob_shapes.end()) input_shapes[name] = s->second;
      }
  }
  for (const auto& [name, info] : flag_shapes) input_shapes[name] = info;
  return hetnet::PlanPlacement(net, devices, input_devices, input_shapes, opts);
}

// --auto: the profile (file, $HETNET_DEVICE_PROFILE, else built-in constants for `devices` or this
// machine), shapes from the net, the init net's fills and --shape; the init net's outputs are
// weights, the other blobs read first are data.
hetnet::AutoPlacementResult AutoPlanOffline(const caffe2::NetDef& net, const caffe2::NetDef* init,
                                            std::vector<std::string>* devices, bool have_devices,
                                            const std::string& profile_path, const std::string& objective,
                                            std::map<std::string, hetnet::TensorInfo> shapes) {
  const hetnet::DeviceProfile profile =
      !profile_path.empty() ? hetnet::DeviceProfile::Load(profile_path)
                            : hetnet::ProfileFromEnvironment(have_devices ? hetnet::PlannedGpuCount(*devices)
                                                                          : hetnet::NumCudaDevices());
  hetnet::AutoPlacementOptions options;
  if (objective == "throughput") options.objective = hetnet::AutoPlacementOptions::Objective::kThroughput;
  else if (objective != "latency") throw UsageError("--objective is latency or throughput, got '" + objective + "'");
  if (have_devices) {
    options.devices = hetnet::ParseDeviceList(*devices);
  } else {
    *devices = {"cpu"};
    for (const auto& caps : profile.devices)
      if (caps.name != "cpu") devices->push_back(caps.name);
  }
  if (init) {
    std::set<std::string> weights;
    for (const auto& op : init->op()) weights.insert(op.output().begin(), op.output().end());
    for (const auto& [name, info] : hetnet::InferBlobShapes(*init)) shapes.emplace(name, info);
    std::set<std::string> written;
    for (const auto& op : net.op()) {
      for (const auto& in : op.input())
        if (!written.count(in) && !weights.count(in)) options.data_inputs.insert(in);
      written.insert(op.output().begin(), op.output().end());
    }
  }
  return hetnet::AutoPlace(net, shapes, profile, options);
}

}  // namespace

std::string DescribeNet(const caffe2::NetDef& net) {
  std::ostringstream s;
  s << "net '" << net.name() << "'  type: " << (net.type().empty() ? "simple (default)" : net.type());
  if (net.num_workers()) s << "  num_workers: " << net.num_workers();
  s << "  operators: " << net.op_size() << "\n";
  for (int i = 0; i < net.op_size(); ++i) {
    const auto& op = net.op(i);
    s << "  #" << i << " " << op.type();
    if (!op.name().empty()) s << " '" << op.name() << "'";
    s << "  device=" << DeviceText(op, net) << "  engine=" << (op.engine().empty() ? "default" : op.engine())
      << "  " << Join(op.input()) << " -> " << Join(op.output()) << "\n";
  }
  s << "external inputs: " << Join(net.external_input()) << "\n";
  s << "external outputs: " << Join(net.external_output()) << "\n";
  return s.str();
}

int InspectCommand(int argc, char** argv) {
  ArgReader args(argc, argv, 1);
  std::string net_path, init_path, onnx_device;
  bool placement = false, dot = false, memory = false;
  std::string svg_path, devices_flag;
  bool have_devices = false, automatic = false;
  std::string profile_path, objective = "latency";
  std::vector<std::string> shape_flags;
  std::string shape_flag, precision_flag;
  while (!args.Done()) {
    if (args.Switch("--help") || args.Switch("-h")) {
      std::cout << kInspectHelp << kPlacementHelp << kOnnxHelp;
      return kExitOk;
    } else if (PlacementSwitch(args)) {
    } else if (args.Flag("--svg", &svg_path)) {
    } else if (args.Flag("--devices", &devices_flag)) {
      have_devices = true;
    } else if (args.Switch("--auto")) {
      automatic = true;
    } else if (args.Flag("--profile-file", &profile_path) || args.Flag("--objective", &objective)) {
    } else if (args.Switch("--placement")) {
      placement = true;
    } else if (args.Switch("--dot")) {
      dot = true;
    } else if (args.Switch("--memory")) {
      memory = true;
    } else if (args.Flag("--precision", &precision_flag)) {
    } else if (args.Flag("--init", &init_path) || args.Flag("--device", &onnx_device)) {
    } else if (args.Flag("--shape", &shape_flag)) {
      shape_flags.push_back(shape_flag);
    } else if (args.Peek().rfind("-", 0) == 0) {
      throw UsageError("unknown option '" + args.Peek() + "' for inspect");
    } else if (net_path.empty()) {
      net_path = args.Next();
    } else {
      throw UsageError("inspect takes one net file, got '" + net_path + "' and '" + args.Peek() + "'");
    }
  }
  if (net_path.empty()) throw UsageError("inspect needs a NET file");
  std::vector<std::string> devices;
  if (have_devices) {
    devices = SplitDeviceList(devices_flag);
    try {
      hetnet::PlannedGpuCount(devices);
    } catch (const hetnet::Error& e) {
      throw UsageError("--devices '" + devices_flag + "': " + e.message());
    }
    if (!dot && svg_path.empty()) placement = true;
  }
  if (!automatic && !profile_path.empty()) throw UsageError("--profile-file is for --auto");
  if (!precision_flag.empty() && !memory) throw UsageError("--precision is for --memory");
  if (automatic && !dot && svg_path.empty()) placement = true;
  const ModelNets nets = LoadModelNets(net_path, init_path, onnx_device);
  const caffe2::NetDef& net = nets.predict;
  const caffe2::NetDef* init = nets.has_init ? &nets.init : nullptr;
  for (const auto& arg : net.arg())  // a placement="auto" net planned for another machine: plan it auto too
    if (have_devices && arg.name() == "placement" && arg.s() == "auto") automatic = true;
  if (!dot) std::cout << DescribeNet(net);
  if (placement || dot || !svg_path.empty()) {
    hetnet::CopyPassResult placed;
    if (automatic) {
      std::map<std::string, hetnet::TensorInfo> shapes = nets.input_shapes;
      for (const auto& [name, info] : ParseShapeFlags(shape_flags)) shapes[name] = info;
      const auto planned = AutoPlanOffline(net, init, &devices, have_devices, profile_path, objective, shapes);
      placed = hetnet::PlanAutoPlaced(planned, devices, shapes, hetnet::DefaultPlacementOptions());
      if (!dot) std::cout << planned.ToText();
    } else if (have_devices) {
      const int gpus = hetnet::PlannedGpuCount(devices);
      if (gpus > 0 && !hetnet::HasCudaSupport())
        std::cerr << "note: this hetnet was built without CUDA, so it cannot tell which operator types have CUDA "
                     "kernels; the plan assumes every type has one\n";
      std::map<std::string, hetnet::TensorInfo> shapes = nets.input_shapes;
      for (const auto& [name, info] : ParseShapeFlags(shape_flags)) shapes[name] = info;
      placed = PlanOffline(net, init, devices, shapes);
      std::string list = "cpu";
      for (int i = 0; i < gpus; ++i) list += ", cuda:" + std::to_string(i);
      if (!dot) std::cout << "Offline plan for a machine with " << list << " (nothing was run)\n";
    } else {
      hetnet::Workspace ws;
      if (init) ws.RunNetOnce(*init);
      try {
        placed = hetnet::PlaceNet(net, ws, hetnet::DefaultPlacementOptions());
      } catch (hetnet::Error& e) {
        if (e.kind() == hetnet::ErrorKind::kUnsupported &&
            e.message().find("GPUs this machine does not have") != std::string::npos)
          throw e.AddContext("to see the plan for a machine with GPUs from this one: --devices cpu,cuda:0[,cuda:1...]");
        throw;
      }
    }
    if (placement || dot) std::cout << (dot ? placed.report.ToDot() : placed.report.ToText());
    if (!svg_path.empty()) {
      const std::string svg = hetnet::DotToSvg(placed.report.ToDot());
      if (svg.empty()) HN_THROW(kUnsupported, "--svg needs Graphviz's `dot` on the PATH (apt-get install graphviz)");
      std::ofstream f(svg_path, std::ios::binary);
      f << svg;
      if (!f) HN_THROW(kRuntime, "cannot write ", svg_path);
      std::cout << "placement graph written to " << svg_path << "\n";
    }
  }
  if (memory) {
    std::map<std::string, hetnet::TensorInfo> shapes = nets.input_shapes;  // ONNX: the declared inputs
    std::set<std::string> params;
    hetnet::Workspace ws;
    caffe2::NetDef reported = net;
    if (init) {
      ws.RunNetOnce(*init);
      if (!precision_flag.empty()) {  // the net a Predictor would run, its weights converted
        hetnet::SetNetPrecision(&reported, hetnet::ParsePrecision(precision_flag));
        hetnet::RequestInferenceRewrite(&reported);
        hetnet::NarrowConstantsInPlace(reported, &ws);
        reported = hetnet::RewriteForInference(reported, &ws).net;
      }
      for (const auto& op : init->op())
        for (const auto& o : op.output()) params.insert(o);
      for (const auto& name : params) {
        const hetnet::Blob* b = ws.GetBlob(name);
        if (b && b->IsTensor()) shapes[name] = hetnet::TensorInfo::Of(b->GetTensor().shape(), b->GetTensor().dtype());
      }
    }
    for (const auto& [name, info] : ParseShapeFlags(shape_flags)) shapes[name] = info;
    if (init == nullptr && !precision_flag.empty()) throw UsageError("--precision needs the weights: --init");
    std::cout << hetnet::MemoryReportFromShapes(reported, shapes, params).ToText();
  }
  return kExitOk;
}

}  // namespace hetnet_cli
