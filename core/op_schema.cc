#include "core/op_schema.h"

#include "core/error.h"

namespace hetnet {

OpSchema& OpSchema::AllowOneToOneInplace() {
  one_to_one_inplace_ = true;
  return *this;
}

OpSchema& OpSchema::IdenticalTypeAndShape() {
  return TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
    std::vector<TensorInfo> out(def.output_size());
    for (int i = 0; i < def.output_size() && i < static_cast<int>(in.size()); ++i) out[i] = in[i];
    return out;
  });
}

OpSchema& OpSchema::IdenticalTypeAndShapeOfInput(int idx) {
  return TensorInference([idx](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
    return std::vector<TensorInfo>(def.output_size(),
                                   idx < static_cast<int>(in.size()) ? in[idx] : TensorInfo::Unknown());
  });
}

OpSchema& OpSchema::InputsOnCPU(std::set<int> inputs) {
  auto prev = device_fn_;
  return DeviceInference([prev, inputs](const caffe2::OperatorDef& def, Device d) {
    auto r = prev ? prev(def, d)
                  : std::make_pair(std::vector<Device>(def.input_size(), d), std::vector<Device>(def.output_size(), d));
    for (int i : inputs)
      if (i < static_cast<int>(r.first.size())) r.first[i] = Device::CPU();
    return r;
  });
}

OpSchema& OpSchema::OutputsOnCPU(std::set<int> outputs) {
  auto prev = device_fn_;
  return DeviceInference([prev, outputs](const caffe2::OperatorDef& def, Device d) {
    auto r = prev ? prev(def, d)
                  : std::make_pair(std::vector<Device>(def.input_size(), d), std::vector<Device>(def.output_size(), d));
    for (int i : outputs)
      if (i < static_cast<int>(r.second.size())) r.second[i] = Device::CPU();
    return r;
  });
}

bool OpSchema::InplaceAllowed(int in, int out) const {
  return (one_to_one_inplace_ && in == out) || inplace_allowed_.count({in, out}) ||
         inplace_enforced_.count({in, out});
}

static std::string CountRange(int lo, int hi) {
  if (lo == hi) return std::to_string(lo);
  if (hi >= (1 << 30)) return "at least " + std::to_string(lo);
  return "between " + std::to_string(lo) + " and " + std::to_string(hi);
}

void OpSchema::Verify(const caffe2::OperatorDef& def) const {
  HN_ENFORCE(def.input_size() >= min_in_ && def.input_size() <= max_in_, "operator ", name_, " takes ",
             CountRange(min_in_, max_in_), " input(s) but was given ", def.input_size());
  HN_ENFORCE(def.output_size() >= min_out_ && def.output_size() <= max_out_, "operator ", name_,
             " produces ", CountRange(min_out_, max_out_), " output(s) but was given ", def.output_size());
  for (int i = 0; i < def.input_size(); ++i)
    for (int o = 0; o < def.output_size(); ++o)
      if (def.input(i) == def.output(o) && !InplaceAllowed(i, o))
        HN_THROW(kInvalidArgument, "operator ", name_, " cannot run in place: input ", i, " and output ", o,
                 " are both '", def.input(i), "'");
  for (const auto& [i, o] : inplace_enforced_)
    if (i < def.input_size() && o < def.output_size())
      HN_ENFORCE(def.input(i) == def.output(o), "operator ", name_, " must run in place: input ", i,
                 " ('", def.input(i), "') and output ", o, " ('", def.output(o), "') must be the same blob");
}

std::vector<TensorInfo> OpSchema::InferShapes(const caffe2::OperatorDef& def,
                                              const std::vector<TensorInfo>& in) const {
  // Shape functions may index their inputs: never call one with a count the schema refuses.
  const int n = static_cast<int>(in.size());
  if (!shape_fn_ || n < min_in_ || n > max_in_ || def.output_size() < min_out_ || def.output_size() > max_out_)
    return std::vector<TensorInfo>(def.output_size());
  for (const auto& t : in)
    if (!t.known) return std::vector<TensorInfo>(def.output_size());
  auto out = shape_fn_(def, in);
  out.resize(def.output_size());
  return out;
}

std::pair<std::vector<Device>, std::vector<Device>> OpSchema::InferDevices(const caffe2::OperatorDef& def,
                                                                          Device d) const {
  if (device_fn_) return device_fn_(def, d);
  return {std::vector<Device>(def.input_size(), d), std::vector<Device>(def.output_size(), d)};
}

std::map<std::string, OpSchema>& OpSchemaRegistry::Map() {
  static std::map<std::string, OpSchema> m;
  return m;
}

OpSchema& OpSchemaRegistry::NewSchema(const std::string& name, const char* file, int line) {
  auto& m = Map();
  auto it = m.find(name);
  if (it != m.end()) return it->second;  // same schema seen through another translation unit
  return m.emplace(name, OpSchema(name, file, line)).first->second;
}

const OpSchema* OpSchemaRegistry::Find(const std::string& name) {
  auto& m = Map();
  auto it = m.find(name);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace hetnet
