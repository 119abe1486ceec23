#include "serving/request_tensors.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "core/error.h"
#include "serving/system_shared_memory.h"
#include "serving/tensor_codec.h"

namespace hetnet::serving {
namespace {

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

template <typename Dims>
std::vector<int64_t> ToVector(const Dims& d) {
  return std::vector<int64_t>(d.begin(), d.end());
}

bool AnyRank(const inference::ModelConfig& config) {
  auto it = config.parameters().find("hetnet_any_input_rank");
  return it != config.parameters().end() && it->second.string_value() == "true";
}

// dims with -1 as wildcards, against a request shape (without its batch dim).
bool ShapeMatches(const std::vector<int64_t>& dims, const std::vector<int64_t>& shape) {
  if (dims.size() != shape.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != -1 && dims[i] != shape[i]) return false;
  return true;
}

// The shape the net reads for `rows` rows: reshape (with one -1 inferred) or the request's own shape.
std::vector<int64_t> NetShape(const inference::ModelConfig& config, const inference::ModelInput& in,
                              const std::vector<int64_t>& request_shape, int64_t rows) {
  std::vector<int64_t> inner(request_shape.begin() + (config.max_batch_size() > 0 ? 1 : 0), request_shape.end());
  if (in.has_reshape()) {
    int64_t count = 1, known = 1;
    for (auto d : inner) count *= d;
    std::vector<int64_t> r = ToVector(in.reshape().shape());
    for (auto d : r)
      if (d >= 0) known *= d;
    for (auto& d : r)
      if (d < 0) d = known ? count / known : 0;
    inner = r;
  }
  if (config.max_batch_size() > 0) inner.insert(inner.begin(), rows);
  return inner;
}

}  // namespace

void ValidateRequest(const inference::ModelConfig& config, int64_t max_tensor_elements, QueuedRequest* queued) {
  InferRequest& req = *queued->request;
  const std::string& m = config.name();
  std::set<std::string> seen;
  int64_t batch = -1;
  std::string key;
  for (const auto& in : req.inputs) {
    if (!seen.insert(in.name).second)
      HN_THROW(kInvalidArgument, "input '", in.name, "' appears more than once in the request for model '", m, "'");
    auto it = std::find_if(config.input().begin(), config.input().end(),
                           [&](const auto& c) { return c.name() == in.name; });
    if (it == config.input().end())
      HN_THROW(kInvalidArgument, "unexpected inference input '", in.name, "' for model '", m, "'");
    const std::string expected = ProtocolNameOfConfigType(it->data_type());
    if (in.datatype != expected)
      HN_THROW(kInvalidArgument, "inference input '", in.name, "' data-type is '", in.datatype, "', but model '", m,
               "' expects '", expected, "'");
    for (auto d : in.shape)
      if (d < 0) HN_THROW(kInvalidArgument, "input '", in.name, "' has a negative dimension: ", ShapeText(in.shape));
    const int64_t count = CheckedElementCount(in.shape, max_tensor_elements, "input '" + in.name + "'");
    std::vector<int64_t> inner = in.shape;
    if (config.max_batch_size() > 0) {
      if (in.shape.empty())
        HN_THROW(kInvalidArgument, "input '", in.name, "' of model '", m, "' needs a batch dimension");
      const int64_t b = in.shape[0];
      if (b < 1 || b > config.max_batch_size())
        HN_THROW(kInvalidArgument, "inference request batch-size must be <= ", config.max_batch_size(), " for '", m,
                 "' (input '", in.name, "' has batch size ", b, ")");
      if (batch >= 0 && b != batch)
        HN_THROW(kInvalidArgument, "input '", in.name, "' batch size ", b,
                 " does not match other inputs' batch size ", batch, " for model '", m, "'");
      batch = b;
      inner.erase(inner.begin());
    }
    if (!AnyRank(config) && !ShapeMatches(ToVector(it->dims()), inner)) {
      std::vector<int64_t> expected_shape = ToVector(it->dims());
      if (config.max_batch_size() > 0) expected_shape.insert(expected_shape.begin(), -1);
      HN_THROW(kInvalidArgument, "unexpected shape for input '", in.name, "' for model '", m, "'. Expected ",
               ShapeText(expected_shape), ", got ", ShapeText(in.shape));
    }
    const size_t elem = ProtocolElementSize(in.datatype);
    if (elem > 0 && in.byte_size != static_cast<size_t>(count) * elem)
      HN_THROW(kInvalidArgument, "input '", in.name, "' of model '", m, "' has ", in.byte_size, " bytes of data, but ",
               ShapeText(in.shape), " ", in.datatype, " needs ", static_cast<size_t>(count) * elem);
    if (elem == 0)  // BYTES: lengths checked here, so one bad request never fails a whole batch
      DecodeBytesElements(in.data, in.byte_size, count, nullptr, "input '" + in.name + "'");
    key += in.name + ShapeText(inner) + ";";
  }
  for (const auto& c : config.input())
    if (!seen.count(c.name()) && !c.optional())
      HN_THROW(kInvalidArgument, "expected ", config.input_size(), " inputs but got ", req.inputs.size(),
               " inputs for model '", m, "'; input '", c.name(), "' is missing");
  std::set<std::string> outs;
  for (const auto& o : req.requested_outputs) {
    if (!outs.insert(o).second) HN_THROW(kInvalidArgument, "output '", o, "' already exists in request");
    if (std::none_of(config.output().begin(), config.output().end(), [&](const auto& c) { return c.name() == o; }))
      HN_THROW(kInvalidArgument, "unexpected inference output '", o, "' for model '", m, "'");
  }
  queued->batch_size = batch < 0 ? 1 : batch;
  queued->shape_key = key;
}

std::vector<Tensor> BuildInputs(const inference::ModelConfig& config, const DynamicBatcher::Batch& batch,
                                bool pinned, size_t* bytes_copied) {
  int64_t rows = 0;
  for (const auto& q : batch) rows += q->batch_size;
  std::vector<Tensor> tensors;
  size_t copied = 0;
  for (const auto& c : config.input()) {
    const InferInput* first = nullptr;
    for (const auto& in : batch.front()->request->inputs)
      if (in.name == c.name()) first = &in;
    if (!first) {  // an optional input the requests omit
      tensors.emplace_back();
      continue;
    }
    const DataType dtype = DataTypeFromProtocol(first->datatype, "input '" + c.name() + "'");
    Tensor t(Device::CPU());
    if (pinned && dtype != DataType::String) t.set_pinned_host(true);
    t.Resize(NetShape(config, c, first->shape, rows));
    char* dst = static_cast<char*>(t.raw_mutable_data(dtype));
    int64_t element = 0;
    for (const auto& q : batch) {
      const InferInput* in = nullptr;
      for (const auto& x : q->request->inputs)
        if (x.name == c.name()) in = &x;
      if (!in) HN_THROW(kInvalidArgument, "input '", c.name(), "' is missing from a batched request");
      int64_t count = 1;
      for (auto d : in->shape) count *= d;
      if (dtype == DataType::String) {
        DecodeBytesElements(in->data, in->byte_size, count, reinterpret_cast<std::string*>(dst) + element,
                            "input '" + c.name() + "'");
      } else if (in->byte_size > 0) {
        std::memcpy(dst + element * static_cast<int64_t>(t.itemsize()), in->data, in->byte_size);
      }
      copied += in->byte_size;
      element += count;
    }
    tensors.push_back(std::move(t));
  }
  *bytes_copied = copied;
  return tensors;
}

std::vector<InferOutput> SliceOutputs(const inference::ModelConfig& config, const std::vector<std::string>& net_outputs,
                                      const std::vector<Tensor>& tensors, const InferRequest& request, int64_t row,
                                      int64_t batch_size, bool whole) {
  std::vector<std::string> names = request.requested_outputs;
  if (names.empty())
    for (const auto& o : config.output()) names.push_back(o.name());
  std::vector<InferOutput> outs;
  for (const auto& name : names) {
    auto cfg = std::find_if(config.output().begin(), config.output().end(), [&](const auto& o) { return o.name() == name; });
    auto pos = std::find(net_outputs.begin(), net_outputs.end(), name);
    if (pos == net_outputs.end()) HN_THROW(kRuntime, "model '", config.name(), "' did not produce output '", name, "'");
    const Tensor& t = tensors[pos - net_outputs.begin()];
    InferOutput out;
    out.name = name;
    out.datatype = ProtocolDataType(t.dtype());
    const std::string expected = ProtocolNameOfConfigType(cfg->data_type());
    if (out.datatype != expected)
      HN_THROW(kRuntime, "model '", config.name(), "' output '", name, "' is ", DataTypeName(t.dtype()),
               " but its config says ", expected);
    const bool batched = config.max_batch_size() > 0;
    if (whole) {
      out.tensor = t;
    } else {
      if (!batched || t.ndim() == 0 || t.dim(0) < row + batch_size)
        HN_THROW(kRuntime, "model '", config.name(), "' output '", name, "' has shape ", t.ShapeString(),
                 ", which does not hold the batch's ", row + batch_size, " rows");
      std::vector<int64_t> shape = t.shape();
      shape[0] = batch_size;
      Tensor slice(shape, t.dtype(), Device::CPU());
      const int64_t per_row = t.size_from_dim(1);
      if (t.dtype() == DataType::String) {
        const std::string* src = t.data<std::string>() + row * per_row;
        std::string* dst = slice.mutable_data<std::string>();
        std::copy(src, src + batch_size * per_row, dst);
      } else if (slice.nbytes() > 0) {
        std::memcpy(slice.raw_mutable_data(t.dtype()),
                    static_cast<const char*>(t.raw_data()) + row * per_row * static_cast<int64_t>(t.itemsize()),
                    slice.nbytes());
      }
      out.tensor = std::move(slice);
    }
    out.shape = out.tensor.shape();
    if (cfg->has_reshape()) {  // the net made the reshape's shape; the client sees dims
      std::vector<int64_t> dims = ToVector(cfg->dims());
      int64_t known = 1, count = out.tensor.numel() / std::max<int64_t>(1, batched ? out.shape[0] : 1);
      for (auto d : dims)
        if (d >= 0) known *= d;
      for (auto& d : dims)
        if (d < 0) d = known ? count / known : 0;
      if (batched) dims.insert(dims.begin(), out.shape[0]);
      out.shape = dims;
    }
    outs.push_back(std::move(out));
  }
  return outs;
}

void ReadSharedMemoryInputs(const SystemSharedMemory& shm, InferRequest* request, RequestMemoryLease* memory) {
  for (auto& in : request->inputs) {
    if (!in.shared_memory) continue;
    auto bytes = shm.Read(*in.shared_memory, "input '" + in.name + "'", memory);
    in.data = bytes->data();
    in.byte_size = bytes->size();
    in.holder = std::move(bytes);
  }
}

std::map<std::string, SharedMemoryTarget> SharedMemoryTargets(const SystemSharedMemory& shm,
                                                              const InferRequest& request) {
  std::map<std::string, SharedMemoryTarget> out;
  for (const auto& [name, ref] : request.output_shared_memory) out.emplace(name, shm.Target(ref, "output '" + name + "'"));
  return out;
}

void WriteSharedMemoryOutputs(const std::map<std::string, SharedMemoryTarget>& targets, InferResult* result) {
  if (!result->response) return;
  try {
    for (auto& out : result->response->outputs) {
      auto it = targets.find(out.name);
      if (it == targets.end()) continue;
      std::string scratch;
      it->second.Write(OutputBytes(out.tensor, &scratch));
      out.tensor = Tensor();
      out.shared_memory = it->second.ref();
    }
  } catch (const Error& e) {
    result->response.reset();
    result->error = e;
  } catch (const std::exception& e) {
    result->response.reset();
    result->error = Error(ErrorKind::kRuntime, MakeString("writing outputs to shared memory: ", e.what()));
  }
}

}  // namespace hetnet::serving
