// Net creation with placement: a parsed NetDef through PlaceNetWith on a pretend machine with two
// GPUs (every placement rule, CPU fallback for types without a CUDA kernel, the copy pass: no GPU
// needed), then Workspace::CreateNet in a fresh workspace on this machine (operators constructed,
// executors built, no run). Nets over 256 ops are skipped (the op cap has its own tests).
#include "core/net.h"
#include "core/placement.h"
#include "core/proto_io.h"
#include "core/workspace.h"
#include "fuzz/fuzz_common.h"

static void Run(const uint8_t* data, size_t size) {
  caffe2::NetDef net;
  hetnet::ParseProtoFromString(hetnet_fuzz::Bytes(data, size), &net, "<fuzz>");
  if (net.op_size() > 256) return;
  try {
    hetnet::PlacementOptions opts;
    opts.strict = size % 2 == 1;
    auto placed = hetnet::PlaceNetWith(net, {}, {}, opts, 2,
                                       [](const std::string& type) { return type.size() % 3 != 0; });
    (void)placed.report.ToText();
  } catch (const hetnet::Error&) {
  }
  hetnet::Workspace ws;
  for (int i = 0; i < net.external_input_size() && i < 16; ++i) {
    if (!hetnet::HasNul(net.external_input(i))) ws.CreateBlob(net.external_input(i));
  }
  hetnet::NetBase* created = ws.CreateNet(net);
  (void)created->placement().ToText();
}

HETNET_FUZZ_ENTRY(Run)
