// BoundParsedSize: the memory protobuf's parse takes, bounded from the wire bytes before parsing.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "proto/caffe2.pb.h"
#include "serving/proto/grpc_service.pb.h"
#include "core/proto_parse_bound.h"

using hetnet::BoundParsedSize;
using hetnet::ParseBound;

namespace {

template <typename Msg>
ParseBound Bound(const std::string& wire, int max_depth = 100) {
  google::protobuf::io::ArrayInputStream in(wire.data(), static_cast<int>(wire.size()), 1024);  // many chunks
  return BoundParsedSize(Msg::descriptor(), &in, wire.size(), max_depth);
}

// The bound of a message's wire form holds what its parse really takes, and is not far above it.
template <typename Msg>
void CheckBoundHolds(const Msg& original, double slack) {
  const std::string wire = original.SerializeAsString();
  ParseBound b = Bound<Msg>(wire);
  REQUIRE(b.ok);
  Msg parsed;
  REQUIRE(parsed.ParseFromString(wire));
  const uint64_t used = parsed.SpaceUsedLong();
  INFO("wire " << wire.size() << " bytes, parsed " << used << ", bound " << b.bytes);
  CHECK(b.bytes >= used);
  CHECK(static_cast<double>(b.bytes) <= slack * static_cast<double>(used) + 4096);
}

}  // namespace

TEST_CASE("the parse bound holds for ModelInferRequests of every shape", "[serving]") {
  using inference::ModelInferRequest;
  std::mt19937 rng(7);
  SECTION("raw contents: the bound is about the wire size") {
    ModelInferRequest m;
    m.set_model_name("simple");
    for (int i = 0; i < 2; ++i) {
      auto* t = m.add_inputs();
      t->set_name("INPUT" + std::to_string(i));
      t->set_datatype("INT32");
      t->add_shape(1);
      t->add_shape(250000);
      m.add_raw_input_contents(std::string(1000000, 'x'));
    }
    CheckBoundHolds(m, 1.1);
    CHECK(Bound<ModelInferRequest>(m.SerializeAsString()).bytes < 2'100'000);
  }
  SECTION("typed contents of every kind, packed and one by one") {
    ModelInferRequest m;
    auto* c = m.add_inputs()->mutable_contents();
    for (int i = 0; i < 5000; ++i) {
      c->add_bool_contents(i % 3 == 0);
      c->add_int_contents(static_cast<int32_t>(rng()));
      c->add_int64_contents(i % 7);  // 1-byte varints: 8 bytes parsed each
      c->add_uint_contents(rng() % 200);
      c->add_uint64_contents(uint64_t{rng()} << 20);
      c->add_fp32_contents(static_cast<float>(i));
      c->add_fp64_contents(i * 0.5);
      c->add_bytes_contents(i % 2 ? "" : std::string(i % 40, 'b'));  // empty ones: 2 bytes on the wire
    }
    CheckBoundHolds(m, 3.0);
  }
  SECTION("many empty inputs, parameters and outputs") {
    ModelInferRequest m;
    for (int i = 0; i < 3000; ++i) {
      m.add_inputs();
      m.add_outputs()->set_name("o");
      (*m.mutable_parameters())["p" + std::to_string(i)].set_int64_param(i);
      (*m.mutable_inputs(i)->mutable_parameters())["k"].set_string_param(std::string(i % 50, 's'));
    }
    CheckBoundHolds(m, 4.0);
  }
  SECTION("empty map entries: the parse inserts a key and a default value (found by fuzz_grpc_infer)") {
    // id "\x01\x02"; one input with an unknown field 8 "abc" and an empty parameters entry.
    const std::string wire("\x1a\x02\x01\x02\x2a\x07\x42\x03\x61\x62\x63\x22\x00", 13);
    ParseBound b = Bound<ModelInferRequest>(wire);
    REQUIRE(b.ok);
    ModelInferRequest parsed;
    REQUIRE(parsed.ParseFromString(wire));
    CHECK(b.bytes >= parsed.SpaceUsedLong());
    // Three unpacked bools in the contents of one input: a repeated field's first block.
    const std::string bools("\x2a\x0a\x2a\x08\x08\xff\x48\x08\xff\x7a\x08\x08", 12);
    b = Bound<ModelInferRequest>(bools);
    REQUIRE(b.ok);
    REQUIRE(parsed.ParseFromString(bools));
    CHECK(b.bytes >= parsed.SpaceUsedLong());
    std::string many;
    for (int i = 0; i < 1000; ++i) many += std::string("\x22\x00", 2);  // 1000 empty entries, all key ""
    for (int i = 0; i < 1000; ++i) many += std::string("\x22\x04\x0a\x02", 4) + std::to_string(10 + i % 90);
    b = Bound<ModelInferRequest>(many);
    REQUIRE(b.ok);
    REQUIRE(parsed.ParseFromString(many));
    CHECK(b.bytes >= parsed.SpaceUsedLong());
  }
  SECTION("unknown fields are kept by the parse and counted") {
    ModelInferRequest m;
    m.set_model_name("simple");
    std::string wire = m.SerializeAsString();
    for (int i = 0; i < 2000; ++i) {
      wire += std::string("\xa8\x06", 2) + static_cast<char>(i % 100);  // field 101, varint
      wire += std::string("\xb2\x06\x03", 3) + "abc";                   // field 102, 3 bytes
    }
    ParseBound b = Bound<ModelInferRequest>(wire);
    REQUIRE(b.ok);
    ModelInferRequest parsed;
    REQUIRE(parsed.ParseFromString(wire));
    CHECK(b.bytes >= parsed.SpaceUsedLong());
  }
}

TEST_CASE("malformed wire bytes, groups and deep nesting have no bound", "[serving]") {
  using inference::ModelInferRequest;
  ModelInferRequest m;
  m.set_model_name("simple");
  m.add_raw_input_contents(std::string(100, 'x'));
  const std::string wire = m.SerializeAsString();
  for (size_t cut : {wire.size() - 1, wire.size() - 50, size_t{9}}) {
    ParseBound b = Bound<ModelInferRequest>(wire.substr(0, cut));
    CHECK_FALSE(b.ok);
    CHECK_FALSE(b.error.empty());
    CHECK_FALSE(ModelInferRequest().ParseFromString(wire.substr(0, cut)));
  }
  // A length past the end of its enclosing message.
  CHECK_FALSE(Bound<ModelInferRequest>(std::string("\x32\x05\x0a\x7f", 4) + "ab").ok);
  // Groups (wire type 3) are kept as unknown fields, nested sets and all (found by fuzz_netdef:
  // they were refused here, but protobuf parses them).
  std::string groups;
  for (int i = 0; i < 200; ++i) groups += std::string("\xab\x06", 2);  // field 101: 200 nested groups
  for (int i = 0; i < 200; ++i) groups += std::string("\xac\x06", 2);
  std::string flat;
  for (int i = 0; i < 500; ++i) flat += std::string("\xab\x06\xac\x06", 4);  // 500 empty groups side by side
  for (const std::string& wire : {std::string("\xab\x06\xac\x06", 4), flat}) {
    ParseBound g = Bound<ModelInferRequest>(wire);
    CHECK(g.ok);
    ModelInferRequest parsed;
    REQUIRE(parsed.ParseFromString(wire));
    CHECK(g.bytes >= parsed.SpaceUsedLong());
  }
  CHECK_FALSE(Bound<ModelInferRequest>(groups).ok);  // deeper than the recursion limit: protobuf refuses too
  CHECK_FALSE(ModelInferRequest().ParseFromString(groups));
  ParseBound end = Bound<ModelInferRequest>(std::string("\x0c", 1));
  CHECK_FALSE(end.ok);
  CHECK(end.error == "an end-group tag outside a group");
  // A zero tag.
  CHECK_FALSE(Bound<ModelInferRequest>(std::string("\x00\x01", 2)).ok);
  // NetDef -> OperatorDef -> Argument -> NetDef ... 60 levels of NetDef are 180 of messages.
  caffe2::NetDef root;
  caffe2::NetDef* net = &root;
  for (int i = 0; i < 60; ++i) net = net->add_op()->add_arg()->mutable_n();
  net->set_name("deep");
  ParseBound deep = Bound<caffe2::NetDef>(root.SerializeAsString());
  CHECK_FALSE(deep.ok);
  CHECK(deep.error == "messages nest deeper than 100 levels");
  CHECK(Bound<caffe2::NetDef>(root.SerializeAsString(), 200).ok);
  // An empty message is fine: its object alone.
  ParseBound empty = Bound<ModelInferRequest>("");
  CHECK(empty.ok);
  CHECK(empty.bytes >= ModelInferRequest().SpaceUsedLong());
}
