// Memory report (core/memory_report.h): shapes from inference, bytes, parameters per device,
// "memory required for data" with in-place outputs adding nothing; the same from a workspace.
#include <catch2/catch.hpp>

#include "core/memory_report.h"
#include "core/workspace.h"
#include "device/cpu_packed_gemm.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
caffe2::NetDef Mlp(bool gpu) {
  caffe2::NetDef net;
  net.set_name("mlp");
  *net.add_op() = MakeOp("FC", {"data", "w1", "b1"}, {"h"}, {}, gpu ? Device::CUDA(0) : Device::CPU());
  *net.add_op() = MakeOp("Relu", {"h"}, {"h"}, {}, gpu ? Device::CUDA(0) : Device::CPU());  // in place: adds nothing
  *net.add_op() = MakeOp("FC", {"h", "w2", "b2"}, {"pred"});
  *net.add_op() = MakeOp("Softmax", {"pred"}, {"prob"});
  for (auto n : {"data", "w1", "b1", "w2", "b2"}) net.add_external_input(n);
  return net;
}
std::map<std::string, TensorInfo> Shapes() {
  return {{"data", TensorInfo::Of({8, 20}, DataType::Float)}, {"w1", TensorInfo::Of({30, 20}, DataType::Float)},
          {"b1", TensorInfo::Of({30}, DataType::Float)}, {"w2", TensorInfo::Of({10, 30}, DataType::Float)},
          {"b2", TensorInfo::Of({10}, DataType::Float)}};
}
}  // namespace

TEST_CASE("memory report from shape inference counts in-place outputs once", "[memory]") {
  const MemoryReport r = MemoryReportFromShapes(Mlp(false), Shapes(), {"w1", "b1", "w2", "b2"});
  CHECK(r.unknown == 0);
  // data: data 8x20 + h 8x30 (Relu in place adds nothing) + pred 8x10 + prob 8x10
  CHECK(r.data_total == 4 * (160 + 240 + 80 + 80));
  CHECK(r.param_total == 4 * (600 + 30 + 300 + 10));
  CHECK(r.param_bytes.at(Device::CPU()) == r.param_total);
  const std::string text = r.ToText();
  INFO(text);
  CHECK(text.find("Memory required for data: 2240 bytes") != std::string::npos);
  CHECK(text.find("h: float32[8, 30] (240) 960 bytes") != std::string::npos);
}

TEST_CASE("memory report: devices, unknown shapes, from a workspace", "[memory]") {
  const MemoryReport g = MemoryReportFromShapes(Mlp(true), Shapes(), {"w1", "b1", "w2", "b2"});
  CHECK(g.data_bytes.at(Device::CUDA(0)) == 4 * 240);
  CHECK(g.data_bytes.at(Device::CPU()) == 4 * (160 + 80 + 80));
  auto partial = Shapes();
  partial.erase("data");
  const MemoryReport u = MemoryReportFromShapes(Mlp(false), partial, {"w1", "b1", "w2", "b2"});
  CHECK(u.unknown == 4);  // data, h, pred, prob
  CHECK(u.ToText().find("unknown size") != std::string::npos);

  Workspace ws;
  for (const auto& [name, info] : Shapes()) Feed<float>(ws, name, info.dims, RandomVec(Numel(info.dims), 1));
  ws.RunNetOnce(Mlp(false));
  const MemoryReport w = MemoryReportFromWorkspace(Mlp(false), ws, {"w1", "b1", "w2", "b2"});
  CHECK(w.data_total == 4 * (160 + 240 + 80 + 80));
  CHECK(w.param_total == 4 * (600 + 30 + 300 + 10));
}

TEST_CASE("memory report from a workspace counts the packed weight copies that kernels hold", "[memory][packed]") {
  if (!cpu_gemm::Supported()) {
    WARN("skipped: this CPU has neither AVX-512F nor AVX2+FMA, the PACKED engine hands every FC to DNNL");
    return;
  }
  caffe2::NetDef net = Mlp(false);
  for (auto& op : *net.mutable_op())
    if (op.type() == "FC") op.set_engine("PACKED");  // what an inference net's FC gets
  Workspace ws;
  for (const auto& [name, info] : Shapes()) Feed<float>(ws, name, info.dims, RandomVec(Numel(info.dims), 1));
  const std::set<std::string> params{"w1", "b1", "w2", "b2"};
  CHECK(MemoryReportFromWorkspace(net, ws, params).prepared_total == 0);  // nothing run yet
  ws.CreateNet(net);
  ws.RunNet(net.name());
  // w1 [30, 20] and w2 [10, 30] in 32-column panels: 20 x 32 and 30 x 32 floats.
  const MemoryReport r = MemoryReportFromWorkspace(net, ws, params);
  CHECK(r.prepared_total == 4 * (20 * 32 + 30 * 32));
  CHECK(r.prepared_bytes.at(Device::CPU()) == r.prepared_total);
  CHECK(r.param_total == 4 * (600 + 30 + 300 + 10));  // the blobs themselves, as before
  CHECK(r.ToText().find("Memory held by prepared weight copies: " + std::to_string(r.prepared_total)) !=
        std::string::npos);
  // The copies live as long as an operator holds them.
  ws.DeleteNet(net.name());
  CHECK(MemoryReportFromWorkspace(net, ws, params).prepared_total == 0);
}
