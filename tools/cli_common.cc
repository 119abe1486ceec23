#include "tools/cli_common.h"

#include "core/placement.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "core/npy.h"
#include "core/proto_io.h"
#include "core/tensor_proto.h"
#ifdef HETNET_WITH_ONNX
#include "onnx/onnx_import.h"
#endif

namespace hetnet_cli {

using hetnet::Tensor;

bool ArgReader::Flag(const std::string& flag, std::string* value) {
  if (Done()) return false;
  const std::string& a = args_[pos_];
  if (a == flag) {
    if (pos_ + 1 >= args_.size()) throw UsageError("option " + flag + " needs a value");
    *value = args_[pos_ + 1];
    pos_ += 2;
    return true;
  }
  if (a.rfind(flag + "=", 0) == 0) {
    *value = a.substr(flag.size() + 1);
    ++pos_;
    return true;
  }
  return false;
}

bool ArgReader::Switch(const std::string& flag) {
  if (Done() || args_[pos_] != flag) return false;
  ++pos_;
  return true;
}

const char* const kPlacementHelp =
    "  --strict             an op placed on a GPU whose type has no CUDA kernel is an error (no CPU fallback)\n"
    "  --soft-placement     without a usable GPU, run ops placed on GPUs on CPU (the report says which)\n";

bool PlacementSwitch(ArgReader& args) {
  if (args.Switch("--strict")) {
    hetnet::DefaultPlacementOptions().strict = true;
    return true;
  }
  if (args.Switch("--soft-placement")) {
    hetnet::DefaultPlacementOptions().soft_placement = true;
    return true;
  }
  return false;
}

std::pair<std::string, std::string> SplitNameValue(const std::string& spec, const std::string& flag,
                                                   bool value_required) {
  const size_t eq = spec.find('=');
  std::string name = spec.substr(0, eq);
  std::string value = eq == std::string::npos ? "" : spec.substr(eq + 1);
  if (name.empty()) throw UsageError(flag + " '" + spec + "': the blob name is empty");
  if (value_required && value.empty()) throw UsageError(flag + " '" + spec + "': expected NAME=FILE");
  return {name, value};
}

const char* const kOnnxHelp =
    "ONNX models (MODEL ending in .onnx, imported into an init and a predict net; no --init):\n"
    "  --device DEV         device of the imported operators: cpu (default), cuda, cuda:N\n";

namespace {
caffe2::DeviceOption ParseDeviceFlag(const std::string& text) {
  caffe2::DeviceOption d;
  if (text.empty() || text == "cpu") return d;
  if (text == "cuda" || text.rfind("cuda:", 0) == 0) {
    d.set_device_type(1);
    if (text.size() > 5) {
      char* end = nullptr;
      const long id = std::strtol(text.c_str() + 5, &end, 10);
      if (*end || id < 0 || id > 1024) throw UsageError("--device '" + text + "': expected cpu, cuda or cuda:N");
      d.set_device_id(static_cast<int>(id));
    }
    return d;
  }
  throw UsageError("--device '" + text + "': expected cpu, cuda or cuda:N");
}
}  // namespace

ModelNets LoadModelNets(const std::string& model_path, const std::string& init_path, const std::string& onnx_device) {
  ModelNets nets;
#ifdef HETNET_WITH_ONNX
  if (hetnet::onnxio::IsOnnxPath(model_path)) {
    if (!init_path.empty()) throw UsageError("--init is not used with an ONNX model (its weights are in the file)");
    hetnet::onnxio::OnnxImportOptions options;
    options.device = ParseDeviceFlag(onnx_device);
    hetnet::onnxio::ImportedOnnxModel m = hetnet::onnxio::ImportOnnxFile(model_path, options);
    nets.init = std::move(m.init_net);
    nets.predict = std::move(m.predict_net);
    nets.has_init = nets.onnx = true;
    for (const auto& in : m.inputs) {
      bool fixed = in.known_rank && in.dtype != caffe2::TensorProto::UNDEFINED;
      for (int64_t d : in.dims) fixed &= d >= 0;
      if (fixed) nets.input_shapes[in.name] = hetnet::TensorInfo::Of(in.dims, static_cast<hetnet::DataType>(in.dtype));
    }
    return nets;
  }
#endif
  if (!onnx_device.empty()) throw UsageError("--device applies to ONNX models (*.onnx) only");
  nets.predict = hetnet::ReadNetDef(model_path);
  if (!init_path.empty()) {
    nets.init = hetnet::ReadNetDef(init_path);
    nets.has_init = true;
  }
  return nets;
}

Tensor LoadTensorFile(const std::string& path) {
  const std::string bytes = hetnet::ReadFileBytes(path);
  if (hetnet::LooksLikeNpy(bytes)) return hetnet::ParseNpy(bytes, path);
  caffe2::TensorProto proto;
  try {
    hetnet::ParseProtoFromString(bytes, &proto, path);
  } catch (hetnet::Error& e) {
    e.AddContext("'" + path + "' is neither a .npy file (no \\x93NUMPY magic) nor a serialized TensorProto");
    throw;
  }
  return hetnet::TensorFromProto(proto);
}

namespace {

// Element i as a double (for summaries); strings have no numeric value.
double ValueAt(const Tensor& t, int64_t i) {
  return hetnet::DispatchDataType(t.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::string>) {
      return 0.0;
    } else if constexpr (std::is_same_v<T, hetnet::Half>) {
      return hetnet::HalfToFloat(static_cast<const T*>(t.raw_data())[i]);
    } else if constexpr (std::is_same_v<T, hetnet::BFloat16>) {
      return hetnet::BFloat16ToFloat(static_cast<const T*>(t.raw_data())[i]);
    } else {
      return static_cast<double>(static_cast<const T*>(t.raw_data())[i]);
    }
  });
}

}  // namespace

std::string SummarizeTensor(const std::string& name, const Tensor& src, int max_values) {
  const Tensor t = src.device().is_cpu() ? src : src.To(hetnet::Device::CPU());
  std::ostringstream s;
  s << name << ": " << t.DebugString();
  if (t.numel() == 0) return s.str() + "  (empty)";
  s << std::setprecision(6);
  if (t.dtype() == hetnet::DataType::String) {
    s << "  first=[";
    for (int64_t i = 0; i < std::min<int64_t>(t.numel(), max_values); ++i)
      s << (i ? ", " : "") << '"' << t.data<std::string>()[i] << '"';
    return s.str() + (t.numel() > max_values ? ", ...]" : "]");
  }
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = ValueAt(t, i);
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    sum += v;
  }
  s << "  min=" << mn << " max=" << mx << " mean=" << sum / static_cast<double>(t.numel()) << "  first=[";
  for (int64_t i = 0; i < std::min<int64_t>(t.numel(), max_values); ++i) s << (i ? ", " : "") << ValueAt(t, i);
  s << (t.numel() > max_values ? ", ...]" : "]");
  return s.str();
}

}  // namespace hetnet_cli
