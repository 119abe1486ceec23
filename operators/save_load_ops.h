// Save and Load (Caffe2's checkpoint ops) over a minidb file (core/minidb.h).
// Save: inputs are the blobs to save (tensors on any device; GPU tensors are copied to the host).
//   Args: db (path), db_type ("minidb"), absolute_path (accepted; paths are used as given),
//   strip_prefix, blob_name_overrides (names to store instead of the input names), chunk_size
//   (elements per record, default 1,000,000). Every record is a BlobProto keyed `<name>#%<chunk>`.
// Load: outputs are the blobs to load (created when missing), or none with load_all=1 (every blob
//   in the db). Args: db, db_type, absolute_path, add_prefix, strip_prefix, source_blob_names (db
//   names of the outputs), keep_device (1: the device recorded in the file; 0: the op's device),
//   load_all, allow_incomplete.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/operator.h"
#include "core/workspace.h"

namespace hetnet {

// Kernels shared by both registrations (save_load_ops.cc).
void SaveBlobs(const caffe2::OperatorDef& def, const std::vector<const Blob*>& blobs);
// name -> tensor (on CPU) of every blob in the db whose (prefix-adjusted) name is wanted, or all
// when `wanted` is empty.
std::map<std::string, Tensor> LoadTensors(const caffe2::OperatorDef& def, const std::vector<std::string>& wanted,
                                          std::map<std::string, Device>* stored_devices);

template <class Context>
class SaveOp final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    this->context_.FinishDeviceComputation();  // queued writes to the saved blobs are done
    std::vector<const Blob*> blobs;
    for (int i = 0; i < this->InputSize(); ++i) blobs.push_back(this->InputBlob(i));
    SaveBlobs(this->def(), blobs);
  }
};

template <class Context>
class LoadOp final : public Operator<Context> {
 public:
  LoadOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws), ws_(ws) {}
  void RunOnDevice() override;

 private:
  Workspace* ws_;
};

template <class Context>
void LoadOp<Context>::RunOnDevice() {
  const bool load_all = this->template GetSingleArgument<int>("load_all", 0) != 0;
  const bool keep_device = this->template GetSingleArgument<int>("keep_device", 0) != 0;
  const bool allow_incomplete = this->template GetSingleArgument<int>("allow_incomplete", 0) != 0;
  HN_ENFORCE(!load_all || this->OutputSize() == 0, "Load: with load_all=1 give no outputs (got ",
             this->OutputSize(), ")");
  std::vector<std::string> sources = this->template GetRepeatedArgument<std::string>("source_blob_names");
  std::vector<std::string> wanted;
  if (!load_all) {
    if (sources.empty()) sources.assign(this->def().output().begin(), this->def().output().end());
    HN_ENFORCE(static_cast<int>(sources.size()) == this->OutputSize(), "Load: source_blob_names has ",
               sources.size(), " names for ", this->OutputSize(), " outputs");
    wanted = sources;
  }
  std::map<std::string, Device> stored;
  std::map<std::string, Tensor> loaded = LoadTensors(this->def(), wanted, &stored);
  auto place = [&](const std::string& src, Blob* blob) {
    const Device d = keep_device ? stored.at(src) : this->device();
    Tensor* t = blob->GetMutableTensor(d);
    if (d == this->device()) {
      t->CopyFrom(loaded.at(src), &this->context_);
    } else {
      t->CopyFrom(loaded.at(src));  // keep_device to another device than the op's: blocking copy
    }
  };
  if (load_all) {
    for (const auto& kv : loaded) place(kv.first, ws_->CreateBlob(kv.first));
  } else {
    for (int i = 0; i < this->OutputSize(); ++i) {
      if (!loaded.count(sources[i])) {
        HN_CHECK_KIND(kNotFound, allow_incomplete, "Load: blob '", sources[i], "' (output ", i, " '",
                      this->def().output(i), "') is not in db '",
                      this->template GetSingleArgument<std::string>("db", ""), "'");
        continue;
      }
      place(sources[i], this->OutputBlob(i));
    }
  }
  this->context_.FinishDeviceComputation();
}

}  // namespace hetnet
