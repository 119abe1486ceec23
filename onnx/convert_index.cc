// Converters of ONNX ops with CPU-only hetnet operators of the same name and arguments (operators/
// cumsum_op, range_onehot_ops, select_ops, scatter_ops): CumSum, CumProd, OneHot, EyeLike, NonZero, Compress,
// ReverseSequence, GatherND, ScatterND, ScatterElements (and the deprecated Scatter, opsets 9-10),
// TensorScatter,
// Einsum and Det (operators/einsum_op), NonMaxSuppression (operators/nms_op), Unique (operators/unique_op),
// DFT (operators/dft_op), STFT (operators/onnx_stft_op, as OnnxSTFT), Col2Im (operators/col2im_op),
// HannWindow / HammingWindow / BlackmanWindow (operators/window_ops), MelWeightMatrix (as OnnxMelWeightMatrix).
// Registered from RegisterShapeConverters; Range's run-time form is emitted from convert_shape.cc.
#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

// Emits op_type(inputs) -> out(0) with the listed integer / string attributes passed on where given.
caffe2::OperatorDef& PassThrough(ConvertContext& c, const std::string& type, int num_inputs,
                                 const std::vector<std::string>& ints, const std::vector<std::string>& strings = {}) {
  std::vector<std::string> ins;
  for (int i = 0; i < num_inputs; ++i) {
    if (!c.has_in(i)) HN_THROW(kInvalidArgument, c.op_type(), ": input ", i, " is required");
    ins.push_back(c.in(i));
  }
  auto& op = c.Emit(type, ins, {c.out(0)});
  for (const auto& a : ints)
    if (c.Has(a)) AddArg(op, a, c.Int(a, 0));
  for (const auto& a : strings)
    if (c.Has(a)) AddArg(op, a, c.Str(a, ""));
  return op;
}

}  // namespace

void RegisterIndexConverters(ConverterRegistry& r) {
  for (const char* op : {"CumSum", "CumProd"}) {
    r.Add(op, [](ConvertContext& c) {
      PassThrough(c, c.op_type(), 2, {"exclusive", "reverse"});
      c.SameDims(c.out(0), c.in(0));
    });
  }
  r.Add("OneHot", [](ConvertContext& c) {
    PassThrough(c, "OneHot", 3, {"axis"});
    if (c.Rank(c.in(0)) >= 0) c.SetRank(c.out(0), c.Rank(c.in(0)) + 1);
  });
  r.Add("EyeLike", [](ConvertContext& c) {
    auto& op = c.Emit("EyeLike", {c.in(0)}, {c.out(0)});
    AddArg(op, "k", c.Int("k", 0));
    if (c.Has("dtype")) {
      const auto t = DtypeFromOnnx(static_cast<int32_t>(c.Int("dtype", 0)));
      if (t == caffe2::TensorProto::UNDEFINED || t == caffe2::TensorProto::STRING)
        c.Refuse(std::string("dtype ") + OnnxTypeName(static_cast<int32_t>(c.Int("dtype", 0))) + " is not supported");
      AddArg(op, "dtype", static_cast<int64_t>(t));
    }
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("NonZero", [](ConvertContext& c) {
    PassThrough(c, "NonZero", 1, {});
    c.SetRank(c.out(0), 2);
  });
  r.Add("Compress", [](ConvertContext& c) {
    PassThrough(c, "Compress", 2, {"axis"});
    if (!c.Has("axis")) c.SetRank(c.out(0), 1);
    else if (c.Rank(c.in(0)) >= 0) c.SetRank(c.out(0), c.Rank(c.in(0)));
  });
  r.Add("ReverseSequence", [](ConvertContext& c) {
    PassThrough(c, "ReverseSequence", 2, {"batch_axis", "time_axis"});
    c.SameDims(c.out(0), c.in(0));
  });
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"}) {
    r.Add(op, [](ConvertContext& c) {
      const bool mel = c.op_type() == "MelWeightMatrix";  // operators/onnx_mel_weight_matrix_op
      auto& op = mel ? c.Emit("OnnxMelWeightMatrix", {c.in(0), c.in(1), c.in(2), c.in(3), c.in(4)}, {c.out(0)})
                     : c.Emit(c.op_type(), {c.in(0)}, {c.out(0)});
      if (!mel) AddArg(op, "periodic", c.Int("periodic", 1));
      const int32_t onnx_type = static_cast<int32_t>(c.Int("output_datatype", 1));
      const auto t = DtypeFromOnnx(onnx_type);
      if (t == caffe2::TensorProto::UNDEFINED || t == caffe2::TensorProto::STRING)
        c.Refuse(std::string("output_datatype ") + OnnxTypeName(onnx_type) + " is not supported");
      AddArg(op, "dtype", static_cast<int64_t>(t));
      c.SetRank(c.out(0), mel ? 2 : 1);
    });
  }
  // QuantizeLinear / DequantizeLinear: the inputs and axis / block_size passed on, output_dtype as our
  // dtype (a type hetnet tensors lack is refused).
  for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) {
    r.Add(op, [](ConvertContext& c) {
      if (c.Has("precision")) c.Refuse("attribute precision is not supported");
      auto& op = PassThrough(c, c.op_type(), c.has_in(2) ? 3 : 2, {"axis", "block_size", "saturate"});
      if (c.Has("output_dtype") && c.Int("output_dtype", 0) != 0) {
        const int32_t onnx_type = static_cast<int32_t>(c.Int("output_dtype", 0));
        const auto t = DtypeFromOnnx(onnx_type);
        if (t == caffe2::TensorProto::UNDEFINED || t == caffe2::TensorProto::STRING)
          c.Refuse(std::string("output_dtype ") + OnnxTypeName(onnx_type) + " is not supported");
        AddArg(op, "dtype", static_cast<int64_t>(t));
      }
      c.SameDims(c.out(0), c.in(0));
    });
  }
  r.Add("DynamicQuantizeLinear", [](ConvertContext& c) {
    c.Emit("DynamicQuantizeLinear", {c.in(0)}, {c.out(0), c.has_out(1) ? c.out(1) : c.Fresh(c.out(0) + "_scale"),
                                                c.has_out(2) ? c.out(2) : c.Fresh(c.out(0) + "_zero_point")});
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("NonMaxSuppression", [](ConvertContext& c) {
    // Trailing inputs may be omitted; an omitted one in the middle takes its ONNX default as a constant.
    int last = 1;
    for (int i = 2; i < 5; ++i)
      if (c.has_in(i)) last = i;
    std::vector<std::string> ins{c.in(0), c.in(1)};
    for (int i = 2; i <= last; ++i) {
      if (c.has_in(i)) {
        ins.push_back(c.in(i));
      } else if (i == 2) {
        ConstTensor zero;
        zero.dtype = caffe2::TensorProto::INT64;
        zero.integer = {0};
        ins.push_back(c.AddConst(c.out(0) + "_max_boxes", std::move(zero)));
      } else {  // i == 3: iou_threshold (score_threshold, the last, is never omitted before a given one)
        ins.push_back(c.AddConst(c.out(0) + "_iou", ConstTensor::Float({}, {0.0})));
      }
    }
    AddArg(c.Emit("NonMaxSuppression", ins, {c.out(0)}), "center_point_box", c.Int("center_point_box", 0));
    c.SetRank(c.out(0), 2);
  });
  r.Add("Unique", [](ConvertContext& c) {
    std::vector<std::string> outs;
    int last = 0;
    for (int i = 0; i < c.num_outputs(); ++i)
      if (c.has_out(i)) last = i;
    for (int i = 0; i <= last; ++i) outs.push_back(c.has_out(i) ? c.out(i) : c.Fresh(c.out(0) + "_unused"));
    auto& op = c.Emit("Unique", {c.in(0)}, outs);
    if (c.Has("axis")) AddArg(op, "axis", c.Int("axis", 0));
    AddArg(op, "sorted", c.Int("sorted", 1));
  });
  r.Add("DFT", [](ConvertContext& c) {  // axis: an attribute before opset 20, an input since
    std::vector<std::string> ins{c.in(0)};
    auto& op = c.Emit("DFT", {}, {c.out(0)});
    AddArg(op, "length_input", static_cast<int64_t>(c.has_in(1) ? 1 : -1));
    if (c.has_in(1)) ins.push_back(c.in(1));
    if (c.opset() >= 20 && c.has_in(2)) {
      AddArg(op, "axis_input", static_cast<int64_t>(ins.size()));
      ins.push_back(c.in(2));
    }
    for (const auto& i : ins) op.add_input(i);
    AddArg(op, "axis", c.opset() < 20 ? c.Int("axis", 1) : int64_t{-2});
    AddArg(op, "inverse", c.Int("inverse", 0));
    AddArg(op, "onesided", c.Int("onesided", 0));
    c.SetRank(c.out(0), c.Rank(c.in(0)));
  });
  r.Add("STFT", 17, kNewestOpset, [](ConvertContext& c) {  // operators/onnx_stft_op
    std::vector<std::string> ins{c.in(0), c.in(1)};
    auto& op = c.Emit("OnnxSTFT", {}, {c.out(0)});
    const char* pos[2] = {"window_input", "frame_length_input"};
    for (int i = 0; i < 2; ++i) {
      const bool given = c.num_inputs() > 2 + i && c.has_in(2 + i);
      AddArg(op, pos[i], static_cast<int64_t>(given ? ins.size() : -1));
      if (given) ins.push_back(c.in(2 + i));
    }
    for (const auto& i : ins) op.add_input(i);
    AddArg(op, "onesided", c.Int("onesided", 1));
    c.SetRank(c.out(0), 4);
  });
  r.Add("Col2Im", [](ConvertContext& c) {
    auto& op = c.Emit("Col2Im", {c.in(0), c.in(1), c.in(2)}, {c.out(0)});
    for (const char* a : {"dilations", "pads", "strides"})
      if (c.Has(a)) AddArg(op, a, c.Ints(a));
  });
  r.Add("Det", [](ConvertContext& c) {
    c.Emit("Det", {c.in(0)}, {c.out(0)});
    if (c.Rank(c.in(0)) >= 2) c.SetRank(c.out(0), c.Rank(c.in(0)) - 2);
  });
  r.Add("TensorScatter", [](ConvertContext& c) {
    PassThrough(c, "TensorScatter", c.has_in(2) ? 3 : 2, {"axis"}, {"mode"});
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Einsum", [](ConvertContext& c) {
    std::vector<std::string> ins;
    for (int i = 0; i < c.num_inputs(); ++i) ins.push_back(c.in(i));
    AddArg(c.Emit("Einsum", ins, {c.out(0)}), "equation", c.Str("equation", ""));
  });
  r.Add("GatherND", [](ConvertContext& c) { PassThrough(c, "GatherND", 2, {"batch_dims"}); });
  r.Add("ScatterND", [](ConvertContext& c) {
    PassThrough(c, "ScatterND", 3, {}, {"reduction"});
    c.SameDims(c.out(0), c.in(0));
  });
  auto scatter_elements = [](ConvertContext& c) {
    PassThrough(c, "ScatterElements", 3, {"axis"}, {"reduction"});
    c.SameDims(c.out(0), c.in(0));
  };
  r.Add("ScatterElements", scatter_elements);
  r.Add("Scatter", 9, 10, scatter_elements);
}

}  // namespace hetnet::onnxio
