// OpCost (core/op_cost.h): exact FLOPs of the registered cost functions on known shapes (output
// shapes from each op's own schema), and the generic estimate flagged `estimated`.
#include <catch2/catch.hpp>

#include "core/op_cost.h"
#include "core/op_schema.h"

using namespace hetnet;

namespace {

caffe2::OperatorDef Op(const std::string& type, int n_in, std::vector<std::pair<std::string, int>> args = {}) {
  caffe2::OperatorDef def;
  def.set_type(type);
  for (int i = 0; i < n_in; ++i) def.add_input("in" + std::to_string(i));
  def.add_output("out");
  for (auto& a : args) {
    auto* arg = def.add_arg();
    arg->set_name(a.first);
    arg->set_i(a.second);
  }
  return def;
}

TensorInfo F(std::vector<int64_t> dims) { return TensorInfo::Of(std::move(dims), DataType::Float); }

// Cost with the outputs inferred by the op's schema.
OpCost Cost(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  const OpSchema* s = OpSchemaRegistry::Find(def.type());
  REQUIRE(s != nullptr);
  return CostOf(def, in, s->InferShapes(def, in));
}

}  // namespace

TEST_CASE("op cost: FC and FCTransposed are 2*M*N*K", "[auto_placement][op_cost]") {
  OpCost c = Cost(Op("FC", 3), {F({4, 8}), F({16, 8}), F({16})});
  CHECK(c.flops == 2.0 * 4 * 16 * 8);
  CHECK(c.kind == OpKind::kGemm);
  CHECK_FALSE(c.estimated);
  CHECK(c.bytes_read == (4 * 8 + 16 * 8 + 16) * 4.0);
  CHECK(c.bytes_written == 4 * 16 * 4.0);
  // X flattened at axis 1: [2, 3, 4] is M=2, K=12.
  c = Cost(Op("FC", 3), {F({2, 3, 4}), F({5, 12}), F({5})});
  CHECK(c.flops == 2.0 * 2 * 5 * 12);
  c = Cost(Op("FCTransposed", 3), {F({4, 8}), F({8, 16}), F({16})});
  CHECK(c.flops == 2.0 * 4 * 16 * 8);
  CHECK(c.kind == OpKind::kGemm);
}

TEST_CASE("op cost: MatMul and BatchMatMul", "[auto_placement][op_cost]") {
  OpCost c = Cost(Op("MatMul", 2), {F({3, 7}), F({7, 5})});
  CHECK(c.flops == 2.0 * 3 * 5 * 7);
  CHECK(c.kind == OpKind::kGemm);
  c = Cost(Op("MatMul", 2, {{"trans_b", 1}}), {F({3, 7}), F({5, 7})});
  CHECK(c.flops == 2.0 * 3 * 5 * 7);
  c = Cost(Op("BatchMatMul", 2), {F({6, 3, 7}), F({6, 7, 5})});
  CHECK(c.flops == 2.0 * 6 * 3 * 5 * 7);
}

TEST_CASE("op cost: Conv is 2*N*Cout*OH*OW*Cin/group*kH*kW", "[auto_placement][op_cost]") {
  OpCost c = Cost(Op("Conv", 3, {{"kernel", 3}}), {F({2, 3, 8, 8}), F({4, 3, 3, 3}), F({4})});
  CHECK(c.flops == 2.0 * 2 * 4 * 6 * 6 * 3 * 3 * 3);
  CHECK(c.kind == OpKind::kConv);
  CHECK_FALSE(c.estimated);
  CHECK(c.bytes_written == 2 * 4 * 6 * 6 * 4.0);
  // Stride 2, pad 1, group 2: Cin/group = 2, output 3x3.
  c = Cost(Op("Conv", 2, {{"kernel", 3}, {"stride", 2}, {"pad", 1}, {"group", 2}}), {F({1, 4, 5, 5}), F({6, 2, 3, 3})});
  CHECK(c.flops == 2.0 * 1 * 6 * 3 * 3 * 2 * 3 * 3);
  // ConvTranspose: every input element through Cout/group * kH * kW weights.
  c = Cost(Op("ConvTranspose", 2, {{"kernel", 2}, {"stride", 2}}), {F({1, 3, 4, 4}), F({3, 5, 2, 2})});
  CHECK(c.flops == 2.0 * 1 * 3 * 4 * 4 * 5 * 2 * 2);
  CHECK(c.kind == OpKind::kConv);
}

TEST_CASE("op cost: pooling and elementwise ops are bandwidth-bound", "[auto_placement][op_cost]") {
  OpCost c = Cost(Op("MaxPool", 1, {{"kernel", 2}, {"stride", 2}}), {F({1, 3, 8, 8})});
  CHECK(c.kind == OpKind::kMemory);
  CHECK(c.flops == 3 * 4 * 4 * 4.0);
  CHECK(c.bytes_read == 3 * 8 * 8 * 4.0);
  CHECK(c.bytes_written == 3 * 4 * 4 * 4.0);
  c = Cost(Op("Relu", 1), {F({10, 10})});
  CHECK(c.flops == 100);
  CHECK(c.bytes_read + c.bytes_written == 800);
  CHECK_FALSE(c.estimated);
  c = Cost(Op("Sum", 3), {F({10}), F({10}), F({10})});
  CHECK(c.flops == 20);
  CHECK(c.bytes_read == 120);
  c = Cost(Op("CopyCPUToGPU", 1), {F({256})});
  CHECK(c.flops == 0);
  CHECK(c.bytes_read == 1024);
  for (const char* t : {"Add", "Mul", "Sigmoid", "Tanh", "Softmax", "SpatialBN", "Concat", "Copy", "CopyGPUToCPU",
                        "AveragePool", "FCTransposed", "BatchMatMul"})
    CHECK(OpCostRegistry::Find(t) != nullptr);
}

TEST_CASE("op cost: the generic estimate is flagged", "[auto_placement][op_cost]") {
  REQUIRE(OpCostRegistry::Find("NoSuchOpType") == nullptr);
  // One FLOP per output element, bytes in + out.
  OpCost c = CostOf(Op("NoSuchOpType", 2), {F({3, 4}), TensorInfo::Of({2}, DataType::Int64)}, {F({3, 4})});
  CHECK(c.estimated);
  CHECK(c.kind == OpKind::kMemory);
  CHECK(c.flops == 12);
  CHECK(c.bytes_read == 48 + 16);
  CHECK(c.bytes_written == 48);
  // Unknown shapes: zeros, estimated, with and without a registered function.
  c = CostOf(Op("NoSuchOpType", 1), {TensorInfo::Unknown()}, {F({3})});
  CHECK(c.estimated);
  CHECK(c.flops == 0);
  CHECK(c.bytes_read + c.bytes_written == 0);
  c = CostOf(Op("FC", 3), {F({4, 8}), TensorInfo::Unknown(), F({16})}, {TensorInfo::Unknown()});
  CHECK(c.estimated);
  CHECK(c.flops == 0);
}
