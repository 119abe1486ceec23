// One differential harness for every operator (in the spirit of ggml's test-backend-ops).
//
// A *case* is one operator def (type, args) with generated inputs. For each case the harness
//   1. runs the CPU kernel and compares the outputs with a float64 reference,
//   2. checks that the schema's shape inference gives the shapes/dtypes the kernel produced,
//   3. checks every requested input gradient (the registered gradient maker's ops) against
//      central finite differences of L = sum_o sum_k w_ok * Y_o[k] (random w, float64 sums),
//   4. where a CUDA device exists, runs the same def (and its gradient ops) on CUDA:0 and compares
//      with the CPU results.
//
// The reference: a float64 function supplied by the case (`Case::Ref`), written independently of
// the kernels (naive loops). We do not use "the CPU kernel on float64-cast inputs": most kernels
// are float32-only, and a kernel compared with itself would not catch a wrong formula. A case
// without a reference gets "skip" in the reference column; it may give a `Check` (an invariant on
// inputs and outputs, e.g. Dropout's Y == X * mask / (1 - ratio)) instead or as well.
//
// Adding an operator = adding `tests/cpp/harness_cases_<group>.cc` with
//
//   #include "tests/cpp/op_harness.h"
//   namespace hetnet::harness {
//   HN_OP_CASES(MyGroup) {
//     return {
//       Case("k3 p1")
//           .Def(Op("Conv", {"X", "W", "b"}, {"Y"}, {Arg("kernel", 3), Arg("pad", 1)}))
//           .Inputs({In({2, 3, 7, 7}), In({4, 3, 3, 3}), In({4})})
//           .Ref(MyConvReference),
//     };
//   }
//   }  // namespace hetnet::harness
//
// and nothing else (CMake globs tests/cpp/*.cc; the registry picks the cases up at load time).
// `tests/cpp/test_op_harness.cc` runs every case ([harness] on CPU, [gpu] for the device columns).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/op_schema.h"
#include "core/types.h"
#include "proto/caffe2.pb.h"

namespace hetnet {
namespace harness {

// ---- building defs ----
inline caffe2::Argument NamedArg(const std::string& name) {
  caffe2::Argument a;
  a.set_name(name);
  return a;
}
inline caffe2::Argument Arg(const std::string& name, int v) { auto a = NamedArg(name); a.set_i(v); return a; }
inline caffe2::Argument Arg(const std::string& name, int64_t v) { auto a = NamedArg(name); a.set_i(v); return a; }
inline caffe2::Argument Arg(const std::string& name, float v) { auto a = NamedArg(name); a.set_f(v); return a; }
inline caffe2::Argument Arg(const std::string& name, double v) { return Arg(name, static_cast<float>(v)); }
inline caffe2::Argument Arg(const std::string& name, const char* v) { auto a = NamedArg(name); a.set_s(v); return a; }
inline caffe2::Argument Arg(const std::string& name, const std::string& v) { return Arg(name, v.c_str()); }
inline caffe2::Argument Ints(const std::string& name, const std::vector<int64_t>& v) {
  auto a = NamedArg(name);
  for (auto x : v) a.add_ints(x);
  return a;
}
inline caffe2::Argument Floats(const std::string& name, const std::vector<float>& v) {
  auto a = NamedArg(name);
  for (auto x : v) a.add_floats(x);
  return a;
}
inline caffe2::OperatorDef Op(const std::string& type, const std::vector<std::string>& inputs,
                              const std::vector<std::string>& outputs, const std::vector<caffe2::Argument>& args = {}) {
  caffe2::OperatorDef d;
  d.set_type(type);
  for (const auto& i : inputs) d.add_input(i);
  for (const auto& o : outputs) d.add_output(o);
  for (const auto& a : args) *d.add_arg() = a;
  return d;
}

// ---- float64 tensors the references and checks see (row-major; any dtype is held as double) ----
struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  DataType dtype = DataType::Float;  // the dtype the kernel's output must have
  bool skip = false;                 // a reference may leave an output uncompared
  RefTensor() = default;
  RefTensor(std::vector<int64_t> s, DataType t = DataType::Float) : shape(std::move(s)), dtype(t) {
    data.assign(numel(), 0.0);
  }
  RefTensor(std::vector<int64_t> s, std::vector<double> d, DataType t = DataType::Float)
      : shape(std::move(s)), data(std::move(d)), dtype(t) {}
  static RefTensor Skip() { RefTensor r; r.skip = true; return r; }
  int64_t numel() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  int64_t dim(int i) const { return shape.at(i < 0 ? i + shape.size() : i); }
  double& operator[](int64_t i) { return data[i]; }
  double operator[](int64_t i) const { return data[i]; }
};
using RefTensors = std::vector<RefTensor>;

// The reference: inputs (as generated) -> expected outputs, a prefix of the def's outputs; use
// RefTensor::Skip() for outputs not to compare (e.g. saved statistics with another convention).
using RefFn = std::function<RefTensors(const caffe2::OperatorDef& def, const RefTensors& inputs)>;
// An invariant on inputs and the kernel's outputs (all of them); returns "" when it holds, else
// what is wrong. Run on every device the case runs on.
using CheckFn =
    std::function<std::string(const caffe2::OperatorDef& def, const RefTensors& inputs, const RefTensors& outputs)>;

// ---- inputs ----
struct InputSpec {
  std::vector<int64_t> shape;
  DataType dtype = DataType::Float;
  double lo = -1.0, hi = 1.0;  // uniform range; integer dtypes draw integers in [lo, hi]
  bool distinct = false;       // float values evenly spaced over [lo, hi] (never 0), shuffled (no ties: max, sort)
  bool grad = true;            // check the gradient w.r.t. this input (float inputs only)
  std::vector<double> values;  // explicit values (cast to dtype); overrides the generator

  InputSpec& Range(double l, double h) { lo = l; hi = h; return *this; }
  InputSpec& Type(DataType t) { dtype = t; return *this; }
  InputSpec& Distinct() { distinct = true; return *this; }
  InputSpec& NoGrad() { grad = false; return *this; }
  InputSpec& Values(std::vector<double> v) { values = std::move(v); return *this; }
};
// In({2, 3}) is a float input in [-1, 1]; In({2}, DataType::Int32).Range(0, 4) an int label.
inline InputSpec In(std::vector<int64_t> shape, DataType dtype = DataType::Float) {
  InputSpec s;
  s.shape = std::move(shape);
  s.dtype = dtype;
  return s;
}

// ---- tolerances: |got - want| <= tol * max(1, |want|) ----
struct Tolerance {
  double f32 = 1e-4;   // float32 kernel output vs float64 reference
  double f64 = 1e-9;   // double kernel output vs reference
  double f16 = 1e-2;   // float16 output vs reference
  double grad = 1e-2;  // analytic gradient vs finite differences
  double gpu = 1e-4;   // GPU vs CPU (float32); float16 GPU outputs use f16
  double For(DataType t) const { return t == DataType::Double ? f64 : t == DataType::Float16 ? f16 : f32; }
};

// ---- a case ----
struct Case {
  std::string label;            // shown in failure lines ("k3 s2 p1 group 2")
  caffe2::OperatorDef def;      // on CPU; the harness moves it to CUDA:0 for the GPU column
  std::vector<InputSpec> inputs;  // one per def input, in order
  RefFn reference;
  CheckFn check;
  Tolerance tol;
  bool check_grad = true;       // gradients of inputs with grad == true (and float dtype)
  std::vector<int> grad_outputs{0};  // outputs whose weighted sum is the loss
  double grad_eps = 1e-2;       // finite-difference step
  bool check_shapes = true;     // schema shape inference vs kernel
  bool deterministic = true;    // false (random ops): GPU vs CPU compares shapes and dtypes only
  bool cpu = true;              // run on CPU (false: a GPU-only case, e.g. float16 tensor-core Conv,
                                // compared with the reference only)
  bool gpu = true;              // run on CUDA when a device exists
  unsigned seed = 1;

  explicit Case(std::string l = "") : label(std::move(l)) {}
  Case& Def(caffe2::OperatorDef d) { def = std::move(d); return *this; }
  Case& Inputs(std::vector<InputSpec> in) { inputs = std::move(in); return *this; }
  Case& Ref(RefFn f) { reference = std::move(f); return *this; }
  Case& Check(CheckFn f) { check = std::move(f); return *this; }
  Case& Tol(Tolerance t) { tol = t; return *this; }
  Case& Tol(double f32) { tol.f32 = f32; return *this; }
  Case& GradTol(double g, double eps = 1e-2) { tol.grad = g; grad_eps = eps; return *this; }
  Case& NoGrad() { check_grad = false; return *this; }
  Case& GradOutputs(std::vector<int> o) { grad_outputs = std::move(o); return *this; }
  Case& NoShapeCheck() { check_shapes = false; return *this; }
  Case& Random() { deterministic = false; return *this; }
  Case& CpuOnly() { gpu = false; return *this; }
  Case& GpuOnly() { cpu = false; return *this; }
  Case& Seed(unsigned s) { seed = s; return *this; }
};

// ---- registry ----
using CaseFactory = std::vector<Case> (*)();
struct CaseGroup {
  std::string name;  // the HN_OP_CASES name (usually a file's group of operators)
  CaseFactory make;
};
void RegisterCases(const char* group, CaseFactory make);
const std::vector<CaseGroup>& CaseGroups();
struct CaseRegisterer {
  CaseRegisterer(const char* group, CaseFactory make) { RegisterCases(group, make); }
};

// ---- running ----
enum class Status { kPass, kFail, kSkip };
struct Options {
  bool cpu = true;             // reference, shape and gradient columns
  bool gpu = true;             // GPU column (skipped without a device)
  std::string filter;          // only operator types containing this substring ("" = all)
  std::ostream* log = nullptr; // failure details and the table (nullptr: none)
};
struct CaseResult {
  std::string op, label;
  Status ref = Status::kSkip, shape = Status::kSkip, grad = Status::kSkip, gpu = Status::kSkip;
  std::vector<std::string> messages;  // why anything failed (or was skipped)
};
struct Report {
  std::vector<CaseResult> results;
  int pass = 0, fail = 0, skip = 0;  // over all cells
  std::string table;                 // markdown: operator x (ref, shape, grad, cuda) with counts
  std::vector<std::string> failures; // "Conv [k3 p1] grad: ..." lines
};
// Runs one case (exposed for tests of the harness itself).
CaseResult RunCase(const Case& c, const Options& opt);
// Runs every registered case (matching opt.filter) and builds the table.
Report RunAll(const Options& opt);

}  // namespace harness
}  // namespace hetnet

#define HN_OP_CASES(group)                                                                         \
  static std::vector<::hetnet::harness::Case> hn_op_cases_##group();                              \
  static ::hetnet::harness::CaseRegisterer hn_op_cases_reg_##group(#group, &hn_op_cases_##group); \
  static std::vector<::hetnet::harness::Case> hn_op_cases_##group()
