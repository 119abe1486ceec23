// Nets: a NetDef bound to a workspace, created through a registry keyed by net type
// ("" and "simple" sequential; executors in net_executors/ register themselves).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/operator.h"
#include "core/placement.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class Workspace;

class NetBase {
 public:
  virtual ~NetBase() = default;
  // Runs every operator; on failure throws hetnet::Error with the net and operator named.
  virtual void Run() = 0;
  const std::string& name() const { return def_.name(); }
  // The net as it runs: device options resolved and cross-device copies inserted.
  const caffe2::NetDef& def() const { return def_; }
  virtual const std::vector<std::unique_ptr<OperatorBase>>& operators() const = 0;
  // Where each op runs and why, and the inserted copies (bytes from shape inference).
  const PlacementReport& placement() const { return placement_; }
  void set_placement(PlacementReport r) { placement_ = std::move(r); }
  // The placement report with copy bytes measured by the last run where known.
  PlacementReport MeasuredPlacement() const;
  // What the executor did besides running the operators in order (a CUDA graph executor: what it
  // captured and why not the rest); empty for the others.
  virtual std::string ExecutorNotes() const { return {}; }

 protected:
  caffe2::NetDef def_;
  PlacementReport placement_;
};

using NetCreator = std::function<std::unique_ptr<NetBase>(const caffe2::NetDef&, Workspace*)>;

class NetRegistry {
 public:
  static void Register(const std::string& type, NetCreator fn);
  static const NetCreator* Find(const std::string& type);
  static std::vector<std::string> Types();
};

struct NetRegisterer {
  NetRegisterer(const char* type, NetCreator fn) { NetRegistry::Register(type, std::move(fn)); }
};

// Validates def, resolves device options, inserts cross-device copies (for nets that span more than
// one device), and creates the executor named by def.type(). Errors name the net.
// fed_input_devices: as Workspace::CreateNet.
std::unique_ptr<NetBase> CreateNetFromDef(const caffe2::NetDef& def, Workspace* ws,
                                          const std::map<std::string, Device>& fed_input_devices = {});

// Context line for errors: "in net 'name', operator #3 (FC)".
std::string OperatorContext(const caffe2::NetDef& net, int index);

// Context for a failure while running: the operator and its inputs ("'x' int32[2, 4] on cpu").
std::string OperatorRunContext(const caffe2::NetDef& net, int index, const OperatorBase& op);

// Rethrows the active exception as hetnet::Error with one more context line.
[[noreturn]] void RethrowWithContext(const std::string& context);

}  // namespace hetnet

#define REGISTER_NET(type, ...)                                                                     \
  static ::hetnet::NetRegisterer HN_ANON(hn_net_reg_)(#type, [](const ::caffe2::NetDef& d,        \
                                                                 ::hetnet::Workspace* w) {         \
    return std::unique_ptr<::hetnet::NetBase>(new __VA_ARGS__(d, w));                              \
  })
