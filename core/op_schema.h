// Static facts about an operator type: input/output counts, in-place rules, shape and type
// inference, and device inference (which inputs/outputs of a GPU op stay on CPU).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/types.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

struct TensorInfo {
  std::vector<int64_t> dims;
  DataType dtype = DataType::Float;
  bool known = false;  // shape unknown when false
  static TensorInfo Unknown() { return TensorInfo{}; }
  static TensorInfo Of(std::vector<int64_t> d, DataType t) { return TensorInfo{std::move(d), t, true}; }
};

class OpSchema {
 public:
  using ShapeFn = std::function<std::vector<TensorInfo>(const caffe2::OperatorDef&,
                                                        const std::vector<TensorInfo>&)>;
  // For an op on `device`, the devices of its inputs and outputs.
  using DeviceFn = std::function<std::pair<std::vector<Device>, std::vector<Device>>(
      const caffe2::OperatorDef&, Device device)>;

  OpSchema() = default;
  OpSchema(std::string name, std::string file, int line)
      : name_(std::move(name)), file_(std::move(file)), line_(line) {}

  OpSchema& NumInputs(int n) { return NumInputs(n, n); }
  OpSchema& NumInputs(int min, int max) { min_in_ = min; max_in_ = max; return *this; }
  OpSchema& NumOutputs(int n) { return NumOutputs(n, n); }
  OpSchema& NumOutputs(int min, int max) { min_out_ = min; max_out_ = max; return *this; }
  OpSchema& AllowInplace(std::set<std::pair<int, int>> pairs) { inplace_allowed_ = std::move(pairs); return *this; }
  OpSchema& AllowOneToOneInplace();  // input i may share output i's name
  OpSchema& EnforceInplace(std::set<std::pair<int, int>> pairs) { inplace_enforced_ = std::move(pairs); return *this; }
  OpSchema& TensorInference(ShapeFn fn) { shape_fn_ = std::move(fn); return *this; }
  OpSchema& IdenticalTypeAndShape();                // output i like input i
  OpSchema& IdenticalTypeAndShapeOfInput(int idx);  // every output like input idx
  OpSchema& DeviceInference(DeviceFn fn) { device_fn_ = std::move(fn); return *this; }
  OpSchema& InputsOnCPU(std::set<int> inputs);      // these inputs stay on CPU for any device
  OpSchema& OutputsOnCPU(std::set<int> outputs);
  OpSchema& SetDoc(std::string doc) { doc_ = std::move(doc); return *this; }
  // CPU kernel may stand in for a missing GPU kernel (false for ops that must run on the device).
  OpSchema& NoCPUFallback() { cpu_fallback_ = false; return *this; }

  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  bool allows_cpu_fallback() const { return cpu_fallback_; }
  // Throws kInvalidArgument describing the first violation (counts, in-place rules).
  void Verify(const caffe2::OperatorDef& def) const;
  bool HasShapeInference() const { return static_cast<bool>(shape_fn_); }
  std::vector<TensorInfo> InferShapes(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) const;
  std::pair<std::vector<Device>, std::vector<Device>> InferDevices(const caffe2::OperatorDef& def,
                                                                   Device device) const;
  bool InplaceAllowed(int in, int out) const;

 private:
  std::string name_, file_, doc_;
  int line_ = 0;
  int min_in_ = 0, max_in_ = 1 << 30, min_out_ = 0, max_out_ = 1 << 30;
  std::set<std::pair<int, int>> inplace_allowed_, inplace_enforced_;
  bool one_to_one_inplace_ = false;
  bool cpu_fallback_ = true;
  ShapeFn shape_fn_;
  DeviceFn device_fn_;
};

class OpSchemaRegistry {
 public:
  static OpSchema& NewSchema(const std::string& name, const char* file, int line);
  static const OpSchema* Find(const std::string& name);  // nullptr if none
  static std::map<std::string, OpSchema>& Map();
};

}  // namespace hetnet

#define HN_CONCAT_IMPL(a, b) a##b
#define HN_CONCAT(a, b) HN_CONCAT_IMPL(a, b)
#define HN_ANON(prefix) HN_CONCAT(prefix, __COUNTER__)

// OPERATOR_SCHEMA(FC).NumInputs(3).NumOutputs(1)...;
#define OPERATOR_SCHEMA(name)                                                  \
  [[maybe_unused]] static ::hetnet::OpSchema& HN_ANON(hn_schema_##name) =      \
      ::hetnet::OpSchemaRegistry::NewSchema(#name, __FILE__, __LINE__)
