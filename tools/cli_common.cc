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
