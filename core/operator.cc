#include "core/operator.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <tuple>

#include "core/workspace.h"

namespace hetnet {

namespace {
using Key = std::tuple<std::string, int, std::string>;
std::map<Key, OperatorCreator>& Creators() {
  static std::map<Key, OperatorCreator> m;
  return m;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(a[i - 1]) == std::tolower(b[j - 1]);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> SplitEngines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string e;
  while (std::getline(ss, e, ','))
    if (!e.empty()) out.push_back(e);
  return out;
}
}  // namespace

void OperatorRegistry::Register(const std::string& type, DeviceType device, const std::string& engine,
                                OperatorCreator fn) {
  Creators()[Key{type, static_cast<int>(device), engine}] = std::move(fn);
}

const OperatorCreator* OperatorRegistry::Find(const std::string& type, DeviceType device,
                                              const std::string& engine) {
  auto& m = Creators();
  auto it = m.find(Key{type, static_cast<int>(device), engine});
  return it == m.end() ? nullptr : &it->second;
}

std::vector<std::string> OperatorRegistry::Types(DeviceType device) {
  std::vector<std::string> out;
  for (const auto& [k, v] : Creators())
    if (std::get<1>(k) == static_cast<int>(device) &&
        (out.empty() || out.back() != std::get<0>(k)))
      out.push_back(std::get<0>(k));
  return out;
}

std::vector<std::string> OperatorRegistry::Engines(const std::string& type, DeviceType device) {
  std::vector<std::string> out;
  for (const auto& [k, v] : Creators())
    if (std::get<0>(k) == type && std::get<1>(k) == static_cast<int>(device)) out.push_back(std::get<2>(k));
  return out;
}

std::vector<std::string> NearestOperatorNames(const std::string& name, size_t limit) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& [k, v] : Creators())
    if (scored.empty() || scored.back().second != std::get<0>(k))
      scored.emplace_back(EditDistance(name, std::get<0>(k)), std::get<0>(k));
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& s : scored) {
    if (out.size() >= limit) break;
    if (std::find(out.begin(), out.end(), s.second) == out.end()) out.push_back(s.second);
  }
  return out;
}

// The engines a CPU op without an engine tries first: HETNET_CPU_ENGINE (a comma-separated list as
// in def.engine) or, unset, "DNNL" (oneDNN, registered only when built with it; measured faster
// than the Eigen kernels for Conv and FC: benchmarks/RESULTS.md). An engine not registered for an
// op type falls through to the default kernel, so HETNET_CPU_ENGINE=EIGEN (or empty), like
// engine "EIGEN" on a def, runs the portable path; a registered engine given on the def wins.
const std::vector<std::string>& DefaultCpuEngines() {
  static const std::vector<std::string> engines = [] {
    const char* env = std::getenv("HETNET_CPU_ENGINE");
    return SplitEngines(env ? env : "DNNL");
  }();
  return engines;
}

std::string ResolveEngine(const caffe2::OperatorDef& def, Device device) {
  std::vector<std::string> engines = SplitEngines(def.engine());
  // On CPU, engines named for another device or library (brew and Caffe2 scripts write "CUDNN" on
  // every Conv) mean "whatever runs here": the CPU default order after them. "EIGEN" (or
  // "DEFAULT") asks for the portable kernels, and stops there.
  const bool portable = std::find(engines.begin(), engines.end(), "EIGEN") != engines.end() ||
                        std::find(engines.begin(), engines.end(), "DEFAULT") != engines.end();
  if (engines.empty() && device.type == DeviceType::CUDA) engines.push_back("CUDNN");  // as Caffe2 did
  if (device.type == DeviceType::CPU && !portable)
    for (const auto& e : DefaultCpuEngines()) engines.push_back(e);
  for (const auto& e : engines)
    if (OperatorRegistry::Find(def.type(), device.type, e)) return e;
  return "";
}

std::unique_ptr<OperatorBase> CreateOperator(const caffe2::OperatorDef& def, Workspace* ws) {
  const Device device = DeviceFromOption(def.device_option());
  if (!device.is_cpu()) GetDeviceBackend(device);  // throws for a missing backend or GPU id
  if (const OpSchema* schema = OpSchemaRegistry::Find(def.type())) schema->Verify(def);
  const std::string engine = ResolveEngine(def, device);
  if (const auto* fn = OperatorRegistry::Find(def.type(), device.type, engine)) {
    auto op = (*fn)(def, ws);
    op->set_engine(engine);
    return op;
  }
  const bool known_anywhere = OperatorRegistry::Has(def.type(), DeviceType::CPU) ||
                              OperatorRegistry::Has(def.type(), DeviceType::CUDA);
  if (known_anywhere)
    HN_THROW(kNotFound, "operator type '", def.type(), "' has no kernel for ", DeviceTypeName(static_cast<int>(device.type)));
  std::string near;
  for (const auto& n : NearestOperatorNames(def.type())) near += (near.empty() ? "" : ", ") + n;
  HN_THROW(kNotFound, "unknown operator type '", def.type(), "'; did you mean: ", near, "?");
}

// ---- OperatorBase ----

OperatorBase::OperatorBase(const caffe2::OperatorDef& def, Workspace* ws)
    : def_(def), args_(def_), device_(DeviceFromOption(def.device_option())) {
  const OpSchema* schema = OpSchemaRegistry::Find(def.type());
  auto devs = schema ? schema->InferDevices(def, device_)
                     : std::make_pair(std::vector<Device>(def.input_size(), device_),
                                      std::vector<Device>(def.output_size(), device_));
  input_devices_ = std::move(devs.first);
  output_devices_ = std::move(devs.second);
  // Outputs first so that an in-place op's output and input are one (local) blob.
  for (const auto& name : def.output()) outputs_.push_back(ws->CreateBlob(name));
  for (const auto& name : def.input()) {
    const Blob* b = ws->GetBlob(name);
    HN_CHECK_KIND(kNotFound, b, "input blob '", name, "' of operator ", def.type(), " does not exist in the workspace");
    inputs_.push_back(b);
  }
}

const Tensor& OperatorBase::InputTensor(int i) const {
  const Blob* b = inputs_.at(i);
  const std::string& name = def_.input(i);
  if (b->empty())
    HN_THROW(kNotFound, "input ", i, " ('", name, "') has no data: it was never fed and no earlier operator produced it");
  if (!b->IsTensor())
    HN_THROW(kInvalidArgument, "input ", i, " ('", name, "') holds ", b->TypeName(), ", not a tensor");
  const Tensor& t = b->GetTensor();
  HN_ENFORCE(t.initialized(), "input ", i, " ('", name, "') has no data: feed it or run the net that produces it");
  if (t.device() != input_devices_[i])
    HN_THROW(kInvalidArgument, "input ", i, " ('", name, "') lives on ", t.device().str(), " but operator ",
             def_.type(), " reads it on ", input_devices_[i].str(),
             "; nets created by hetnet insert this copy, so the blob was changed after the net was created");
  return t;
}

Tensor* OperatorBase::OutputTensor(int i) { return outputs_.at(i)->GetMutableTensor(output_devices_[i]); }

Tensor* OperatorBase::OutputTensor(int i, std::vector<int64_t> shape, DataType dtype) {
  Tensor* t = OutputTensor(i);
  try {
    t->Resize(std::move(shape));
    t->raw_mutable_data(dtype);
  } catch (Error& e) {  // a shape that overflows, a cap, out of memory: name the blob
    throw e.AddContext(MakeString("while allocating output ", i, " ('", def_.output(i), "')"));
  }
  return t;
}

}  // namespace hetnet
