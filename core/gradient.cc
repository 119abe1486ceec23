#include "core/gradient.h"

#include <map>
#include <set>

namespace hetnet {

namespace {
std::map<std::string, GradientMakerFn>& Makers() {
  static std::map<std::string, GradientMakerFn> m;
  return m;
}
std::set<std::string>& NoGradient() {
  static std::set<std::string> s;
  return s;
}
}  // namespace

caffe2::OperatorDef GradientMakerBase::GradientOp(const std::string& type, std::vector<std::string> inputs,
                                                  std::vector<std::string> outputs,
                                                  std::vector<caffe2::Argument> args) const {
  caffe2::OperatorDef op;
  op.set_type(type);
  op.set_name("");
  for (auto& i : inputs) op.add_input(i);
  for (auto& o : outputs) op.add_output(o);
  for (auto& a : args) *op.add_arg() = a;
  if (def_.has_device_option()) *op.mutable_device_option() = def_.device_option();
  if (def_.has_engine()) op.set_engine(def_.engine());
  op.set_is_gradient_op(true);
  return op;
}

void GradientRegistry::Register(const std::string& type, GradientMakerFn fn) { Makers()[type] = std::move(fn); }
void GradientRegistry::RegisterNoGradient(const std::string& type) { NoGradient().insert(type); }
const GradientMakerFn* GradientRegistry::Find(const std::string& type) {
  auto it = Makers().find(type);
  return it == Makers().end() ? nullptr : &it->second;
}
bool GradientRegistry::HasNoGradient(const std::string& type) { return NoGradient().count(type) > 0; }

}  // namespace hetnet
