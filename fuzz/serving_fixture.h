// A real InferenceServer (no network front end) over a temporary repository of three small models,
// shared by the request-decoding targets: "simple" (Triton's example: INT32 [16] x2, batching),
// "dyn" (FP32 [-1], max_batch_size 4) and "strs" (BYTES [-1], max_batch_size 4).
#pragma once
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "core/proto_io.h"
#include "serving/dynamic_batcher.h"
#include "serving/inference_server.h"
#include "serving/request_tensors.h"

namespace hetnet_fuzz {

inline caffe2::NetDef OneOpNet(const std::string& name, const std::string& type, std::vector<std::string> in,
                               std::vector<std::string> out) {
  caffe2::NetDef net;
  net.set_name(name);
  auto* op = net.add_op();
  op->set_type(type);
  for (const auto& i : in) {
    op->add_input(i);
    net.add_external_input(i);
  }
  for (const auto& o : out) {
    op->add_output(o);
    net.add_external_output(o);
  }
  return net;
}

inline void WriteModel(const std::string& repo, const std::string& name, const std::string& config,
                       const std::vector<caffe2::NetDef>& ops_in_order) {
  const std::string dir = repo + "/" + name;
  std::filesystem::create_directories(dir + "/1");
  hetnet::WriteFileBytes(dir + "/config.pbtxt", config);
  caffe2::NetDef net = ops_in_order[0];
  for (size_t i = 1; i < ops_in_order.size(); ++i) {
    for (const auto& op : ops_in_order[i].op()) *net.add_op() = op;
    for (const auto& o : ops_in_order[i].external_output()) net.add_external_output(o);
  }
  hetnet::WriteProtoToFile(dir + "/1/model.netdef", net);
}

struct ServingFixture {
  std::unique_ptr<hetnet::serving::InferenceServer> server;
  static constexpr const char* kModels[3] = {"simple", "dyn", "strs"};
  inference::ModelConfig configs[3];

  ServingFixture() {
    char tmpl[] = "/tmp/hetnet_fuzz_repo_XXXXXX";
    const char* dir = mkdtemp(tmpl);
    if (!dir) abort();
    const std::string repo = dir;
    WriteModel(repo, "simple",
               "name: \"simple\"\nplatform: \"caffe2_netdef\"\nmax_batch_size: 8\n"
               "input [ { name: \"INPUT0\" data_type: TYPE_INT32 dims: [ 16 ] },\n"
               "        { name: \"INPUT1\" data_type: TYPE_INT32 dims: [ 16 ] } ]\n"
               "output [ { name: \"OUTPUT0\" data_type: TYPE_INT32 dims: [ 16 ] },\n"
               "         { name: \"OUTPUT1\" data_type: TYPE_INT32 dims: [ 16 ] } ]\n",
               {OneOpNet("simple", "Add", {"INPUT0", "INPUT1"}, {"OUTPUT0"}),
                OneOpNet("simple", "Sub", {"INPUT0", "INPUT1"}, {"OUTPUT1"})});
    WriteModel(repo, "dyn",
               "name: \"dyn\"\nplatform: \"caffe2_netdef\"\nmax_batch_size: 4\n"
               "input [ { name: \"x\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
               "output [ { name: \"y\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n",
               {OneOpNet("dyn", "Relu", {"x"}, {"y"})});
    WriteModel(repo, "strs",
               "name: \"strs\"\nplatform: \"caffe2_netdef\"\nmax_batch_size: 4\n"
               "input [ { name: \"TEXT\" data_type: TYPE_STRING dims: [ -1 ] } ]\n"
               "output [ { name: \"OUT\" data_type: TYPE_STRING dims: [ -1 ] } ]\n",
               {OneOpNet("strs", "StopGradient", {"TEXT"}, {"OUT"})});
    hetnet::serving::ServerOptions options;
    options.model_repositories = {repo};
    options.max_tensor_elements = 1 << 20;
    server = std::make_unique<hetnet::serving::InferenceServer>(options);
    for (int i = 0; i < 3; ++i) {
      configs[i] = server->ModelConfig(kModels[i], "");  // throws (and the target aborts) if it did not load
    }
    std::filesystem::remove_all(repo);
  }

  // What the server does with a decoded request before running it: validation against the config,
  // then the batch's input tensors (the request's bytes copied into them).
  void ValidateAndBuild(int model, std::unique_ptr<hetnet::serving::InferRequest> request) {
    auto queued = std::make_unique<hetnet::serving::QueuedRequest>();
    queued->request = std::move(request);
    hetnet::serving::ValidateRequest(configs[model], server->options().max_tensor_elements, queued.get());
    hetnet::serving::DynamicBatcher::Batch batch;
    batch.push_back(std::move(queued));
    size_t copied = 0;
    (void)hetnet::serving::BuildInputs(configs[model], batch, /*pinned=*/false, &copied);
  }
};

// One server for the process (never destroyed: its worker threads outlive the fuzz loop).
inline ServingFixture& Fixture() {
  static ServingFixture* f = new ServingFixture();
  return *f;
}

}  // namespace hetnet_fuzz
