// Bytes of tensors held per workspace, for the total-workspace-bytes cap (Limit::kMaxWorkspaceBytes,
// HETNET_MAX_WORKSPACE_BYTES; default unlimited). Include it only from .cc files that need it.
//
// Each workspace has an account; a child workspace's account charges its parent's too, so a
// workspace's total counts its children (a Predictor: the weights in the parent plus the tensors of
// every run in flight in its child workspaces), and the cap bounds each such tree. A tensor
// allocation is charged to the account of the current scope (set by the executors while a net of
// that workspace runs, by Predictor::Run's feed and by Python's FeedBlob) and released when its
// memory is freed, wherever the tensor went by then. Allocations outside any scope (C++ code
// writing blobs directly, unless it opens a WorkspaceMemoryScope) and external memory
// (SetExternalData) are not counted.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace hetnet {

class Workspace;

struct MemoryAccount : std::enable_shared_from_this<MemoryAccount> {
  std::atomic<int64_t> bytes{0};
  std::shared_ptr<MemoryAccount> parent;  // the parent workspace's account (kept alive by this one)
};

// ws's account, created at first use (ws's parent's first). Dropped from the table when ws is
// destroyed; memory still alive then keeps its (detached) account until it is freed.
std::shared_ptr<MemoryAccount> WorkspaceMemoryAccount(const Workspace* ws);
// Bytes of the live tensors charged to ws and its children.
int64_t WorkspaceBytes(const Workspace* ws);

// Tensor allocations on this thread are charged to `account` while the scope lives (nests).
class WorkspaceMemoryScope {
 public:
  explicit WorkspaceMemoryScope(MemoryAccount* account);
  explicit WorkspaceMemoryScope(const Workspace* ws);
  ~WorkspaceMemoryScope();
  WorkspaceMemoryScope(const WorkspaceMemoryScope&) = delete;
  WorkspaceMemoryScope& operator=(const WorkspaceMemoryScope&) = delete;

 private:
  std::shared_ptr<MemoryAccount> held_;
  MemoryAccount* prev_;
};
MemoryAccount* CurrentMemoryAccount();

// Charges `bytes` to `account` and its ancestors. When the outermost total, less `released` (bytes
// this allocation frees once it succeeds), would exceed the cap, undoes the charge and throws
// kOutOfMemory "<what> (... bytes) exceeds the total-workspace-bytes cap ...".
void ChargeWorkspaceBytes(MemoryAccount* account, int64_t bytes, int64_t released, const std::string& what);
void ReleaseWorkspaceBytes(MemoryAccount* account, int64_t bytes);

}  // namespace hetnet
