// `hetnet export-onnx`: an init + predict NetDef pair becomes an ONNX model file (onnx/onnx_export.h).
// Usage errors print this command's help here, so the dispatcher needs no entry for it.
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/proto_io.h"
#include "tools/cli_common.h"

#ifdef HETNET_WITH_ONNX
#include "onnx/onnx_export.h"
#endif

namespace hetnet_cli {

int ExportOnnxCommand(int argc, char** argv);
extern const char* const kExportOnnxHelp;

const char* const kExportOnnxHelp =
    "usage: hetnet export-onnx --predict PREDICT_NET [--init INIT_NET] --input NAME:DTYPE:D0,D1,... ...\n"
    "                          [--opset N] -o MODEL.onnx\n"
    "\n"
    "Writes the nets as an ONNX model. The init net runs once on CPU and its blobs become the\n"
    "initializers; the predict net runs once on zeros of the --input shapes to learn every dtype and\n"
    "shape. Operators without an ONNX export are listed together in one error.\n"
    "\n"
    "  --predict FILE      predict NetDef (binary or text)\n"
    "  --init FILE         init NetDef filling the weights (optional)\n"
    "  --input SPEC        a graph input: NAME:DTYPE:DIMS, DTYPE one of float32 float64 float16 int8 int16\n"
    "                      int32 int64 uint8 uint16 bool, DIMS comma-separated (empty: a scalar);\n"
    "                      repeat for each input, e.g. --input data:float32:1,3,224,224\n"
    "  --opset N           ai.onnx opset of the model (7 to 17, default 17)\n"
    "  -o, --output FILE   where to write the model\n"
    "  -h, --help          this help\n";

namespace {

// ONNX TensorProto.DataType numbers, by the names numpy gives the dtypes.
int32_t ElemTypeByName(const std::string& name) {
  static const std::map<std::string, int32_t> kTypes = {
      {"float32", 1}, {"float", 1}, {"uint8", 2},  {"int8", 3},    {"uint16", 4},  {"int16", 5},
      {"int32", 6},   {"int64", 7}, {"bool", 9},   {"float16", 10}, {"float64", 11}, {"double", 11}};
  auto it = kTypes.find(name);
  if (it == kTypes.end()) throw UsageError("--input: unknown dtype '" + name + "'");
  return it->second;
}

int64_t ParseInt(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || v < 0)
    throw UsageError(what + " needs a non-negative integer, got '" + text + "'");
  return v;
}

struct InputSpec {
  std::string name;
  int32_t elem_type;
  std::vector<int64_t> dims;
};

InputSpec ParseInputSpec(const std::string& spec) {
  const size_t a = spec.find(':');
  const size_t b = a == std::string::npos ? a : spec.find(':', a + 1);
  if (a == 0 || b == std::string::npos)
    throw UsageError("--input wants NAME:DTYPE:D0,D1,... (e.g. data:float32:1,784), got '" + spec + "'");
  InputSpec r{spec.substr(0, a), ElemTypeByName(spec.substr(a + 1, b - a - 1)), {}};
  const std::string dims = spec.substr(b + 1);
  for (size_t pos = 0; !dims.empty() && pos <= dims.size();) {
    size_t comma = dims.find(',', pos);
    if (comma == std::string::npos) comma = dims.size();
    r.dims.push_back(ParseInt(dims.substr(pos, comma - pos), "--input " + r.name + " dimension"));
    pos = comma + 1;
  }
  return r;
}

int Run(int argc, char** argv) {
  ArgReader args(argc, argv, 1);
  std::string init_path, predict_path, out_path, value;
  std::vector<InputSpec> inputs;
  int64_t opset = 17;
  while (!args.Done()) {
    if (args.Switch("--help") || args.Switch("-h")) {
      std::cout << kExportOnnxHelp;
      return kExitOk;
    } else if (args.Flag("--init", &init_path) || args.Flag("--predict", &predict_path) ||
               args.Flag("--output", &out_path) || args.Flag("-o", &out_path)) {
    } else if (args.Flag("--input", &value)) {
      inputs.push_back(ParseInputSpec(value));
    } else if (args.Flag("--opset", &value)) {
      opset = ParseInt(value, "--opset");
    } else {
      throw UsageError("unknown option '" + args.Peek() + "' for export-onnx");
    }
  }
  if (predict_path.empty()) throw UsageError("export-onnx needs --predict PREDICT_NET");
  if (out_path.empty()) throw UsageError("export-onnx needs -o MODEL.onnx");
  if (inputs.empty()) throw UsageError("export-onnx needs at least one --input NAME:DTYPE:DIMS");
#ifdef HETNET_WITH_ONNX
  caffe2::NetDef init_net, predict_net = hetnet::ReadNetDef(predict_path);
  if (!init_path.empty()) init_net = hetnet::ReadNetDef(init_path);
  std::map<std::string, hetnet::onnxio::OnnxExportValueInfo> value_info;
  for (const auto& in : inputs) {
    if (value_info.count(in.name)) throw UsageError("--input " + in.name + " given twice");
    value_info[in.name] = {in.elem_type, in.dims};
  }
  hetnet::onnxio::OnnxExportOptions options;
  options.opset = opset;
  const std::string model = hetnet::onnxio::ExportOnnxModel(predict_net, init_net, value_info, options);
  hetnet::WriteFileBytes(out_path, model);
  std::cout << "wrote " << out_path << " (" << model.size() << " bytes, opset " << opset << ", "
            << predict_net.op_size() << " operators)\n";
  return kExitOk;
#else
  (void)opset;
  throw hetnet::Error(hetnet::ErrorKind::kUnsupported, "this build has no ONNX support (libonnx-dev not found)");
#endif
}

}  // namespace

int ExportOnnxCommand(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "hetnet: " << e.what() << "\n" << kExportOnnxHelp;
    return kExitUsage;
  }
}

}  // namespace hetnet_cli
