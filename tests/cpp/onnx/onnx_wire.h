// A minimal protobuf wire-format writer for building ONNX ModelProto bytes in C++ tests, which may not
// include ONNX headers (only onnx/ does). Field numbers are onnx.proto's; only the fields the tests
// use. Also makes hostile models (short raw_data, absurd dims, bad external paths) easy to write.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace onnx_wire {

class Pb {
 public:
  Pb& Varint(int field, uint64_t v) {
    Key(field, 0);
    Raw(v);
    return *this;
  }
  Pb& Bytes(int field, const std::string& b) {
    Key(field, 2);
    Raw(b.size());
    s_ += b;
    return *this;
  }
  Pb& Msg(int field, const Pb& m) { return Bytes(field, m.s_); }
  Pb& Fixed32(int field, float f) {
    Key(field, 5);
    char b[4];
    std::memcpy(b, &f, 4);
    s_.append(b, 4);
    return *this;
  }
  const std::string& str() const { return s_; }

 private:
  void Key(int field, int wire) { Raw((static_cast<uint64_t>(field) << 3) | wire); }
  void Raw(uint64_t v) {
    while (v >= 0x80) {
      s_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    s_ += static_cast<char>(v);
  }
  std::string s_;
};

// onnx.TensorProto.DataType values.
constexpr int kFloat = 1, kInt64 = 7;

// TensorProto: dims 1, data_type 2, float_data 4, int64_data 7, name 8, raw_data 9, external_data 13,
// data_location 14 (EXTERNAL = 1).
inline Pb FloatTensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
  Pb t;
  for (int64_t d : dims) t.Varint(1, static_cast<uint64_t>(d));
  t.Varint(2, kFloat).Bytes(8, name);
  std::string raw(values.size() * 4, '\0');
  if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  return t.Bytes(9, raw);
}
inline Pb Int64Tensor(const std::string& name, const std::vector<int64_t>& values) {
  Pb t;
  t.Varint(1, values.size()).Varint(2, kInt64).Bytes(8, name);
  for (int64_t v : values) t.Varint(7, static_cast<uint64_t>(v));
  return t;
}
inline Pb ExternalTensor(const std::string& name, const std::vector<int64_t>& dims, const std::string& location,
                         int64_t offset, int64_t length) {
  Pb t;
  for (int64_t d : dims) t.Varint(1, static_cast<uint64_t>(d));
  t.Varint(2, kFloat).Bytes(8, name);
  t.Msg(13, Pb().Bytes(1, "location").Bytes(2, location));
  t.Msg(13, Pb().Bytes(1, "offset").Bytes(2, std::to_string(offset)));
  t.Msg(13, Pb().Bytes(1, "length").Bytes(2, std::to_string(length)));
  return t.Varint(14, 1);
}

// AttributeProto: name 1, f 2, i 3, s 4, ints 8, type 20 (FLOAT 1, INT 2, STRING 3, INTS 7).
inline Pb AttrInt(const std::string& name, int64_t v) {
  return Pb().Bytes(1, name).Varint(3, static_cast<uint64_t>(v)).Varint(20, 2);
}
inline Pb AttrFloat(const std::string& name, float v) { return Pb().Bytes(1, name).Fixed32(2, v).Varint(20, 1); }
inline Pb AttrInts(const std::string& name, const std::vector<int64_t>& v) {
  Pb a;
  a.Bytes(1, name);
  for (int64_t x : v) a.Varint(8, static_cast<uint64_t>(x));
  return a.Varint(20, 7);
}

// NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7.
inline Pb Node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
               const std::vector<Pb>& attrs = {}, const std::string& name = "", const std::string& domain = "") {
  Pb n;
  for (const auto& i : in) n.Bytes(1, i);
  for (const auto& o : out) n.Bytes(2, o);
  if (!name.empty()) n.Bytes(3, name);
  n.Bytes(4, op);
  for (const auto& a : attrs) n.Msg(5, a);
  if (!domain.empty()) n.Bytes(7, domain);
  return n;
}

// ValueInfoProto: name 1, type 2; TypeProto.tensor_type 1; Tensor: elem_type 1, shape 2;
// TensorShapeProto.dim 1; Dimension: dim_value 1, dim_param 2. A negative dim is symbolic ("N").
inline Pb Value(const std::string& name, const std::vector<int64_t>& dims, bool with_shape = true) {
  Pb tensor;
  tensor.Varint(1, kFloat);
  if (with_shape) {
    Pb shape;
    for (int64_t d : dims) shape.Msg(1, d < 0 ? Pb().Bytes(2, "N") : Pb().Varint(1, static_cast<uint64_t>(d)));
    tensor.Msg(2, shape);
  }
  return Pb().Bytes(1, name).Msg(2, Pb().Msg(1, tensor));
}

// GraphProto: node 1, name 2, initializer 5, input 11, output 12. ModelProto: ir_version 1,
// producer_name 2, graph 7, opset_import 8 (OperatorSetIdProto: domain 1, version 2).
inline std::string Model(const std::vector<Pb>& nodes, const std::vector<Pb>& inputs, const std::vector<Pb>& outputs,
                         const std::vector<Pb>& inits = {}, int64_t opset = 13,
                         const std::vector<std::pair<std::string, int64_t>>& extra_opsets = {}) {
  Pb g;
  for (const auto& n : nodes) g.Msg(1, n);
  g.Bytes(2, "test_graph");
  for (const auto& i : inits) g.Msg(5, i);
  for (const auto& i : inputs) g.Msg(11, i);
  for (const auto& o : outputs) g.Msg(12, o);
  Pb m;
  m.Varint(1, 8).Bytes(2, "onnx_wire").Msg(7, g).Msg(8, Pb().Varint(2, static_cast<uint64_t>(opset)));
  for (const auto& [domain, v] : extra_opsets) m.Msg(8, Pb().Bytes(1, domain).Varint(2, static_cast<uint64_t>(v)));
  return m.str();
}

}  // namespace onnx_wire
