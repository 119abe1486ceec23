// Shared pieces of the `hetnet` command line: usage errors (exit code 2), flag parsing, loading
// tensors from .npy / TensorProto files, and printing tensor summaries.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <map>

#include "core/op_schema.h"
#include "core/tensor.h"
#include "proto/caffe2.pb.h"

namespace hetnet_cli {

constexpr int kExitOk = 0;
constexpr int kExitRuntimeError = 1;
constexpr int kExitUsage = 2;

// Bad command line: reported with the subcommand's usage hint, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Walks argv; supports "--flag value" and "--flag=value".
class ArgReader {
 public:
  ArgReader(int argc, char** argv, int first) : args_(argv + first, argv + argc) {}
  bool Done() const { return pos_ >= args_.size(); }
  const std::string& Peek() const { return args_[pos_]; }
  std::string Next() { return args_[pos_++]; }
  // If the current argument is `flag` (or `flag=...`), consumes it and its value into *value.
  bool Flag(const std::string& flag, std::string* value);
  // If the current argument is the boolean `flag`, consumes it.
  bool Switch(const std::string& flag);

 private:
  std::vector<std::string> args_;
  size_t pos_ = 0;
};

// Consumes --strict / --soft-placement and sets the runtime's placement options (core/placement.h).
bool PlacementSwitch(ArgReader& args);
extern const char* const kPlacementHelp;

// Splits "name=path" (path may be empty when optional).
std::pair<std::string, std::string> SplitNameValue(const std::string& spec, const std::string& flag,
                                                   bool value_required);

// A model's nets for run / inspect: MODEL is an ONNX file (*.onnx, imported; the import makes the
// init net; operators on `onnx_device`: "cpu" (default), "cuda", "cuda:N") or a predict NetDef file
// with an optional init NetDef file. Errors name the file.
struct ModelNets {
  caffe2::NetDef init, predict;
  bool has_init = false;
  bool onnx = false;
  std::map<std::string, hetnet::TensorInfo> input_shapes;  // ONNX graph inputs whose dims the model fixes
};
ModelNets LoadModelNets(const std::string& model_path, const std::string& init_path, const std::string& onnx_device);
extern const char* const kOnnxHelp;  // the ONNX lines of run's and inspect's help

// A tensor from a file: .npy when it starts with the npy magic, else a serialized TensorProto
// (binary or text). Errors name the file.
hetnet::Tensor LoadTensorFile(const std::string& path);

// "prob: float32[2, 3] on cpu  min=0.1 max=0.9 mean=0.5  first=[...]"
std::string SummarizeTensor(const std::string& name, const hetnet::Tensor& t, int max_values = 6);

int RunCommand(int argc, char** argv);      // `hetnet run ...`, argv[0] is "run"
int InspectCommand(int argc, char** argv);  // `hetnet inspect ...`
int ServeCommand(int argc, char** argv);    // `hetnet serve ...` (tools/cli_serve.cc)
extern const char* const kRunHelp;
extern const char* const kInspectHelp;
extern const char* const kServeHelp;

}  // namespace hetnet_cli
