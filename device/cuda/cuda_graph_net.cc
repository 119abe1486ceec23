// CUDA graph executor (net type "cuda_graph": `hetnet run --cuda-graph`, or a predict net's type for
// a Predictor). Runs like the sequential executor, except that each run of consecutive operators on
// one GPU (a segment) is captured into a CUDA graph on the net's second run and replayed from then
// on: one launch for the segment instead of one per kernel, what small-batch inference spends most
// of its GPU time on. The first run is an ordinary one (it allocates every tensor, and cuDNN picks
// its algorithms), so the capture sees only the work that repeats.
//
// A graph replays fixed addresses and launch arguments, so a segment holds only operators whose
// every input and output is a tensor on the segment's GPU (a host input's values would be baked
// in), that are not random or collective (a replay would repeat the same numbers and skip the
// peers), and that are not copies (their host side changes per run). A capture is dropped, and the
// segment runs eagerly for good, when an operator fails under capture (a synchronization or other
// call that capture forbids) or copies host memory (CUDAContext::CopyBytes); one that allocates
// device memory (a temporary's address would be baked in and later handed to another tensor) is
// tried again at the next run (a new batch size allocates once), kMaxCaptures times. Before every replay
// each tensor the segment touches must still have the address, shape and type it had at capture
// (a weight that a fold or CastConstant reads, also its write generation: those skip their kernels
// under capture while it is unchanged), and the shared cuDNN workspace its buffer; otherwise the
// segment runs eagerly and is captured again at the next run (at most kMaxCaptures times: shapes
// that keep changing stay eager).
// ExecutorNotes() says what was captured and why the rest was not.
#include <cuda_runtime.h>

#include <set>
#include <string>
#include <vector>

#include "core/net.h"
#include "core/workspace.h"
#include "core/workspace_memory.h"
#include "device/cuda/cuda_context.h"
#include "net_executors/op_creation.h"
#include "net_executors/sequential_plan.h"
#if defined(HETNET_WITH_CUDNN)
#include "device/cuda/cudnn_workspace.h"
#endif

namespace hetnet {
namespace {

constexpr int kMinSegmentOps = 2;  // one kernel launch gains nothing from a graph
constexpr int kMaxCaptures = 4;

uint64_t WorkspaceGeneration() {
#if defined(HETNET_WITH_CUDNN)
  return CudnnWorkspaceGeneration();
#else
  return 0;
#endif
}

// Operators a replay would get wrong whatever their tensors: random fills repeat their numbers,
// collectives need their peers, copies move host memory.
bool ReplayableType(const caffe2::OperatorDef& op) {
  static const std::set<std::string> kNot = {
      "UniformFill", "UniformIntFill", "GaussianFill", "XavierFill", "MSRAFill", "RandomFill",
      "Allreduce", "Allgather", "Broadcast", "Reduce", "ReduceScatter", "Barrier", "CreateCommonWorld",
      "CloneCommonWorld", "DestroyCommonWorld"};
  if (kNot.count(op.type()) || op.type().rfind("Copy", 0) == 0 || op.type().rfind("Ensure", 0) == 0) return false;
  if (op.type() == "Dropout") {
    for (const auto& a : op.arg())
      if (a.name() == "is_test" && a.i() != 0) return true;
    return false;
  }
  return true;
}

struct Binding {
  const Blob* blob;
  const void* data;
  std::vector<int64_t> shape;
  DataType dtype;
  // Inputs of ops that derive from a weight on the host's say-so (FoldBatchNormWeights and
  // CastConstant skip their kernels while it is unchanged, so a replay repeats what they did at
  // capture): their write generation too, so a weight rewritten in place ends the graph. (Other
  // tensors may be rewritten in place between replays: the graph reads them where they are.)
  bool derived_from;
  uint64_t generation;
};

class CudaGraphNet final : public NetBase {
 public:
  CudaGraphNet(const caffe2::NetDef& def, Workspace* ws) {
    def_ = def;
    account_ = WorkspaceMemoryAccount(ws);
    ops_ = CreateNetOperators(def_, ws, /*copy_streams=*/false);
    plan_ = SequentialPlan::For(def_, ops_);
  }
  ~CudaGraphNet() override {
    for (auto& s : segments_) Drop(&s);
  }

  void Run() override {
    WorkspaceMemoryScope charge_to(account_.get());
    if (runs_++ == 1) FindSegments();  // after the first run: every tensor exists
    const int n = static_cast<int>(ops_.size());
    size_t next = 0;  // the next segment, in op order
    for (int i = 0; i < n; ++i) {
      if (next < segments_.size() && segments_[next].begin == i) {
        Segment& s = segments_[next++];
        bool ran = false;
        try {
          ran = RunSegment(&s);
        } catch (...) {
          RethrowWithContext(MakeString("in net '", def_.name(), "', the CUDA graph of operators #", s.begin, "-#",
                                        s.end - 1));
        }
        if (ran) {
          i = s.end - 1;
          continue;
        }
      }
      RunOp(i);
    }
    plan_.FinishAll(def_, ops_);
  }

  const std::vector<std::unique_ptr<OperatorBase>>& operators() const override { return ops_; }

  std::string ExecutorNotes() const override {
    if (runs_ < 2) return "cuda graph: nothing captured yet (the first run is an ordinary one)";
    std::string out;
    int captured = 0;
    for (const auto& s : segments_) {
      captured += s.exec ? s.end - s.begin : 0;
      out += MakeString("\n  ops #", s.begin, "-#", s.end - 1, " on cuda:", s.device, ": ",
                        s.exec    ? MakeString("replayed as one graph (captured ", s.captures, "x)")
                        : s.eager ? "eager, " + s.why
                                  : std::string("eager this run (its tensors changed), captured again at the next"));
    }
    bool any_gpu = false;
    for (const auto& op : ops_) any_gpu |= !op->device().is_cpu();
    out = MakeString("cuda graph: ", captured, " of ", ops_.size(), " operators replayed as ", segments_.size(),
                     " segment(s)", any_gpu ? "" : " (no operator runs on a GPU)") + (segments_.empty() ? "" : ":") + out;
    if (!not_in_segment_.empty()) out += "\n  outside any segment: " + not_in_segment_;
    return out;
  }

 private:
  struct Segment {
    int begin = 0, end = 0, device = 0;
    cudaGraphExec_t exec = nullptr;
    std::vector<Binding> bindings;
    uint64_t workspace_generation = 0;
    int captures = 0;
    bool eager = false;  // for good
    std::string why;     // why it runs eagerly
  };

  void RunOp(int i) {
    try {
      plan_.BeforeOp(i, ops_);
      ops_[i]->Run();
    } catch (...) {
      RethrowWithContext(OperatorRunContext(def_, i, *ops_[i]));
    }
  }

  // Why op i cannot be in a segment (empty: it can), from its type and its tensors now.
  std::string Unreplayable(int i) const {
    const OperatorBase& op = *ops_[i];
    if (op.device().is_cpu()) return "runs on the CPU";
    if (!ReplayableType(op.def())) return "its type cannot be replayed";
    auto off_device = [&](const Blob* b) { return !b->IsTensor() || b->GetTensor().device() != op.device(); };
    for (int k = 0; k < op.InputSize(); ++k)
      if (off_device(op.InputBlob(k))) return "reads '" + op.def().input(k) + "', not a tensor on its GPU";
    for (int k = 0; k < op.OutputSize(); ++k)
      if (off_device(const_cast<OperatorBase&>(op).OutputBlob(k)))
        return "writes '" + op.def().output(k) + "', not a tensor on its GPU";
    return {};
  }

  void FindSegments() {
    const int n = static_cast<int>(ops_.size());
    for (auto& op : ops_)
      if (op->type() == "FoldBatchNormWeights" || op->type() == "CastConstant")
        for (int k = 0; k < op->InputSize(); ++k) derived_from_.insert(op->InputBlob(k));
    for (int i = 0; i < n;) {
      const std::string why = Unreplayable(i);
      if (!why.empty()) {
        if (!ops_[i]->device().is_cpu() && not_in_segment_.size() < 400)
          not_in_segment_ += MakeString(not_in_segment_.empty() ? "" : "; ", "#", i, " (", ops_[i]->type(), ") ", why);
        ++i;
        continue;
      }
      int j = i + 1;
      while (j < n && ops_[j]->device() == ops_[i]->device() && Unreplayable(j).empty()) ++j;
      if (j - i >= kMinSegmentOps) {
        Segment s;
        s.begin = i;
        s.end = j;
        s.device = ops_[i]->device().id;
        segments_.push_back(std::move(s));
      }
      i = j;
    }
  }

  // f(blob) for every input and output of the segment's ops, in one fixed order.
  template <class F>
  void ForEachBlob(const Segment& s, F&& f) {
    for (int i = s.begin; i < s.end; ++i) {
      for (int k = 0; k < ops_[i]->InputSize(); ++k) f(ops_[i]->InputBlob(k));
      for (int k = 0; k < ops_[i]->OutputSize(); ++k) f(ops_[i]->OutputBlob(k));
    }
  }
  static const void* DataOf(const Tensor& t) { return t.numel() ? t.raw_data() : nullptr; }
  Binding BindingOf(const Blob* b) const {
    const Tensor& t = b->GetTensor();
    return Binding{b, DataOf(t), t.shape(), t.dtype(), derived_from_.count(b) > 0, t.write_generation()};
  }
  // Before each replay: compared in place, nothing allocated (this runs on every run).
  bool Unchanged(const Segment& s) {
    size_t k = 0;
    bool same = true;
    ForEachBlob(s, [&](const Blob* b) {
      if (!same) return;
      const Binding& was = s.bindings[k++];
      const Tensor& t = b->GetTensor();
      same = was.blob == b && was.dtype == t.dtype() && was.shape == t.shape() && was.data == DataOf(t) &&
             (!was.derived_from || was.generation == t.write_generation());
    });
    return same && s.workspace_generation == WorkspaceGeneration();
  }

  void Drop(Segment* s) {
    if (s->exec) cudaGraphExecDestroy(s->exec);
    s->exec = nullptr;
  }

  // True when the segment ran (replayed, or captured and launched); false: run its ops eagerly.
  bool RunSegment(Segment* s) {
    if (s->eager) return false;
    if (s->exec) {
      if (Unchanged(*s)) {
        Launch(*s);
        return true;
      }
      Drop(s);  // a tensor moved or changed shape: eager now, captured again next run
      return false;
    }
    if (s->captures >= kMaxCaptures) {
      GiveUp(s, MakeString("its tensors changed address or shape after each of ", kMaxCaptures, " captures"));
      return false;
    }
    if (!Capture(s)) return false;
    Launch(*s);
    return true;
  }

  void GiveUp(Segment* s, std::string why) {
    s->eager = true;
    s->why = why.size() > 300 ? why.substr(0, 300) + "..." : why;
  }

  void Launch(const Segment& s) {
    CUDADeviceGuard g(s.device);
    HN_CUDA_CHECK(cudaGraphLaunch(s.exec, CUDAContext(s.device).stream()));
  }

  // Captures the segment's work on this thread's stream. On failure nothing ran (the caller runs the
  // ops) and the segment turns eager with a reason, except after an allocation: this run's shapes
  // may differ from the last run's (the first run of a new batch size), so it is tried again next
  // run, up to kMaxCaptures times.
  bool Capture(Segment* s) {
    CUDADeviceGuard g(s->device);
    cudaStream_t stream = CUDAContext(s->device).stream();
    ++s->captures;
    s->workspace_generation = WorkspaceGeneration();
    s->bindings.clear();
    ForEachBlob(*s, [&](const Blob* b) { s->bindings.push_back(BindingOf(b)); });
    std::string failure;
    bool allocated = false;
    const uint64_t allocations = CudaDeviceAllocations();
    cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    if (err != cudaSuccess) failure = MakeString("capture could not start: ", cudaGetErrorString(err));
    for (int i = s->begin; failure.empty() && i < s->end; ++i) {
      ScopedCudaGraphCapture capturing;  // CUDAContext::CopyBytes refuses host memory meanwhile
      try {
        ops_[i]->Run();
      } catch (const std::exception& e) {
        failure = MakeString("op #", i, " (", ops_[i]->type(), ") failed under capture: ", e.what());
      }
      if (failure.empty() && CudaDeviceAllocations() != allocations) {
        allocated = true;
        failure = MakeString("op #", i, " (", ops_[i]->type(), ") allocated device memory in each of ", s->captures,
                             " captures");
      }
    }
    cudaGraph_t graph = nullptr;
    if (err == cudaSuccess) {
      const cudaError_t end = cudaStreamEndCapture(stream, &graph);
      if (failure.empty() && end != cudaSuccess) failure = MakeString("capture failed: ", cudaGetErrorString(end));
    }
    if (failure.empty() && cudaGraphInstantiate(&s->exec, graph, 0) != cudaSuccess) {
      s->exec = nullptr;
      failure = MakeString("the graph could not be instantiated: ", cudaGetErrorString(cudaGetLastError()));
    }
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();  // a failed capture leaves its error behind
    if (failure.empty()) return true;
    if (!allocated || s->captures >= kMaxCaptures) GiveUp(s, failure);
    return false;
  }

  std::vector<std::unique_ptr<OperatorBase>> ops_;
  SequentialPlan plan_;
  std::shared_ptr<MemoryAccount> account_;
  std::vector<Segment> segments_;  // in op order
  std::set<const Blob*> derived_from_;  // inputs of FoldBatchNormWeights and CastConstant ops
  std::string not_in_segment_;     // GPU ops outside segments, and why
  int runs_ = 0;
};

REGISTER_NET(cuda_graph, CudaGraphNet);

}  // namespace
}  // namespace hetnet
