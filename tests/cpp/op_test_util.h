// Helpers for the operator tests: build an OperatorDef, feed and fetch tensors (on any device), run
// one operator (created, run and finished directly so GPU work is complete on return), check schema
// shape inference against the kernel, and compare an operator's registered gradient with central
// finite differences.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace hetnet {
namespace optest {

inline caffe2::Argument ArgF(const std::string& n, float v) { caffe2::Argument a; a.set_name(n); a.set_f(v); return a; }
inline caffe2::Argument ArgI(const std::string& n, int64_t v) { caffe2::Argument a; a.set_name(n); a.set_i(v); return a; }
inline caffe2::Argument ArgS(const std::string& n, const std::string& v) { caffe2::Argument a; a.set_name(n); a.set_s(v); return a; }
inline caffe2::Argument ArgInts(const std::string& n, const std::vector<int64_t>& v) {
  caffe2::Argument a; a.set_name(n); for (auto x : v) a.add_ints(x); return a;
}
inline caffe2::Argument ArgFloats(const std::string& n, const std::vector<float>& v) {
  caffe2::Argument a; a.set_name(n); for (auto x : v) a.add_floats(x); return a;
}
inline caffe2::Argument ArgStrings(const std::string& n, const std::vector<std::string>& v) {
  caffe2::Argument a; a.set_name(n); for (auto& x : v) a.add_strings(x); return a;
}

inline caffe2::OperatorDef MakeOp(const std::string& type, const std::vector<std::string>& in,
                                  const std::vector<std::string>& out, const std::vector<caffe2::Argument>& args = {},
                                  Device dev = Device::CPU()) {
  caffe2::OperatorDef def;
  def.set_type(type);
  for (auto& i : in) def.add_input(i);
  for (auto& o : out) def.add_output(o);
  for (auto& a : args) *def.add_arg() = a;
  if (!dev.is_cpu()) DeviceToOption(dev, def.mutable_device_option());
  return def;
}

inline caffe2::OperatorDef OnDevice(caffe2::OperatorDef def, Device dev) {
  def.clear_device_option();
  if (!dev.is_cpu()) DeviceToOption(dev, def.mutable_device_option());
  return def;
}

template <typename T>
Tensor HostTensor(const std::vector<int64_t>& shape, const std::vector<T>& v) {
  Tensor t(shape, DataTypeOf<T>::value);
  REQUIRE(static_cast<size_t>(t.numel()) == v.size());
  T* p = t.mutable_data<T>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  return t;
}

// Puts a copy of host tensor `t` into blob `name` on `dev`.
inline void Feed(Workspace& ws, const std::string& name, const Tensor& t, Device dev = Device::CPU()) {
  ws.CreateBlob(name)->GetMutableTensor(dev)->CopyFrom(t);
}
template <typename T>
void Feed(Workspace& ws, const std::string& name, const std::vector<int64_t>& shape, const std::vector<T>& v,
          Device dev = Device::CPU()) {
  Feed(ws, name, HostTensor<T>(shape, v), dev);
}

// A host copy of blob `name`.
inline Tensor Fetch(const Workspace& ws, const std::string& name) {
  return ws.GetBlobOrThrow(name).GetTensor().To(Device::CPU());
}
template <typename T>
std::vector<T> FetchVec(const Workspace& ws, const std::string& name) {
  Tensor t = Fetch(ws, name);
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

inline void RunOp(Workspace& ws, const caffe2::OperatorDef& def) {
  auto op = CreateOperator(def, &ws);
  op->Run();
  op->Finish();
}

// Runs def once on CPU with `inputs` fed as its inputs (in order); the error text, "" when it ran.
inline std::string RunError(const caffe2::OperatorDef& def, const std::vector<Tensor>& inputs) {
  Workspace ws;
  for (size_t i = 0; i < inputs.size(); ++i) *ws.CreateBlob(def.input(i))->GetMutable<Tensor>() = inputs[i];
  try {
    CreateOperator(def, &ws)->Run();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// The largest |got[i] - want[i]| / max(1, |want[i]|) and its index: one assertion per tensor (an
// assertion per element made the sanitizer builds' runs of the large kernel tests slow).
struct WorstError {
  double error = 0;
  size_t index = 0;
};
template <class Got, class Want>
WorstError Worst(const Got& got, const Want& want) {
  WorstError w;
  for (size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(double(got[i]) - double(want[i])) / std::max(1.0, std::abs(double(want[i])));
    if (e > w.error || std::isnan(e)) w.error = std::isnan(e) ? INFINITY : e, w.index = i;
  }
  return w;
}

inline std::vector<float> RandomVec(size_t n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

inline int64_t Numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Expects running def to throw hetnet::Error whose message contains every string in `parts`.
inline void RequireThrowsWith(Workspace& ws, const caffe2::OperatorDef& def, const std::vector<std::string>& parts) {
  try {
    RunOp(ws, def);
    FAIL("expected an error from " << def.type());
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) {
      INFO("message: " << msg);
      CHECK(msg.find(p) != std::string::npos);
    }
  }
}

// Schema shape inference from the current input blobs equals the shapes (and dtypes) the kernel made.
inline void CheckShapeInference(const Workspace& ws, const caffe2::OperatorDef& def) {
  const OpSchema* schema = OpSchemaRegistry::Find(def.type());
  REQUIRE(schema);
  REQUIRE(schema->HasShapeInference());
  std::vector<TensorInfo> in;
  for (const auto& i : def.input()) {
    const Tensor& t = ws.GetBlobOrThrow(i).GetTensor();
    in.push_back(TensorInfo::Of(t.shape(), t.dtype()));
  }
  auto out = schema->InferShapes(def, in);
  REQUIRE(out.size() == static_cast<size_t>(def.output_size()));
  for (int o = 0; o < def.output_size(); ++o) {
    if (!out[o].known) continue;  // the schema may leave data-dependent shapes unknown
    const Tensor& t = ws.GetBlobOrThrow(def.output(o)).GetTensor();
    INFO(def.type() << " output " << o);
    CHECK(out[o].dims == t.shape());
    CHECK(out[o].dtype == t.dtype());
  }
}

// Compares the registered gradient of `def` (inputs already fed, float32) with central differences
// of L = sum_k w_k * output[out_idx]_k for random w, for each input in `check_inputs`. Runs on the
// devices the blobs and def say. Float64 accumulation; relative tolerance `tol`.
inline void CheckGradient(Workspace& ws, const caffe2::OperatorDef& def, const std::vector<int>& check_inputs,
                          int out_idx = 0, float eps = 1e-2f, double tol = 1e-2, unsigned seed = 7) {
  RunOp(ws, def);
  const Device dev = DeviceFromOption(def.device_option());
  Tensor y = Fetch(ws, def.output(out_idx));
  const std::vector<float> w = RandomVec(y.numel(), seed);
  auto loss = [&]() {
    RunOp(ws, def);
    Tensor yy = Fetch(ws, def.output(out_idx));
    double l = 0;
    for (int64_t k = 0; k < yy.numel(); ++k) l += static_cast<double>(w[k]) * yy.data<float>()[k];
    return l;
  };
  // Gradient ops: output gradients are w for out_idx and zero for the others.
  std::vector<std::string> gout;
  for (int o = 0; o < def.output_size(); ++o) {
    gout.push_back(def.output(o) + "_grad");
    Tensor yo = Fetch(ws, def.output(o));
    std::vector<float> g(yo.numel(), 0.f);
    if (o == out_idx) g = w;
    if (yo.dtype() == DataType::Float) Feed<float>(ws, gout.back(), yo.shape(), g, dev);
  }
  const GradientMakerFn* maker = GradientRegistry::Find(def.type());
  REQUIRE(maker);
  auto m = (*maker)(def, gout);
  auto gdefs = m->GetGradientDefs();
  for (const auto& g : gdefs) RunOp(ws, g);
  const auto& gin = m->input_grads();
  for (int i : check_inputs) {
    REQUIRE(static_cast<size_t>(i) < gin.size());
    REQUIRE(!gin[i].empty());
    Tensor analytic = Fetch(ws, gin[i]);
    Tensor x = Fetch(ws, def.input(i));
    REQUIRE(analytic.shape() == x.shape());
    for (int64_t k = 0; k < x.numel(); ++k) {
      Tensor plus(x.shape(), DataType::Float), minus(x.shape(), DataType::Float);
      std::copy(x.data<float>(), x.data<float>() + x.numel(), plus.mutable_data<float>());
      std::copy(x.data<float>(), x.data<float>() + x.numel(), minus.mutable_data<float>());
      plus.mutable_data<float>()[k] += eps;
      minus.mutable_data<float>()[k] -= eps;
      Feed(ws, def.input(i), plus, dev);
      const double lp = loss();
      Feed(ws, def.input(i), minus, dev);
      const double lm = loss();
      const double numeric = (lp - lm) / (2.0 * eps);
      const double a = analytic.data<float>()[k];
      INFO(def.type() << " d/d input " << i << " ('" << def.input(i) << "') element " << k << ": analytic " << a
                      << " numeric " << numeric);
      CHECK(std::abs(a - numeric) <= tol * std::max(1.0, std::abs(numeric)));
    }
    Feed(ws, def.input(i), x, dev);
  }
}

// True (after a WARN) when there is no GPU: the caller returns.
inline bool SkipWithoutGpu() {
  if (NumCudaDevices() == 0) {
    WARN("skipped: no CUDA device");
    return true;
  }
  return false;
}

// Runs def on CPU and on CUDA:0 from the same host inputs and compares every float output.
inline void CompareCpuGpu(const caffe2::OperatorDef& def, const std::vector<std::pair<std::string, Tensor>>& inputs,
                          double tol = 1e-4) {
  Workspace cpu, gpu;
  for (const auto& [n, t] : inputs) {
    Feed(cpu, n, t);
    Feed(gpu, n, t, Device::CUDA(0));
  }
  RunOp(cpu, OnDevice(def, Device::CPU()));
  RunOp(gpu, OnDevice(def, Device::CUDA(0)));
  for (const auto& o : def.output()) {
    Tensor a = Fetch(cpu, o), b = Fetch(gpu, o);
    INFO(def.type() << " output '" << o << "'");
    REQUIRE(a.shape() == b.shape());
    REQUIRE(a.dtype() == b.dtype());
    if (a.dtype() != DataType::Float) continue;
    for (int64_t k = 0; k < a.numel(); ++k)
      CHECK(std::abs(a.data<float>()[k] - b.data<float>()[k]) <= tol * std::max(1.f, std::abs(a.data<float>()[k])));
  }
}

}  // namespace optest
}  // namespace hetnet
