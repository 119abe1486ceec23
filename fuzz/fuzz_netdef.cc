// NetDef bytes through the project's loader (binary wire format first, then text format, as
// `hetnet run` / `inspect` and Workspace loading read them), then the pure cross-device copy pass
// and its text and Graphviz reports (what `hetnet inspect --placement` prints).
#include "core/placement.h"
#include "core/proto_io.h"
#include "fuzz/fuzz_common.h"

static void Run(const uint8_t* data, size_t size) {
  caffe2::NetDef net;
  const std::string bytes = hetnet_fuzz::Bytes(data, size);
  hetnet::ParseProtoFromString(bytes, &net, "<fuzz>");
  hetnet_fuzz::CheckParseBound(bytes, net);
  const std::string again = hetnet::SerializeProto(net);
  if (!again.empty()) {
    caffe2::NetDef back;
    hetnet::ParseProtoFromString(again, &back, "<fuzz round trip>");
  }
  if (net.op_size() > 256) return;
  hetnet::CopyPassResult r = hetnet::CrossDeviceCopyPass(net);
  (void)r.report.ToText();
  (void)r.report.ToDot();
}

HETNET_FUZZ_ENTRY(Run)
