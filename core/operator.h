// Operators: OperatorBase binds an OperatorDef to workspace blobs; Operator<Context> adds the
// device context and typed tensor access. Creation goes through a registry keyed by
// (type, device type, engine).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/argument.h"
#include "core/blob.h"
#include "core/context.h"
#include "core/op_schema.h"
#include "core/tensor.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class Workspace;

class OperatorBase {
 public:
  OperatorBase(const caffe2::OperatorDef& def, Workspace* ws);
  virtual ~OperatorBase() = default;
  OperatorBase(const OperatorBase&) = delete;
  OperatorBase& operator=(const OperatorBase&) = delete;

  // Queues (GPU) or runs (CPU) the operator. Errors are thrown as hetnet::Error.
  virtual void Run() = 0;
  // Blocks until work this operator queued has finished.
  virtual void Finish() {}
  virtual DeviceContext* context() = 0;
  // Called once when the net is created, after all its operators, in the net's order: constant[i]
  // is true where input i already holds a tensor on this operator's input device that the net does
  // not change (a weight loaded by the init net, or the output of an earlier operator that returned
  // true here). Operators that prepare weights (packing, transforms) do it here instead of at the
  // first run. Returns true where the operator has computed its outputs from those constants and
  // its runs will leave them as they are until an input changes (a fold of weights). Best effort:
  // what cannot be prepared here is prepared by the first run, which reports any error with the
  // net and operator named.
  virtual bool PrepareConstantInputs(const std::vector<bool>& constant) {
    (void)constant;
    return false;
  }
  // Copy operators report what they moved (for the placement report); -1 for other operators.
  virtual int64_t bytes_copied_last_run() const { return -1; }

  const caffe2::OperatorDef& def() const { return def_; }
  const std::string& type() const { return def_.type(); }
  Device device() const { return device_; }
  const std::string& engine() const { return engine_; }
  int InputSize() const { return static_cast<int>(inputs_.size()); }
  int OutputSize() const { return static_cast<int>(outputs_.size()); }
  const Blob* InputBlob(int i) const { return inputs_.at(i); }
  Blob* OutputBlob(int i) { return outputs_.at(i); }
  Device InputDevice(int i) const { return input_devices_[i]; }
  Device OutputDevice(int i) const { return output_devices_[i]; }

  template <typename T>
  T GetSingleArgument(const std::string& name, const T& dflt) const { return args_.GetSingleArgument<T>(name, dflt); }
  template <typename T>
  std::vector<T> GetRepeatedArgument(const std::string& name, const std::vector<T>& dflt = {}) const {
    return args_.GetRepeatedArgument<T>(name, dflt);
  }
  bool HasArgument(const std::string& name) const { return args_.HasArgument(name); }

  // Input tensor i, checked to hold data on the device the schema expects.
  const Tensor& InputTensor(int i) const;
  // Output tensor i on the device the schema says (the op's device unless inferred otherwise).
  Tensor* OutputTensor(int i);
  Tensor* OutputTensor(int i, std::vector<int64_t> shape, DataType dtype);
  bool IsInputOutputAlias(int in, int out) const { return inputs_[in] == outputs_[out]; }

  void set_engine(std::string e) { engine_ = std::move(e); }

 protected:
  caffe2::OperatorDef def_;
  ArgumentHelper args_;
  Device device_;
  std::string engine_;
  std::vector<const Blob*> inputs_;
  std::vector<Blob*> outputs_;
  std::vector<Device> input_devices_, output_devices_;
};

template <class Context>
class Operator : public OperatorBase {
 public:
  Operator(const caffe2::OperatorDef& def, Workspace* ws) : OperatorBase(def, ws), context_(def.device_option()) {}

  void Run() final {
    context_.SwitchToDevice();
    RunOnDevice();
  }
  void Finish() override { context_.FinishDeviceComputation(); }
  DeviceContext* context() override { return &context_; }
  virtual void RunOnDevice() = 0;

 protected:
  const Tensor& Input(int i) const { return InputTensor(i); }
  Tensor* Output(int i) { return OutputTensor(i); }
  Tensor* Output(int i, std::vector<int64_t> shape, DataType dtype) { return OutputTensor(i, std::move(shape), dtype); }

  Context context_;
};

// ---- registry ----
using OperatorCreator = std::function<std::unique_ptr<OperatorBase>(const caffe2::OperatorDef&, Workspace*)>;

class OperatorRegistry {
 public:
  static void Register(const std::string& type, DeviceType device, const std::string& engine, OperatorCreator fn);
  static const OperatorCreator* Find(const std::string& type, DeviceType device, const std::string& engine);
  static bool Has(const std::string& type, DeviceType device) { return Find(type, device, "") != nullptr; }
  static std::vector<std::string> Types(DeviceType device);  // registered types, default engine
  static std::vector<std::string> Engines(const std::string& type, DeviceType device);
};

struct OperatorRegisterer {
  OperatorRegisterer(const char* type, DeviceType device, const char* engine, OperatorCreator fn) {
    OperatorRegistry::Register(type, device, engine, std::move(fn));
  }
};

// Creates an operator for def on def.device_option()'s device, trying each engine of def.engine
// (comma-separated preference list) and then the default engine. Verifies the schema first.
// Throws kNotFound for unknown types (with the nearest registered names).
std::unique_ptr<OperatorBase> CreateOperator(const caffe2::OperatorDef& def, Workspace* ws);

// The engine an operator of `def` gets on `device`: the first of def.engine's comma-separated
// preference list (CUDNN first on CUDA when none is given) that has a kernel, else "" (default).
std::string ResolveEngine(const caffe2::OperatorDef& def, Device device);

// Registered type names closest to `name` (edit distance), best first.
std::vector<std::string> NearestOperatorNames(const std::string& name, size_t limit = 3);

}  // namespace hetnet

#define HN_REGISTER_OPERATOR_IMPL(type, device, engine, ...)                                      \
  static ::hetnet::OperatorRegisterer HN_ANON(hn_op_reg_)(                                        \
      #type, device, engine, [](const ::caffe2::OperatorDef& d, ::hetnet::Workspace* w) {         \
        return std::unique_ptr<::hetnet::OperatorBase>(new __VA_ARGS__(d, w));                     \
      })
#define REGISTER_CPU_OPERATOR(type, ...) HN_REGISTER_OPERATOR_IMPL(type, ::hetnet::DeviceType::CPU, "", __VA_ARGS__)
#define REGISTER_CUDA_OPERATOR(type, ...) HN_REGISTER_OPERATOR_IMPL(type, ::hetnet::DeviceType::CUDA, "", __VA_ARGS__)
#define REGISTER_CPU_OPERATOR_WITH_ENGINE(type, engine, ...) \
  HN_REGISTER_OPERATOR_IMPL(type, ::hetnet::DeviceType::CPU, #engine, __VA_ARGS__)
#define REGISTER_CUDA_OPERATOR_WITH_ENGINE(type, engine, ...) \
  HN_REGISTER_OPERATOR_IMPL(type, ::hetnet::DeviceType::CUDA, #engine, __VA_ARGS__)
