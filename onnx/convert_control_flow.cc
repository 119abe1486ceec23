// Converters of ONNX's control flow If, Loop and Scan (opset 8's batched form too) onto the CPU
// operators OnnxIf, OnnxLoop and OnnxScan (operators/onnx_if_op, onnx_loop_op, onnx_scan_op). Each
// GraphProto attribute (then_branch, else_branch, body) is imported (onnx_subgraph_import.h) into a
// NetDef carried as a net argument (then_net, else_net, body), as Caffe2's If / While carry theirs.
// The operator runs it in a child workspace; the outer blobs a subgraph reads become inputs of the
// operator (arg outer_inputs names them), so that the executors order it and the init net fills the
// outer constants it reads. An If whose condition is known at import time is replaced by the
// branch it takes.
#include <algorithm>
#include <set>

#include "onnx/onnx_subgraph_import.h"

namespace hetnet::onnxio {

namespace {

void CheckCount(const ConvertContext& c, const Subnet& s, int inputs, int outputs, const std::string& expected) {
  const std::string node = NodeName(c);
  HN_CHECK_KIND(kInvalidArgument, s.net.external_input_size() == inputs, node, ": subgraph '", s.attr, "' has ",
                s.net.external_input_size(), " inputs, expected ", inputs, " (", expected, ")");
  HN_CHECK_KIND(kInvalidArgument, s.net.external_output_size() == outputs, node, ": subgraph '", s.attr, "' has ",
                s.net.external_output_size(), " outputs, expected ", outputs, " (", expected, ")");
}

// Checks that input i, where the model declares it, is a `want` tensor holding one value.
void CheckScalarInput(const ConvertContext& c, int i, caffe2::TensorProto::DataType want, const char* what) {
  const std::string node = NodeName(c);
  const auto dtype = c.Dtype(c.in(i));
  HN_CHECK_KIND(kInvalidArgument, dtype == caffe2::TensorProto::UNDEFINED || dtype == want, node, ": ", what, " '",
                c.in(i), "' is ", caffe2::TensorProto::DataType_Name(dtype), ", must be ",
                caffe2::TensorProto::DataType_Name(want));
  if (const auto* d = c.Dims(c.in(i))) {
    int64_t n = 1;
    for (int64_t x : *d) n = x < 0 || n < 0 ? -1 : n * x;
    HN_CHECK_KIND(kInvalidArgument, n == -1 || n == 1, node, ": ", what, " '", c.in(i), "' must hold one value, it has ",
                  n);
  }
}

// Records the dtype of output i where the model declares none (UNDEFINED: nothing known).
void SetDtype(ConvertContext& c, int i, caffe2::TensorProto::DataType dtype) {
  if (c.has_out(i) && dtype != caffe2::TensorProto::UNDEFINED) c.state().dtypes.emplace(c.out(i), dtype);
}

void InlineBranch(ConvertContext& c, const Subnet& s) {
  EmitSubnetOps(c, s, [](const std::string& n) { return n; });
  for (int i = 0; i < c.num_outputs(); ++i) {
    if (!c.has_out(i)) continue;
    if (s.out_consts[i]) {
      c.DefineConst(c.out(i), *s.out_consts[i]);
      continue;
    }
    c.Emit("Copy", {s.net.external_output(i)}, {c.out(i)});
    if (s.out_dims[i]) c.SetDims(c.out(i), *s.out_dims[i]);
    SetDtype(c, i, s.out_dtypes[i]);
  }
}

void If(ConvertContext& c) {
  HN_CHECK_KIND(kInvalidArgument, c.has_in(0), NodeName(c), ": the condition input is missing");
  CheckScalarInput(c, 0, caffe2::TensorProto::BOOL, "the condition");
  const char* expected = "a branch takes no inputs and makes one value per If output";
  if (const ConstTensor* k = c.Const(c.in(0)); k && k->numel() == 1 && !k->integer.empty()) {
    // Known at import time: only the branch taken is imported (the other may use what we lack).
    auto taken = ConvertSubgraph(c, k->integer[0] ? "then_branch" : "else_branch", {});
    CheckCount(c, *taken, 0, c.num_outputs(), expected);
    if (taken->inlinable) return InlineBranch(c, *taken);
  }
  auto then_net = ConvertSubgraph(c, "then_branch", {});
  auto else_net = ConvertSubgraph(c, "else_branch", {});
  for (const Subnet* s : {then_net.get(), else_net.get()}) CheckCount(c, *s, 0, c.num_outputs(), expected);
  auto& op = EmitControl(c, "OnnxIf", {c.in(0)}, {then_net.get(), else_net.get()});
  AddNetArg(op, "then_net", then_net->net);
  AddNetArg(op, "else_net", else_net->net);
  for (int i = 0; i < c.num_outputs(); ++i) {
    if (then_net->out_dtypes[i] == else_net->out_dtypes[i]) SetDtype(c, i, then_net->out_dtypes[i]);
    const auto *a = then_net->out_dims[i], *b = else_net->out_dims[i];
    if (!a || !b || a->size() != b->size()) continue;
    std::vector<int64_t> dims(*a);
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d] != (*b)[d]) dims[d] = -1;
    c.SetDims(op.output(i), dims);
  }
}

void Loop(ConvertContext& c) {
  const std::string node = NodeName(c);
  HN_CHECK_KIND(kInvalidArgument, c.num_inputs() >= 2, node, ": takes M and cond (either may be empty), has ",
                c.num_inputs(), " inputs");
  const int n = c.num_inputs() - 2;
  HN_CHECK_KIND(kInvalidArgument, c.num_outputs() >= n, node, ": ", n, " loop-carried values but only ", c.num_outputs(),
                " outputs");
  if (c.has_in(0)) CheckScalarInput(c, 0, caffe2::TensorProto::INT64, "the trip count M");
  if (c.has_in(1)) CheckScalarInput(c, 1, caffe2::TensorProto::BOOL, "the condition");
  static const std::vector<int64_t> kScalar;
  std::vector<LocalInfo> locals{{&kScalar, caffe2::TensorProto::INT64}, {&kScalar, caffe2::TensorProto::BOOL}};
  std::vector<std::string> inputs;
  for (int i = 0; i < 2; ++i)
    if (c.has_in(i)) inputs.push_back(c.in(i));
  // A carried value may change its shape from one iteration to the next: the body is told only the
  // initial value's rank (unless it declares more).
  std::vector<std::vector<int64_t>> ranks(n);
  for (int j = 0; j < n; ++j) {
    HN_CHECK_KIND(kInvalidArgument, c.has_in(2 + j), node, ": loop-carried input ", j, " is empty");
    const auto* d = c.Dims(c.in(2 + j));
    if (d) ranks[j].assign(d->size(), -1);
    locals.push_back({d ? &ranks[j] : nullptr, c.Dtype(c.in(2 + j))});
    inputs.push_back(c.in(2 + j));
  }
  auto body = ConvertSubgraph(c, "body", locals);
  CheckCount(c, *body, 2 + n, 1 + c.num_outputs(),
             "iteration number, condition and the carried values in; condition, carried values and scan outputs out");
  auto& op = EmitControl(c, "OnnxLoop", inputs, {body.get()});
  AddArg(op, "has_trip_count", int64_t{c.has_in(0)});
  AddArg(op, "has_cond", int64_t{c.has_in(1)});
  AddArg(op, "num_carried", int64_t{n});
  AddNetArg(op, "body", body->net);
  for (int i = 0; i < c.num_outputs(); ++i) {
    SetDtype(c, i, i < n ? c.Dtype(c.in(2 + i)) : body->out_dtypes[1 + i]);
    const auto* d = body->out_dims[1 + i];
    if (!d) continue;
    std::vector<int64_t> dims(*d);
    if (i >= n) dims.insert(dims.begin(), -1);  // scan outputs: one slice per iteration
    c.SetDims(op.output(i), dims);
  }
}

// Scan; batched: opset 8's form (input 0 sequence_lens, then every input and output with a batch
// axis 0, scan inputs scanned along axis 1, attr directions).
void ScanAny(ConvertContext& c, bool batched) {
  const std::string node = NodeName(c);
  const int first = batched ? 1 : 0, num_in = c.num_inputs() - first;
  if (batched && c.has_in(0)) c.Refuse("sequence_lens (per-batch sequence lengths) is not supported");
  const int64_t m = c.Int("num_scan_inputs", -1);
  HN_CHECK_KIND(kInvalidArgument, m >= 1 && m <= num_in, node, ": num_scan_inputs ", m, " must be in [1, ", num_in,
                "] (the number of state and scan inputs)");
  const int n = num_in - static_cast<int>(m), k = c.num_outputs() - n;
  HN_CHECK_KIND(kInvalidArgument, k >= 0, node, ": ", n, " states but only ", c.num_outputs(), " outputs");
  auto per = [&](const char* name, int count) {
    auto v = batched && std::string(name) != "directions" ? std::vector<int64_t>() : c.Ints(name);
    if (v.empty()) v.assign(count, 0);
    HN_CHECK_KIND(kInvalidArgument, static_cast<int>(v.size()) == count, node, ": ", name, " has ", v.size(),
                  " values, expected ", count);
    return v;
  };
  const int mi = static_cast<int>(m);
  const auto in_axes = per("scan_input_axes", mi), in_dirs = per(batched ? "directions" : "scan_input_directions", mi);
  const auto out_axes = per("scan_output_axes", k), out_dirs = per("scan_output_directions", k);
  std::vector<LocalInfo> locals;
  std::vector<std::vector<int64_t>> dims(num_in);  // without the batch axis; scan inputs: a slice's
  std::vector<std::string> inputs;
  int64_t length = -1, batch = -1;
  for (int i = 0; i < num_in; ++i) {
    const std::string& name = c.in(first + i);
    HN_CHECK_KIND(kInvalidArgument, !name.empty(), node, ": input ", first + i, " is empty");
    inputs.push_back(name);
    const auto* d = c.Dims(name);
    if (d) dims[i] = *d;
    if (d && batched) {
      HN_CHECK_KIND(kInvalidArgument, !dims[i].empty(), node, ": input '", name, "' has no batch axis (rank 0)");
      batch = dims[i][0];
      dims[i].erase(dims[i].begin());
    }
    if (d && i >= n) {
      const int64_t axis = c.Axis(in_axes[i - n], static_cast<int>(dims[i].size()), "scan_input_axes");
      if (dims[i][axis] >= 0) length = dims[i][axis];
      dims[i].erase(dims[i].begin() + axis);
    }
    if (d && i < n) std::fill(dims[i].begin(), dims[i].end(), -1);  // a state may change its shape (as Loop's)
    locals.push_back({d ? &dims[i] : nullptr, c.Dtype(name)});
  }
  auto body = ConvertSubgraph(c, "body", locals);
  CheckCount(c, *body, num_in, c.num_outputs(), "states and scan slices in; states and scan outputs out");
  auto& op = EmitControl(c, "OnnxScan", inputs, {body.get()});
  AddArg(op, "num_states", int64_t{n});
  AddArg(op, "num_scan_inputs", m);
  AddArg(op, "batched", int64_t{batched});
  AddArg(op, "scan_input_axes", in_axes);
  AddArg(op, "scan_input_directions", in_dirs);
  AddArg(op, "scan_output_axes", out_axes);
  AddArg(op, "scan_output_directions", out_dirs);
  AddNetArg(op, "body", body->net);
  for (int i = 0; i < c.num_outputs(); ++i) {
    SetDtype(c, i, i < n ? c.Dtype(inputs[i]) : body->out_dtypes[i]);
    const auto* d = body->out_dims[i];
    if (!d) continue;
    std::vector<int64_t> out(*d);
    if (i >= n) {
      const int64_t r = static_cast<int64_t>(out.size()), a = out_axes[i - n] < 0 ? out_axes[i - n] + r + 1 : out_axes[i - n];
      if (a < 0 || a > r) continue;  // refused by the operator when it runs
      out.insert(out.begin() + a, length);
    }
    if (batched) out.insert(out.begin(), batch);
    c.SetDims(op.output(i), out);
  }
}

}  // namespace

void RegisterControlFlowConverters(ConverterRegistry& r) {
  r.Add("If", 1, kNewestOpset, If);
  r.Add("Loop", 1, kNewestOpset, Loop);
  r.Add("Scan", 8, 8, [](ConvertContext& c) { ScanAny(c, true); });
  r.Add("Scan", 9, kNewestOpset, [](ConvertContext& c) { ScanAny(c, false); });
}

}  // namespace hetnet::onnxio
