#include "core/workspace.h"

#include <algorithm>

#include "core/net.h"

namespace hetnet {

Workspace::Workspace() = default;
Workspace::Workspace(const Workspace* parent) : parent_(parent) {}
Workspace::~Workspace() {
  nets_.clear();  // nets reference blobs: drop them first
}

Blob* Workspace::CreateBlob(const std::string& name) {
  auto& slot = blobs_[name];
  if (!slot) slot = std::make_unique<Blob>();
  return slot.get();
}

const Blob* Workspace::GetBlob(const std::string& name) const {
  auto it = blobs_.find(name);
  if (it != blobs_.end()) return it->second.get();
  return parent_ ? parent_->GetBlob(name) : nullptr;
}

Blob* Workspace::GetMutableBlob(const std::string& name) {
  auto it = blobs_.find(name);
  return it == blobs_.end() ? nullptr : it->second.get();
}

const Blob& Workspace::GetBlobOrThrow(const std::string& name) const {
  if (const Blob* b = GetBlob(name)) return *b;
  auto names = Blobs();
  std::string some;
  for (size_t i = 0; i < names.size() && i < 8; ++i) some += (i ? ", " : "") + names[i];
  HN_THROW(kNotFound, "blob '", name, "' does not exist in the workspace (it has ", names.size(), " blob(s)",
           names.empty() ? "" : ": ", some, names.size() > 8 ? ", ..." : "", ")");
}

bool Workspace::RemoveBlob(const std::string& name) { return blobs_.erase(name) > 0; }

std::vector<std::string> Workspace::LocalBlobs() const {
  std::vector<std::string> out;
  for (const auto& kv : blobs_) out.push_back(kv.first);
  return out;
}

std::vector<std::string> Workspace::Blobs() const {
  std::vector<std::string> out = LocalBlobs();
  if (parent_) {
    for (auto& n : parent_->Blobs())
      if (!blobs_.count(n)) out.push_back(n);
    std::sort(out.begin(), out.end());
  }
  return out;
}

NetBase* Workspace::CreateNet(const caffe2::NetDef& def, bool overwrite) {
  HN_ENFORCE(!def.name().empty(), "a net needs a name to be kept in the workspace");
  if (!overwrite && nets_.count(def.name()))
    HN_THROW(kInvalidArgument, "net '", def.name(), "' already exists (pass overwrite to replace it)");
  auto net = CreateNetFromDef(def, this);
  auto& slot = nets_[def.name()];
  slot = std::move(net);
  return slot.get();
}

NetBase* Workspace::GetNet(const std::string& name) {
  auto it = nets_.find(name);
  return it == nets_.end() ? nullptr : it->second.get();
}

void Workspace::RunNet(const std::string& name) {
  NetBase* net = GetNet(name);
  HN_CHECK_KIND(kNotFound, net, "net '", name, "' does not exist in the workspace");
  net->Run();
}

void Workspace::DeleteNet(const std::string& name) { nets_.erase(name); }

std::vector<std::string> Workspace::Nets() const {
  std::vector<std::string> out;
  for (const auto& kv : nets_) out.push_back(kv.first);
  return out;
}

void Workspace::RunNetOnce(const caffe2::NetDef& def) { CreateNetFromDef(def, this)->Run(); }

void Workspace::RunOperatorOnce(const caffe2::OperatorDef& def) {
  caffe2::NetDef net;
  net.set_name("RunOperatorOnce:" + def.type());
  *net.add_op() = def;
  // Inputs must already exist: they are the net's external inputs.
  for (const auto& in : def.input())
    if (std::find(net.external_input().begin(), net.external_input().end(), in) == net.external_input().end())
      net.add_external_input(in);
  RunNetOnce(net);
}

}  // namespace hetnet
