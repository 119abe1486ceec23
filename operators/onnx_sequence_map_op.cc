// OnnxSequenceMap(seq, more..., outer...) -> (seqs...): ONNX's SequenceMap. The NetDef argument `body`
// runs once per element of seq (operators/onnx_subgraph.h, a child workspace): body input 0 is that
// element, body input j the element of input j when it holds a sequence (of seq's length) or input
// j itself when it holds a tensor; output i collects body output i of every run into a sequence.
// Arg num_inputs: how many inputs are the node's (the rest are outer blobs the body reads, arg
// outer_inputs). Arg output_dtypes (caffe2 enums): the dtype of an output sequence, used when seq is
// empty. CPU only; no gradient.
#include <memory>

#include "core/gradient.h"
#include "operators/onnx_sequence_ops.h"
#include "operators/onnx_subgraph.h"

namespace hetnet {

namespace {

class OnnxSequenceMapOp final : public Operator<CPUContext> {
 public:
  OnnxSequenceMapOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        num_inputs_(OnnxCountArg(*this, "num_inputs")),
        body_(*this, ws, "body", num_inputs_) {
    HN_CHECK_KIND(kInvalidArgument, num_inputs_ >= 1 && num_inputs_ <= InputSize(), OpLabel(*this), ": num_inputs ",
                  num_inputs_, " must be in [1, ", InputSize(), "]");
    HN_CHECK_KIND(kInvalidArgument, body_.num_locals() == num_inputs_ && body_.num_outputs() == OutputSize(),
                  OpLabel(*this), ": the body has ", body_.num_locals(), " inputs and ", body_.num_outputs(),
                  " outputs, expected ", num_inputs_, " and ", OutputSize());
    dtypes_ = GetRepeatedArgument<int64_t>("output_dtypes");
  }

  void RunOnDevice() override {
    const TensorSequence& first = SequenceInput(*this, 0);
    const size_t n = first.items.size();
    std::vector<const TensorSequence*> seqs(num_inputs_, nullptr);
    for (int j = 0; j < num_inputs_; ++j) {
      if (!InputBlob(j)->IsType<TensorSequence>()) {
        Input(j);  // a tensor (names the blob otherwise)
        continue;
      }
      seqs[j] = &InputBlob(j)->Get<TensorSequence>();
      HN_CHECK_KIND(kInvalidArgument, seqs[j]->items.size() == n, OpLabel(*this), ": sequence input ", j, " ('",
                    def().input(j), "') has ", seqs[j]->items.size(), " elements, '", def().input(0), "' has ", n);
    }
    std::vector<TensorSequence> outs(OutputSize());
    for (int i = 0; i < OutputSize(); ++i)
      if (i < static_cast<int>(dtypes_.size()) && dtypes_[i] > 0) outs[i].dtype = static_cast<DataType>(dtypes_[i]);
    for (size_t k = 0; k < n; ++k) {
      for (int j = 0; j < num_inputs_; ++j) body_.Local(j)->CopyFrom(seqs[j] ? seqs[j]->items[k] : Input(j));
      body_.Run();
      for (int i = 0; i < OutputSize(); ++i) {
        const Tensor& t = body_.Output(i);
        if (k == 0) outs[i].dtype = t.dtype();
        HN_CHECK_KIND(kInvalidArgument, t.dtype() == outs[i].dtype, OpLabel(*this), ": body output ", i, " is ",
                      DataTypeName(t.dtype()), " for element ", k, " but ", DataTypeName(outs[i].dtype), " before");
        outs[i].items.push_back(CpuCopyOf(t));
      }
    }
    for (int i = 0; i < OutputSize(); ++i) OutputBlob(i)->Reset(std::make_shared<TensorSequence>(std::move(outs[i])));
  }

 private:
  int num_inputs_;
  OnnxSubgraph body_;
  std::vector<int64_t> dtypes_;
};

}  // namespace

OPERATOR_SCHEMA(OnnxSequenceMap)
    .NumInputs(1, 1 << 30)
    .NumOutputs(1, 1 << 30)
    .SetDoc("ONNX SequenceMap: runs the NetDef argument body once per element of the first input (a sequence) "
            "and collects each body output into a sequence.");
REGISTER_CPU_OPERATOR(OnnxSequenceMap, OnnxSequenceMapOp);
NO_GRADIENT(OnnxSequenceMap);

}  // namespace hetnet
