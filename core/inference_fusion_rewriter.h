// The inference rewriter (core/inference_fusion.h states the rules): its state and the queries its
// rules share. The sweep, graph queries and Dropout removal are in inference_fusion_rewriter.cc, BN
// folding and the Relu and residual fusions in inference_fusion_rules.cc. Included by those only.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/argument.h"
#include "core/inference_fusion.h"
#include "core/workspace.h"

namespace hetnet {
namespace inference_fusion {

inline int IntArg(const caffe2::OperatorDef& op, const char* name, int dflt) {
  return ArgumentHelper(op).GetSingleArgument<int>(name, dflt);
}

// Readers and writers of every blob, as op indices (a reader once per input slot), ascending.
struct BlobUses {
  std::map<std::string, std::vector<int>> readers, writers;
  explicit BlobUses(const std::vector<caffe2::OperatorDef>& ops) {
    for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
      for (const auto& n : ops[i].input()) readers[n].push_back(i);
      for (const auto& n : ops[i].output()) writers[n].push_back(i);
    }
  }
  const std::vector<int>& Readers(const std::string& n) const { return Get(readers, n); }
  const std::vector<int>& Writers(const std::string& n) const { return Get(writers, n); }
  // Whether an op strictly between a and b reads (or writes) n.
  bool ReadBetween(const std::string& n, int a, int b) const { return Any(Readers(n), a, b); }
  bool WrittenBetween(const std::string& n, int a, int b) const { return Any(Writers(n), a, b); }

 private:
  static const std::vector<int>& Get(const std::map<std::string, std::vector<int>>& m, const std::string& n) {
    static const std::vector<int> none;
    auto it = m.find(n);
    return it == m.end() ? none : it->second;
  }
  static bool Any(const std::vector<int>& v, int a, int b) {
    auto it = std::upper_bound(v.begin(), v.end(), a);
    return it != v.end() && *it < b;
  }
};

class Rewriter {
 public:
  Rewriter(const caffe2::NetDef& def, Workspace* ws);
  InferenceRewrite Run();

 private:
  using Try = bool (Rewriter::*)(int i, const BlobUses& uses);
  void Sweep(Try fn);
  void PreferPackedFC();
  void ReducePrecision();
  std::vector<std::string> BlockedActivations(const std::set<std::string>& taken);
  bool DeviceOf(const caffe2::OperatorDef& op, Device* d) const;
  std::string Label(int i) const;
  int SoleConsumer(int i, const BlobUses& uses, const std::set<std::string>& types, bool any_input = false) const;
  const Tensor* Constant(const std::string& name, const BlobUses& uses, DataType also = DataType::Float) const;
  std::string FreshName(const std::string& base, const BlobUses& uses);
  void Record(int i, int j, caffe2::OperatorDef fused, const std::string& log, const std::string& note);
  void AddNote(int i, const std::string& s) { notes_[i] += (notes_[i].empty() ? "" : ", ") + s; }

  // The rules, each tried at every op by Sweep.
  bool TryFoldBN(int i, const BlobUses& uses);
  bool TryRemoveDropout(int j, const BlobUses& uses);
  bool TryRemoveIdentity(int j, const BlobUses& uses);
  bool TryFuseResidual(int i, const BlobUses& uses);
  bool TryFuseRelu(int i, const BlobUses& uses);
  bool ResidualDiesAt(const std::string& R, int i, int j, const BlobUses& uses) const;
  bool DependsOn(int i, int r, const BlobUses& uses) const;

  const caffe2::NetDef& def_;
  Workspace* ws_;
  std::vector<caffe2::OperatorDef> ops_;
  std::vector<std::string> notes_;
  std::vector<bool> dead_;
  std::vector<std::string> log_;
  std::map<int, std::vector<caffe2::OperatorDef>> before_;  // ops inserted before ops_[i] (the BN folds)
  std::set<std::string> protected_, external_in_, other_reads_, other_writes_, given_;
};

}  // namespace inference_fusion
}  // namespace hetnet
