// Gradient makers: for a forward OperatorDef and the names of its outputs' gradients, the
// gradient OperatorDefs. Registered next to each operator (REGISTER_GRADIENT); AddGradientOperators
// (training) walks a net backwards with them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/op_schema.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class GradientMakerBase {
 public:
  GradientMakerBase(const caffe2::OperatorDef& def, std::vector<std::string> output_grads)
      : def_(def), g_output_(std::move(output_grads)) {}
  virtual ~GradientMakerBase() = default;
  virtual std::vector<caffe2::OperatorDef> GetGradientDefs() = 0;
  // Gradient blob names of the forward op's inputs ("" where no gradient flows), valid after
  // GetGradientDefs.
  const std::vector<std::string>& input_grads() const { return g_input_; }
  void set_input_grads_size(int n) { g_input_.assign(n, ""); }

 protected:
  const std::string& I(int i) const { return def_.input(i); }
  const std::string& O(int i) const { return def_.output(i); }
  // Name of input i's gradient (recorded as produced by this maker).
  std::string GI(int i) {
    if (g_input_.size() < static_cast<size_t>(def_.input_size())) g_input_.resize(def_.input_size());
    g_input_[i] = def_.input(i) + "_grad";
    return g_input_[i];
  }
  const std::string& GO(int i) const { return g_output_.at(i); }
  const caffe2::OperatorDef& Def() const { return def_; }
  // One gradient op carrying the forward op's device option and engine.
  caffe2::OperatorDef GradientOp(const std::string& type, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs,
                                 std::vector<caffe2::Argument> args = {}) const;

  const caffe2::OperatorDef& def_;
  std::vector<std::string> g_output_;
  std::vector<std::string> g_input_;
};

using GradientMakerFn =
    std::function<std::unique_ptr<GradientMakerBase>(const caffe2::OperatorDef&, const std::vector<std::string>&)>;

class GradientRegistry {
 public:
  static void Register(const std::string& type, GradientMakerFn fn);
  static void RegisterNoGradient(const std::string& type);
  static const GradientMakerFn* Find(const std::string& type);
  static bool HasNoGradient(const std::string& type);
};

struct GradientRegisterer {
  GradientRegisterer(const char* type, GradientMakerFn fn) { GradientRegistry::Register(type, std::move(fn)); }
  explicit GradientRegisterer(const char* type) { GradientRegistry::RegisterNoGradient(type); }
};

}  // namespace hetnet

#define REGISTER_GRADIENT(type, ...)                                                                      \
  static ::hetnet::GradientRegisterer HN_ANON(hn_grad_reg_)(                                              \
      #type, [](const ::caffe2::OperatorDef& d, const std::vector<std::string>& g) {                      \
        return std::unique_ptr<::hetnet::GradientMakerBase>(new __VA_ARGS__(d, g));                       \
      })
#define NO_GRADIENT(type) static ::hetnet::GradientRegisterer HN_ANON(hn_nograd_reg_)(#type)
