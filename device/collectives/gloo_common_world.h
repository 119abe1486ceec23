// The GLOO engine's common world: a gloo::Context whose pairs were connected through a hetnet
// StoreHandler (rank 0..size-1 publish their addresses under the CreateCommonWorld op's name) or
// cloned from another world's pairs (CloneCommonWorld). Only files built with Gloo include this.
//
// Failure rule (Gloo's docs/errors.md): after an IoException the transport is in an unknown state,
// so the world is marked broken and every later use fails fast with kIo naming the world.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "core/error.h"
#include "device/collectives/common_world.h"
#include "device/collectives/store_handler.h"

namespace gloo {
class Context;
namespace transport {
class Device;
}
}  // namespace gloo

namespace hetnet {

struct GlooWorldOptions {
  std::string name;  // the CreateCommonWorld op's name: store prefix, and in messages
  int rank = 0;
  int size = 0;
  std::string transport = "tcp";  // "tcp" or "ibverbs"
  std::string interface;          // "" -> HETNET_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, route to MASTER_ADDR, hostname
  std::chrono::milliseconds timeout{30000};
  // Caffe2's sync (pairs receive in the calling thread): accepted, no effect. Gloo's per-call
  // collectives use unbound buffers, which refuse sync pairs (tcp/pair.cc "enforce fail: !sync_").
  bool sync = false;
};

class GlooCommonWorld final : public CommonWorld {
 public:
  // Connects a full mesh through `store` (wrapped in a PrefixStore(opts.name)). Store waits past the
  // timeout throw kTimeout; transport failures kIo; bad interface/transport kInvalidArgument.
  // Bounds: each store wait by the timeout; Gloo's TCP connect of a pair by 5 x the timeout (its
  // rule, gloo/transport/tcp/pair.h), e.g. when a peer advertised an address this host cannot reach.
  static std::shared_ptr<GlooCommonWorld> Create(const GlooWorldOptions& opts, const StoreHandlerPtr& store);
  // A new, independent context whose pairs rendezvous over this world's pairs (no store).
  std::shared_ptr<GlooCommonWorld> Clone(const std::string& name, bool sync);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* engine() const override { return "GLOO"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }
  void Close() override;
  std::string Describe() const override;

  // The connected context; throws kIo when the world was closed or broken by an earlier failure.
  const std::shared_ptr<gloo::Context>& context() const;

  // Runs a Gloo call on this world: gloo exceptions become hetnet::Error kIo (Gloo's text kept,
  // the world named) and break the world; hetnet::Errors pass through. Calls are serialized: two
  // collectives in flight on one context make Gloo abort the process (seen with a DAG executor
  // without the ordering edges); the executors order them, this guards other callers (two nets
  // run from two threads), who then fail with a timeout at worst.
  template <class Fn>
  void Run(const char* what, Fn&& fn) {
    std::lock_guard<std::mutex> serialize(run_mu_);
    context();  // fail fast when broken
    try {
      fn();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      Fail(what, e.what());
    }
  }

 private:
  GlooCommonWorld() = default;
  [[noreturn]] void Fail(const char* what, const std::string& gloo_text);

  std::string name_, transport_, device_text_;
  int rank_ = 0, size_ = 0;
  std::chrono::milliseconds timeout_{30000};
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  std::mutex run_mu_;
  mutable std::mutex mu_;
  std::atomic<bool> unusable_{false};
  std::string unusable_reason_;  // under mu_
};

// The address a TCP device for `interface` (same resolution as Create) would advertise, as text
// ("10.77.0.1"); throws like Create for a bad interface or a loopback address in a multi-host world.
std::string GlooAdvertisedAddress(const std::string& interface);

}  // namespace hetnet
