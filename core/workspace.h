// Named blobs and nets. A workspace may have a parent whose blobs it reads (one set of weights
// serving many request workspaces); blobs it creates are its own and shadow the parent's.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/blob.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class NetBase;

class Workspace {
 public:
  Workspace();
  explicit Workspace(const Workspace* parent);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  const Workspace* parent() const { return parent_; }

  // Returns this workspace's blob `name`, creating it (empty) when it has none of its own.
  Blob* CreateBlob(const std::string& name);
  bool HasBlob(const std::string& name) const { return GetBlob(name) != nullptr; }
  // This workspace's blob, else the parent's; nullptr if neither has it.
  const Blob* GetBlob(const std::string& name) const;
  Blob* GetMutableBlob(const std::string& name);  // own blobs only
  // Throws kNotFound naming the blob (and listing a few existing ones).
  const Blob& GetBlobOrThrow(const std::string& name) const;
  bool RemoveBlob(const std::string& name);
  std::vector<std::string> Blobs() const;       // own and parent's, sorted
  std::vector<std::string> LocalBlobs() const;  // own only, sorted

  // Creates (or, with overwrite, replaces) a net from def; inserts cross-device copies.
  // fed_input_devices: where inputs that the workspace holds no data for yet will be fed (a
  // Predictor's instance re-created for inputs on another device); otherwise the net's device.
  NetBase* CreateNet(const caffe2::NetDef& def, bool overwrite = false,
                     const std::map<std::string, Device>& fed_input_devices = {});
  NetBase* GetNet(const std::string& name);
  void RunNet(const std::string& name);
  void DeleteNet(const std::string& name);
  std::vector<std::string> Nets() const;
  // Creates, runs and drops a net; the workspace keeps the blobs.
  void RunNetOnce(const caffe2::NetDef& def);
  void RunOperatorOnce(const caffe2::OperatorDef& def);

 private:
  const Workspace* parent_ = nullptr;
  std::map<std::string, std::unique_ptr<Blob>> blobs_;
  std::map<std::string, std::unique_ptr<NetBase>> nets_;
};

}  // namespace hetnet
