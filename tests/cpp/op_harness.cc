// The differential operator harness (see op_harness.h for what it checks and why).
#include "tests/cpp/op_harness.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <ostream>
#include <random>
#include <sstream>
#include <type_traits>

#include "core/device.h"
#include "core/error.h"
#include "core/gradient.h"
#include "core/half.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace hetnet {
namespace harness {

// ---- registry ----
namespace {
std::vector<CaseGroup>& Groups() {
  static std::vector<CaseGroup> g;
  return g;
}
}  // namespace
void RegisterCases(const char* group, CaseFactory make) { Groups().push_back({group, make}); }
const std::vector<CaseGroup>& CaseGroups() { return Groups(); }

// ---- tensors ----
namespace {

bool IsFloating(DataType t) {
  return t == DataType::Float || t == DataType::Double || t == DataType::Float16 || t == DataType::BFloat16;
}

RefTensor Generate(const InputSpec& s, unsigned seed) {
  RefTensor r(s.shape, s.dtype);
  const int64_t n = r.numel();
  HN_ENFORCE(s.values.empty() || static_cast<int64_t>(s.values.size()) == n, "harness: input has ", n,
             " elements but ", s.values.size(), " explicit values");
  std::mt19937 gen(seed);
  if (!s.values.empty()) {
    r.data = s.values;
  } else if (!IsFloating(s.dtype)) {
    std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(std::ceil(s.lo)), static_cast<int64_t>(std::floor(s.hi)));
    for (auto& x : r.data) x = static_cast<double>(d(gen));
    if (s.dtype == DataType::Bool)
      for (auto& x : r.data) x = x != 0 ? 1.0 : 0.0;
  } else if (s.distinct) {
    std::vector<int64_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), gen);
    // Offset 0.37 (not 0.5) keeps symmetric ranges off exactly 0 (a kink for Relu-like ops).
    for (int64_t i = 0; i < n; ++i) r.data[i] = s.lo + (perm[i] + 0.37) * (s.hi - s.lo) / n;
  } else {
    std::uniform_real_distribution<double> d(s.lo, s.hi);
    for (auto& x : r.data) x = d(gen);
  }
  // What the kernel sees: values rounded to the input dtype.
  if (s.dtype == DataType::Float)
    for (auto& x : r.data) x = static_cast<float>(x);
  if (s.dtype == DataType::Float16)
    for (auto& x : r.data) x = HalfToFloat(FloatToHalf(static_cast<float>(x)));
  if (s.dtype == DataType::BFloat16)
    for (auto& x : r.data) x = BFloat16ToFloat(FloatToBFloat16(static_cast<float>(x)));
  return r;
}

Tensor ToTensor(const RefTensor& r) {
  Tensor t(r.shape, r.dtype);
  DispatchDataType(r.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::string>) {
      HN_THROW(kUnsupported, "harness: string tensors are not generated");
    } else {
      T* p = t.mutable_data<T>();
      for (int64_t i = 0; i < r.numel(); ++i) {
        if constexpr (std::is_same_v<T, Half>) p[i] = FloatToHalf(static_cast<float>(r.data[i]));
        else if constexpr (std::is_same_v<T, BFloat16>) p[i] = FloatToBFloat16(static_cast<float>(r.data[i]));
        else p[i] = static_cast<T>(r.data[i]);
      }
    }
  });
  return t;
}

RefTensor FromTensor(const Tensor& t0) {
  Tensor t = t0.device().is_cpu() ? Tensor() : t0.To(Device::CPU());
  const Tensor& h = t0.device().is_cpu() ? t0 : t;
  RefTensor r(h.shape(), h.dtype());
  DispatchDataType(h.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::string>) {
      HN_THROW(kUnsupported, "harness: string outputs are not compared");
    } else {
      const T* p = h.data<T>();
      for (int64_t i = 0; i < h.numel(); ++i) {
        if constexpr (std::is_same_v<T, Half>) r.data[i] = HalfToFloat(p[i]);
        else if constexpr (std::is_same_v<T, BFloat16>) r.data[i] = BFloat16ToFloat(p[i]);
        else r.data[i] = static_cast<double>(p[i]);
      }
    }
  });
  return r;
}

caffe2::OperatorDef OnDev(caffe2::OperatorDef d, Device dev) {
  d.clear_device_option();
  if (!dev.is_cpu()) DeviceToOption(dev, d.mutable_device_option());
  return d;
}

// Feeds every input (fresh: in-place operators may have overwritten them), runs def, returns outputs.
RefTensors Forward(Workspace& ws, const caffe2::OperatorDef& def, const RefTensors& in, Device dev) {
  // Inputs go where the schema's device inference puts them (e.g. shape inputs stay on CPU).
  std::vector<Device> in_dev(def.input_size(), dev);
  if (const OpSchema* s = OpSchemaRegistry::Find(def.type())) {
    auto d = s->InferDevices(def, dev).first;
    for (size_t i = 0; i < d.size() && i < in_dev.size(); ++i) in_dev[i] = d[i];
  }
  for (int i = 0; i < def.input_size(); ++i)
    ws.CreateBlob(def.input(i))->GetMutableTensor(in_dev[i])->CopyFrom(ToTensor(in[i]));
  auto op = CreateOperator(def, &ws);
  op->Run();
  op->Finish();
  RefTensors out;
  for (const auto& o : def.output()) out.push_back(FromTensor(ws.GetBlobOrThrow(o).GetTensor()));
  return out;
}

void LossWeights(const RefTensors& outs, const std::vector<int>& which, unsigned seed,
                 std::vector<std::vector<double>>* w) {
  std::mt19937 gen(seed * 7919u + 13u);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  w->assign(outs.size(), {});
  for (int o : which)
    if (o < static_cast<int>(outs.size()) && IsFloating(outs[o].dtype)) {
      (*w)[o].resize(outs[o].numel());
      for (auto& x : (*w)[o]) x = static_cast<float>(d(gen));
    }
}

double Loss(const RefTensors& outs, const std::vector<std::vector<double>>& w) {
  double l = 0;
  for (size_t o = 0; o < outs.size(); ++o)
    for (size_t k = 0; k < w[o].size() && k < outs[o].data.size(); ++k) l += w[o][k] * outs[o].data[k];
  return l;
}

// Compares got with want; "" when equal within tol, else the first mismatches.
std::string Compare(const std::string& what, const RefTensor& got, const RefTensor& want, double tol) {
  std::ostringstream ss;
  if (got.shape != want.shape) {
    ss << what << ": shape " << ShapeToString(got.shape) << ", expected " << ShapeToString(want.shape);
    return ss.str();
  }
  if (got.dtype != want.dtype) {
    ss << what << ": dtype " << DataTypeName(got.dtype) << ", expected " << DataTypeName(want.dtype);
    return ss.str();
  }
  int bad = 0;
  const double t = IsFloating(want.dtype) ? tol : 0.0;
  for (int64_t k = 0; k < want.numel(); ++k) {
    const double a = got.data[k], b = want.data[k];
    const bool ok = std::abs(a - b) <= t * std::max(1.0, std::abs(b)) || a == b || (std::isnan(a) && std::isnan(b));  // a == b: the same infinity
    if (!ok && ++bad <= 3) ss << (bad > 1 ? "; " : "") << what << "[" << k << "] = " << a << ", expected " << b;
  }
  if (bad > 3) ss << "; ... " << bad << " of " << want.numel() << " elements differ (tol " << tol << ")";
  return ss.str();
}

struct Grads {
  std::vector<std::string> names;  // per forward input: its gradient blob ("" if none)
  RefTensors values;               // per forward input (empty RefTensor when none)
};

// Runs the registered gradient ops after a forward run of def in ws on dev. Throws when the op has
// no gradient maker (the caller reports that as a skip).
Grads Backward(Workspace& ws, const caffe2::OperatorDef& def, const RefTensors& outs,
               const std::vector<std::vector<double>>& w, Device dev) {
  std::vector<std::string> gout;
  for (int o = 0; o < def.output_size(); ++o) {
    gout.push_back(def.output(o) + "_grad");
    if (!IsFloating(outs[o].dtype)) continue;
    RefTensor g(outs[o].shape, outs[o].dtype);
    if (!w[o].empty()) g.data = w[o];
    ws.CreateBlob(gout.back())->GetMutableTensor(dev)->CopyFrom(ToTensor(g));
  }
  const GradientMakerFn* maker = GradientRegistry::Find(def.type());
  HN_CHECK_KIND(kNotFound, maker, "no gradient registered for ", def.type());
  auto m = (*maker)(def, gout);
  for (const auto& g : m->GetGradientDefs()) {
    auto op = CreateOperator(g, &ws);
    op->Run();
    op->Finish();
  }
  Grads r;
  r.names = m->input_grads();
  r.names.resize(def.input_size());
  for (const auto& n : r.names) r.values.push_back(n.empty() ? RefTensor() : FromTensor(ws.GetBlobOrThrow(n).GetTensor()));
  return r;
}

std::string ErrText(const std::exception& e) {
  std::string s = e.what();
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

void Fail(CaseResult& r, Status& cell, const std::string& col, const std::string& msg) {
  cell = Status::kFail;
  r.messages.push_back(col + ": " + msg);
}

// A gradient check needs a registered maker and at least one float input asked for (an op on
// integer tensors has nothing to differentiate).
bool GradientApplies(const Case& c) {
  if (!c.check_grad || GradientRegistry::HasNoGradient(c.def.type())) return false;
  if (GradientRegistry::Find(c.def.type()) == nullptr) return false;
  for (const auto& in : c.inputs)
    if (in.grad && in.dtype == DataType::Float) return true;
  return false;
}

// Finite differences on CPU for every float input with grad == true.
void CheckGradients(const Case& c, const RefTensors& in, CaseResult& r) {
  Workspace ws;
  const Device cpu = Device::CPU();
  RefTensors outs = Forward(ws, c.def, in, cpu);
  std::vector<std::vector<double>> w;
  LossWeights(outs, c.grad_outputs, c.seed, &w);
  Grads g = Backward(ws, c.def, outs, w, cpu);
  bool any = false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!c.inputs[i].grad || in[i].dtype != DataType::Float) continue;
    if (g.names[i].empty()) {
      Fail(r, r.grad, "grad", "no gradient produced for input " + std::to_string(i) + " ('" + c.def.input(i) + "')");
      continue;
    }
    any = true;
    const RefTensor& analytic = g.values[i];
    if (analytic.shape != in[i].shape) {
      Fail(r, r.grad, "grad", "gradient of input " + std::to_string(i) + " has shape " +
                                  ShapeToString(analytic.shape) + ", input " + ShapeToString(in[i].shape));
      continue;
    }
    RefTensors p = in;
    int bad = 0;
    std::ostringstream ss;
    for (int64_t k = 0; k < in[i].numel(); ++k) {
      Workspace fw;
      p[i].data[k] = in[i].data[k] + c.grad_eps;
      const double lp = Loss(Forward(fw, c.def, p, cpu), w);
      p[i].data[k] = in[i].data[k] - c.grad_eps;
      const double lm = Loss(Forward(fw, c.def, p, cpu), w);
      p[i].data[k] = in[i].data[k];
      const double num = (lp - lm) / (2 * c.grad_eps), a = analytic.data[k];
      if (std::abs(a - num) > c.tol.grad * std::max(1.0, std::abs(num)) && ++bad <= 3)
        ss << (bad > 1 ? "; " : "") << "d/d " << c.def.input(i) << "[" << k << "]: analytic " << a << ", numeric "
           << num;
    }
    if (bad) {
      if (bad > 3) ss << "; ... " << bad << " of " << in[i].numel() << " differ";
      Fail(r, r.grad, "grad", ss.str());
    }
  }
  if (r.grad != Status::kFail) r.grad = any ? Status::kPass : Status::kSkip;
}

// GPU column: forward (and gradient ops when the case checks gradients) on CUDA:0 vs CPU (or vs the
// reference for GPU-only cases).
void CheckGpu(const Case& c, const RefTensors& in, CaseResult& r) {
  const Device gpu = Device::CUDA(0);
  const caffe2::OperatorDef gdef = OnDev(c.def, gpu);
  Workspace gws;
  RefTensors gout = Forward(gws, gdef, in, gpu);
  std::vector<std::string> errs;
  if (!c.cpu) {
    if (c.reference) {
      RefTensors want = c.reference(c.def, in);
      for (size_t o = 0; o < want.size() && o < gout.size(); ++o)
        if (!want[o].skip) {
          auto e = Compare("cuda " + c.def.output(o), gout[o], want[o], c.tol.For(want[o].dtype));
          if (!e.empty()) errs.push_back(e);
        }
    }
  } else {
    Workspace cws;
    RefTensors cout = Forward(cws, c.def, in, Device::CPU());
    for (size_t o = 0; o < cout.size(); ++o) {
      RefTensor want = cout[o];
      if (!c.deterministic) want.data = gout[o].data;  // random ops: shapes and dtypes only
      const double tol = want.dtype == DataType::Float16 ? c.tol.f16 : c.tol.gpu;
      auto e = Compare("cuda " + c.def.output(o) + " vs cpu", gout[o], want, tol);
      if (!e.empty()) errs.push_back(e);
    }
    if (c.deterministic && GradientApplies(c)) {
      std::vector<std::vector<double>> w;
      LossWeights(cout, c.grad_outputs, c.seed, &w);
      Grads cg = Backward(cws, c.def, cout, w, Device::CPU());
      Grads gg = Backward(gws, gdef, gout, w, gpu);
      for (size_t i = 0; i < cg.values.size(); ++i)
        if (!cg.names[i].empty()) {
          auto e = Compare("cuda grad " + cg.names[i] + " vs cpu", gg.values[i], cg.values[i], c.tol.gpu * 10);
          if (!e.empty()) errs.push_back(e);
        }
    }
  }
  if (c.check) {
    auto e = c.check(c.def, in, gout);
    if (!e.empty()) errs.push_back("cuda check: " + e);
  }
  if (errs.empty()) r.gpu = Status::kPass;
  for (auto& e : errs) Fail(r, r.gpu, "cuda", e);
}

}  // namespace

CaseResult RunCase(const Case& c, const Options& opt) {
  CaseResult r;
  r.op = c.def.type();
  r.label = c.label;
  RefTensors in;
  try {
    HN_ENFORCE(static_cast<int>(c.inputs.size()) == c.def.input_size(), "harness: case gives ", c.inputs.size(),
               " input specs for ", c.def.input_size(), " inputs");
    for (size_t i = 0; i < c.inputs.size(); ++i) in.push_back(Generate(c.inputs[i], c.seed * 1009u + i));
  } catch (const std::exception& e) {
    Fail(r, r.ref, "setup", ErrText(e));
    return r;
  }
  if (opt.cpu && c.cpu) {
    // Reference (and invariant) on the CPU kernel's outputs; shape inference.
    try {
      Workspace ws;
      RefTensors out = Forward(ws, c.def, in, Device::CPU());
      if (c.reference || c.check) r.ref = Status::kPass;
      if (c.reference) {
        RefTensors want = c.reference(c.def, in);
        for (size_t o = 0; o < want.size() && o < out.size(); ++o) {
          if (want[o].skip) continue;
          auto e = Compare(c.def.output(o), out[o], want[o], c.tol.For(want[o].dtype));
          if (!e.empty()) Fail(r, r.ref, "ref", e);
        }
      }
      if (c.check) {
        auto e = c.check(c.def, in, out);
        if (!e.empty()) Fail(r, r.ref, "check", e);
      }
      const OpSchema* schema = OpSchemaRegistry::Find(c.def.type());
      if (c.check_shapes && schema && schema->HasShapeInference()) {
        std::vector<TensorInfo> infos;
        for (const auto& t : in) infos.push_back(TensorInfo::Of(t.shape, t.dtype));
        auto inf = schema->InferShapes(c.def, infos);
        r.shape = Status::kPass;
        if (inf.size() != out.size()) {
          Fail(r, r.shape, "shape", "inference gives " + std::to_string(inf.size()) + " outputs, the kernel " +
                                        std::to_string(out.size()));
        } else {
          for (size_t o = 0; o < out.size(); ++o) {
            if (!inf[o].known) continue;
            if (inf[o].dims != out[o].shape || inf[o].dtype != out[o].dtype)
              Fail(r, r.shape, "shape", c.def.output(o) + ": inferred " + DataTypeName(inf[o].dtype) +
                                            ShapeToString(inf[o].dims) + ", kernel " + DataTypeName(out[o].dtype) +
                                            ShapeToString(out[o].shape));
          }
        }
      } else if (c.check_shapes) {
        r.messages.push_back("shape: skipped (no shape inference in the schema)");
      }
    } catch (const std::exception& e) {
      Fail(r, r.ref, "cpu run", ErrText(e));
    }
    if (GradientApplies(c)) {
      try {
        CheckGradients(c, in, r);
      } catch (const std::exception& e) {
        Fail(r, r.grad, "grad", ErrText(e));
      }
    }
  }
  if (opt.gpu && c.gpu && NumCudaDevices() > 0) {
    try {
      CheckGpu(c, in, r);
    } catch (const std::exception& e) {
      Fail(r, r.gpu, "cuda", ErrText(e));
    }
  }
  return r;
}

namespace {
struct Counts {
  int p = 0, f = 0, s = 0;
  void Add(Status st) { (st == Status::kPass ? p : st == Status::kFail ? f : s)++; }
  std::string Cell() const {
    const int n = p + f + s;
    if (f) return "FAIL " + std::to_string(f) + "/" + std::to_string(n);
    if (p) return "pass " + std::to_string(p) + (s ? " (" + std::to_string(s) + " skip)" : "");
    return "skip";
  }
};
}  // namespace

Report RunAll(const Options& opt) {
  Report rep;
  std::map<std::string, Counts[4]> table;
  const bool have_gpu = NumCudaDevices() > 0;
  for (const auto& g : CaseGroups()) {
    std::vector<Case> cases;
    try {
      cases = g.make();
    } catch (const std::exception& e) {
      rep.fail++;
      rep.failures.push_back("group " + g.name + ": building the cases threw: " + ErrText(e));
      continue;
    }
    for (const auto& c : cases) {
      if (!opt.filter.empty() && c.def.type().find(opt.filter) == std::string::npos) continue;
      CaseResult r = RunCase(c, opt);
      auto& row = table[r.op];
      const Status cells[4] = {r.ref, r.shape, r.grad, r.gpu};
      for (int k = 0; k < 4; ++k) {
        row[k].Add(cells[k]);
        (cells[k] == Status::kPass ? rep.pass : cells[k] == Status::kFail ? rep.fail : rep.skip)++;
      }
      for (const auto& m : r.messages)
        if (m.find("skipped") == std::string::npos) rep.failures.push_back(r.op + " [" + r.label + "] " + m);
      rep.results.push_back(std::move(r));
    }
  }
  std::ostringstream t;
  t << "| operator | cases | cpu vs float64 ref | shape inference | gradient (finite diff.) | cuda vs cpu |\n"
    << "|---|---|---|---|---|---|\n";
  for (const auto& [op, row] : table) {
    t << "| " << op << " | " << (row[0].p + row[0].f + row[0].s) << " | " << row[0].Cell() << " | " << row[1].Cell()
      << " | " << row[2].Cell() << " | " << (have_gpu || !opt.gpu ? row[3].Cell() : "skip (no CUDA device)")
      << " |\n";
  }
  t << "\nTotals: " << rep.pass << " pass, " << rep.fail << " fail, " << rep.skip << " skip (cells over "
    << rep.results.size() << " cases)\n";
  rep.table = t.str();
  if (opt.log) {
    *opt.log << rep.table;
    for (const auto& f : rep.failures) *opt.log << "FAIL " << f << "\n";
  }
  return rep;
}

}  // namespace harness
}  // namespace hetnet
