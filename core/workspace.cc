#include "core/workspace.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <unordered_map>

#include "core/checked_size.h"
#include "core/net.h"
#include "core/run_guard.h"
#include "core/workspace_memory.h"

namespace hetnet {

// ---- runs in flight (core/run_guard.h) ----
// One table for the process: a lookup-and-register (RunNet) and a check-and-remove (DeleteNet)
// are atomic with respect to each other. Only counters are touched under the lock.
namespace {
struct RunTable {
  std::mutex mu;
  std::condition_variable idle;  // signalled when a workspace's count drops to 0
  std::unordered_map<const Workspace*, int> by_ws;
  std::unordered_map<const NetBase*, int> by_net;
};
RunTable& Runs() {
  static RunTable* t = new RunTable();  // never destroyed: workspaces may be destroyed at exit
  return *t;
}
// A run in a child workspace reads its parent's blobs: it counts as a run in every ancestor too, so
// the parent's RemoveBlob / reset is refused and its destructor waits for it.
void AddRun(RunTable& t, const Workspace* ws, const NetBase* net) {
  for (const Workspace* w = ws; w; w = w->parent()) ++t.by_ws[w];
  if (net) ++t.by_net[net];
}
void RemoveRun(const Workspace* ws, const NetBase* net) {
  RunTable& t = Runs();
  std::lock_guard<std::mutex> lock(t.mu);
  if (net && --t.by_net[net] == 0) t.by_net.erase(net);
  bool idle = false;
  for (const Workspace* w = ws; w; w = w->parent()) {
    if (--t.by_ws[w] == 0) {
      t.by_ws.erase(w);
      idle = true;
    }
  }
  if (idle) t.idle.notify_all();
}
}  // namespace

RunGuard::RunGuard(const Workspace* ws, const NetBase* net) : ws_(ws), net_(net) {
  RunTable& t = Runs();
  std::lock_guard<std::mutex> lock(t.mu);
  AddRun(t, ws, net);
}

RunGuard::~RunGuard() { RemoveRun(ws_, net_); }

int RunsInFlight(const Workspace* ws) {
  RunTable& t = Runs();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_ws.find(ws);
  return it == t.by_ws.end() ? 0 : it->second;
}

int RunsInFlight(const NetBase* net) {
  RunTable& t = Runs();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_net.find(net);
  return it == t.by_net.end() ? 0 : it->second;
}

namespace {
[[noreturn]] void ThrowBusy(const std::string& what, int runs, const char* where) {
  HN_THROW(kRuntime, what, ": ", runs, " run(s) ", where,
           " are in flight on another thread; retry after they return (a shared Workspace is not thread-safe; "
           "see README, Threads)");
}
}  // namespace

void RefuseWhileRunning(const Workspace* ws, const std::string& what) {
  const int n = RunsInFlight(ws);
  if (n > 0) ThrowBusy(what, n, "in this workspace (or its child workspaces)");
}

// ---- bytes per workspace (core/workspace_memory.h) ----
namespace {
struct AccountTable {
  std::mutex mu;
  std::unordered_map<const Workspace*, std::shared_ptr<MemoryAccount>> by_ws;
};
AccountTable& Accounts() {
  static AccountTable* t = new AccountTable();  // never destroyed, like the run table
  return *t;
}
std::shared_ptr<MemoryAccount> AccountLocked(AccountTable& t, const Workspace* ws) {
  auto& slot = t.by_ws[ws];
  if (!slot) {
    auto a = std::make_shared<MemoryAccount>();
    if (ws->parent()) a->parent = AccountLocked(t, ws->parent());
    t.by_ws[ws] = a;  // (the recursive call may have rehashed: no reference to slot after it)
    return a;
  }
  return slot;
}
thread_local MemoryAccount* t_current_account = nullptr;
}  // namespace

std::shared_ptr<MemoryAccount> WorkspaceMemoryAccount(const Workspace* ws) {
  AccountTable& t = Accounts();
  std::lock_guard<std::mutex> lock(t.mu);
  return AccountLocked(t, ws);
}

int64_t WorkspaceBytes(const Workspace* ws) { return WorkspaceMemoryAccount(ws)->bytes.load(); }

WorkspaceMemoryScope::WorkspaceMemoryScope(MemoryAccount* account) : prev_(t_current_account) {
  t_current_account = account;
}
WorkspaceMemoryScope::WorkspaceMemoryScope(const Workspace* ws)
    : held_(WorkspaceMemoryAccount(ws)), prev_(t_current_account) {
  t_current_account = held_.get();
}
WorkspaceMemoryScope::~WorkspaceMemoryScope() { t_current_account = prev_; }
MemoryAccount* CurrentMemoryAccount() { return t_current_account; }

void ChargeWorkspaceBytes(MemoryAccount* account, int64_t bytes, int64_t released, const std::string& what) {
  int64_t total = 0;
  for (MemoryAccount* a = account; a; a = a->parent.get()) total = a->bytes.fetch_add(bytes) + bytes;
  const int64_t cap = GetLimit(Limit::kMaxWorkspaceBytes);
  if (total - released <= cap) return;
  ReleaseWorkspaceBytes(account, bytes);
  CheckLimit(Limit::kMaxWorkspaceBytes, total - released,
             MakeString(what, " in a workspace", account->parent ? " (counted with its parent's)" : "",
                        " holding ", total - bytes, " bytes",
                        released ? MakeString(" (", released, " of them freed by this reallocation)") : "",
                        ": the total"));
}

void ReleaseWorkspaceBytes(MemoryAccount* account, int64_t bytes) {
  for (MemoryAccount* a = account; a; a = a->parent.get()) a->bytes.fetch_sub(bytes);
}

Workspace::Workspace() = default;
Workspace::Workspace(const Workspace* parent) : parent_(parent) {}
Workspace::~Workspace() {
  {
    // A destructor cannot refuse: wait for runs in this workspace on other threads to return.
    RunTable& t = Runs();
    std::unique_lock<std::mutex> lock(t.mu);
    t.idle.wait(lock, [&] { return t.by_ws.find(this) == t.by_ws.end(); });
  }
  nets_.clear();  // nets reference blobs: drop them first
  blobs_.clear();
  AccountTable& a = Accounts();
  std::lock_guard<std::mutex> lock(a.mu);
  a.by_ws.erase(this);
}

Blob* Workspace::CreateBlob(const std::string& name) {
  auto it = blobs_.find(name);
  if (it != blobs_.end() && it->second) return it->second.get();
  EnforceNoNul(name, "blob name");  // it would be cut in messages and checkpoint keys
  auto& slot = blobs_[name];
  slot = std::make_unique<Blob>();
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

bool Workspace::RemoveBlob(const std::string& name) {
  if (!blobs_.count(name)) return false;
  RefuseWhileRunning(this, "cannot remove blob '" + PrintableName(name) + "'");
  return blobs_.erase(name) > 0;
}

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

NetBase* Workspace::CreateNet(const caffe2::NetDef& def, bool overwrite,
                              const std::map<std::string, Device>& fed_input_devices) {
  // Caffe2's rule: the name field must be set; an empty name is a name (Caffe2 nets may be named "").
  HN_ENFORCE(def.has_name(), "a net needs a name (the NetDef name field) to be kept in the workspace");
  if (!overwrite && nets_.count(def.name()))
    HN_THROW(kInvalidArgument, "net '", PrintableName(def.name()), "' already exists (pass overwrite to replace it)");
  auto net = CreateNetFromDef(def, this, fed_input_devices);
  std::unique_ptr<NetBase> replaced;  // destroyed after the lock is released
  {
    RunTable& t = Runs();
    std::lock_guard<std::mutex> lock(t.mu);
    auto& slot = nets_[def.name()];
    if (slot && t.by_net.count(slot.get()))
      ThrowBusy("cannot replace net '" + PrintableName(def.name()) + "'", t.by_net[slot.get()], "of that net");
    replaced = std::move(slot);
    slot = std::move(net);
    return slot.get();
  }
}

NetBase* Workspace::GetNet(const std::string& name) {
  auto it = nets_.find(name);
  return it == nets_.end() ? nullptr : it->second.get();
}

void Workspace::RunNet(const std::string& name) {
  NetBase* net = nullptr;
  {
    // Look up and register as one step, so that DeleteNet on another thread either happens before
    // (the net is not found) or is refused.
    RunTable& t = Runs();
    std::lock_guard<std::mutex> lock(t.mu);
    net = GetNet(name);
    HN_CHECK_KIND(kNotFound, net, "net '", PrintableName(name), "' does not exist in the workspace");
    AddRun(t, this, net);
  }
  struct Release {
    const Workspace* ws;
    const NetBase* net;
    ~Release() { RemoveRun(ws, net); }
  } release{this, net};
  net->Run();
}

void Workspace::DeleteNet(const std::string& name) {
  std::unique_ptr<NetBase> doomed;  // destroyed after the lock is released
  {
    RunTable& t = Runs();
    std::lock_guard<std::mutex> lock(t.mu);
    auto it = nets_.find(name);
    if (it == nets_.end()) return;
    auto busy = t.by_net.find(it->second.get());
    if (busy != t.by_net.end())
      ThrowBusy("cannot delete net '" + PrintableName(name) + "'", busy->second, "of that net");
    doomed = std::move(it->second);
    nets_.erase(it);
  }
}

std::vector<std::string> Workspace::Nets() const {
  std::vector<std::string> out;
  for (const auto& kv : nets_) out.push_back(kv.first);
  return out;
}

void Workspace::RunNetOnce(const caffe2::NetDef& def) {
  RunGuard guard(this, nullptr);  // the blobs it uses stay while it runs
  CreateNetFromDef(def, this)->Run();
}

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
