// Print(tensor) -> (), Caffe2's: writes a summary of the input (blob name, dtype, shape, then the
// first `limit` values; arg limit, default 0 = 1000) every `every_n` runs (default 1: every run,
// starting with the first). Caffe2 logged to stderr; this prints to stdout, one line per run.
// Arg to_file=1 appends the line to "<blob>.log" in the current directory instead ('/' and '\' in
// the blob name become '_'; Caffe2 wrote under the workspace's root folder). A served net must not
// use to_file (it touches files). A GPU input is copied to the host first. No gradient.
#pragma once

#include <string>

#include "core/operator.h"

namespace hetnet {

// "name (float32 [2, 3]): 1, 2, 3, 4, 5, 6" for a host tensor, at most `limit` values then "..."
std::string TensorSummary(const std::string& name, const Tensor& host, int64_t limit);
// Writes `line` to stdout, or appends it to "<blob>.log" when to_file.
void EmitPrintLine(const caffe2::OperatorDef& def, const std::string& line, bool to_file);

template <class Context>
class PrintOp final : public Operator<Context> {
 public:
  PrintOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        to_file_(this->template GetSingleArgument<int>("to_file", 0) != 0),
        limit_(this->template GetSingleArgument<int64_t>("limit", 0)),
        every_n_(this->template GetSingleArgument<int64_t>("every_n", 1)) {
    HN_ENFORCE(limit_ >= 0, "Print: arg limit must be >= 0, got ", limit_);
    HN_ENFORCE(every_n_ >= 1, "Print: arg every_n must be >= 1, got ", every_n_);
  }
  void RunOnDevice() override {
    const int64_t run = runs_++;
    if (run % every_n_ != 0) return;
    const Tensor& X = this->Input(0);
    const int64_t limit = limit_ == 0 ? 1000 : limit_;
    if (X.device().is_cpu()) {
      EmitPrintLine(this->def(), TensorSummary(this->def().input(0), X, limit), to_file_);
      return;
    }
    this->context_.FinishDeviceComputation();  // X's producer ran on this stream
    EmitPrintLine(this->def(), TensorSummary(this->def().input(0), X.To(Device::CPU()), limit), to_file_);
  }

 private:
  bool to_file_;
  int64_t limit_, every_n_;
  int64_t runs_ = 0;
};

}  // namespace hetnet
