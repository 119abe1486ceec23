// TensorProto <-> Tensor for every dtype, every place Caffe2 versions put data, and chunked blobs.
#include <catch2/catch.hpp>

#include <cstring>

#include "core/proto_io.h"
#include "core/tensor_proto.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test::wire;

namespace {

// A tensor of dtype with varied values (negative where the type allows).
Tensor Sample(DataType dtype, std::vector<int64_t> shape = {2, 3}) {
  Tensor t(shape, dtype);
  DispatchDataType(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mutable_data_existing<T>();  // keeps BYTE (mutable_data would retag it uint8)
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, std::string>) {
        p[i] = "s" + std::to_string(i) + std::string(i, '\0');  // bytes, not C strings
      } else if constexpr (std::is_same_v<T, Half>) {
        p[i] = FloatToHalf(0.5f * static_cast<float>(i) - 1.f);
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        p[i] = FloatToBFloat16(0.5f * static_cast<float>(i) - 1.f);
      } else if constexpr (std::is_same_v<T, bool>) {
        p[i] = (i % 2) == 0;
      } else {
        p[i] = static_cast<T>(std::is_signed_v<T> ? 3 * i - 5 : 40 * i + 7);
      }
    }
  });
  return t;
}

bool SameContents(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  if (a.dtype() == DataType::String) {
    for (int64_t i = 0; i < a.numel(); ++i)
      if (a.data<std::string>()[i] != b.data<std::string>()[i]) return false;
    return true;
  }
  return a.numel() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

const DataType kAllTypes[] = {DataType::Float, DataType::Float16, DataType::Double, DataType::Int8,
                              DataType::UInt8, DataType::Byte,    DataType::Int16,  DataType::UInt16,
                              DataType::Int32, DataType::Int64,   DataType::Bool,   DataType::String,
                              DataType::UInt32, DataType::UInt64, DataType::BFloat16};

}  // namespace

TEST_CASE("every dtype round trips through TensorProto bytes", "[io][tensor_proto]") {
  for (DataType dt : kAllTypes) {
    INFO(DataTypeName(dt));
    Tensor t = Sample(dt);
    caffe2::TensorProto p;
    ParseProtoFromString(SerializeProto(TensorToProto(t, "t")), &p);
    CHECK(p.name() == "t");
    CHECK(static_cast<int>(p.data_type()) == static_cast<int>(dt));
    Tensor back = TensorFromProto(p);
    CHECK(back.device() == Device::CPU());
    CHECK(SameContents(t, back));
    // Text format too.
    caffe2::TensorProto q;
    ParseProtoFromString(SerializeProto(TensorToProto(t, "t"), true), &q);
    CHECK(SameContents(t, TensorFromProto(q)));
  }
}

TEST_CASE("writer uses Caffe2's fields per dtype", "[io][tensor_proto]") {
  CHECK(TensorToProto(Sample(DataType::Float)).float_data_size() == 6);
  CHECK(TensorToProto(Sample(DataType::Double)).double_data_size() == 6);
  CHECK(TensorToProto(Sample(DataType::Int64)).int64_data_size() == 6);
  CHECK(TensorToProto(Sample(DataType::String)).string_data_size() == 6);
  for (DataType dt : {DataType::Bool, DataType::UInt8, DataType::Int8, DataType::UInt16, DataType::Int16,
                      DataType::Float16, DataType::Int32}) {
    INFO(DataTypeName(dt));
    caffe2::TensorProto p = TensorToProto(Sample(dt));
    CHECK(p.int32_data_size() == 6);
    CHECK(p.raw_data().empty());
  }
  caffe2::TensorProto h = TensorToProto(Sample(DataType::Float16));
  CHECK(h.int32_data(2) == FloatToHalf(0.f).bits);  // the 16-bit pattern, not the value
  CHECK(h.int32_data(0) == 0xBC00);                   // -1.0
  CHECK(TensorToProto(Sample(DataType::Int8)).int32_data(0) == -5);
  CHECK(TensorToProto(Sample(DataType::Byte)).byte_data().size() == 6);
}

TEST_CASE("reader accepts small types in byte_data and raw_data, wide types in raw_data", "[io][tensor_proto]") {
  for (DataType dt : kAllTypes) {
    if (dt == DataType::String) continue;
    INFO(DataTypeName(dt));
    Tensor t = Sample(dt);
    const std::string bytes(static_cast<const char*>(t.raw_data()), t.nbytes());
    caffe2::TensorProto p;
    p.add_dims(2);
    p.add_dims(3);
    p.set_data_type(static_cast<caffe2::TensorProto::DataType>(dt));
    p.set_raw_data(bytes);
    CHECK(SameContents(t, TensorFromProto(p)));
    if (ItemSize(dt) <= 2) {
      p.clear_raw_data();
      p.set_byte_data(bytes);
      CHECK(SameContents(t, TensorFromProto(p)));
    }
  }
}

TEST_CASE("data_format 1: bfloat16 raw_data becomes float32", "[io][tensor_proto]") {
  caffe2::TensorProto p;
  p.add_dims(3);
  p.set_data_format(1);
  // bfloat16 is the top half of a float32: 1.0 = 0x3F80, -2.0 = 0xC000, 0.5 = 0x3F00.
  const unsigned char raw[] = {0x80, 0x3F, 0x00, 0xC0, 0x00, 0x3F};
  p.set_raw_data(std::string(reinterpret_cast<const char*>(raw), 6));
  Tensor t = TensorFromProto(p);
  REQUIRE(t.dtype() == DataType::Float);
  CHECK(t.data<float>()[0] == 1.f);
  CHECK(t.data<float>()[1] == -2.f);
  CHECK(t.data<float>()[2] == 0.5f);
  p.set_raw_data(std::string(5, '\0'));
  CHECK_THROWS_WITH(TensorFromProto(p), Catch::Contains("bfloat16"));
}

TEST_CASE("element count, dtype and dims errors name the tensor", "[io][tensor_proto][bad_input]") {
  caffe2::TensorProto p;
  p.set_name("weights");
  p.add_dims(2);
  p.add_dims(3);
  for (int i = 0; i < 5; ++i) p.add_float_data(1.f);
  try {
    TensorFromProto(p);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    CHECK_THAT(e.what(), Catch::Contains("'weights'") && Catch::Contains("float_data") &&
                             Catch::Contains("5") && Catch::Contains("6"));
  }
  p.clear_float_data();
  CHECK_THROWS_WITH(TensorFromProto(p), Catch::Contains("'weights'"));  // no data for 6 elements
  p.set_data_type(caffe2::TensorProto::UNDEFINED);
  CHECK_THROWS_WITH(TensorFromProto(p), Catch::Contains("unsupported data_type"));
  caffe2::TensorProto neg;
  neg.set_name("neg");
  neg.add_dims(-1);
  CHECK_THROWS_WITH(TensorFromProto(neg), Catch::Contains("'neg'") && Catch::Contains("negative"));
  // Huge dims with no data must fail cleanly, not try to allocate.
  caffe2::TensorProto huge;
  huge.add_dims(int64_t(1) << 40);
  huge.add_dims(int64_t(1) << 40);
  CHECK_THROWS_AS(TensorFromProto(huge), Error);
  caffe2::TensorProto raw;
  raw.set_data_type(caffe2::TensorProto::INT64);
  raw.add_dims(2);
  raw.set_raw_data(std::string(15, '\0'));
  CHECK_THROWS_WITH(TensorFromProto(raw), Catch::Contains("raw_data") && Catch::Contains("15 bytes"));
}

TEST_CASE("empty tensors and scalars round trip", "[io][tensor_proto]") {
  Tensor e({0, 4}, DataType::Float);
  Tensor back = TensorFromProto(TensorToProto(e));
  CHECK(back.shape() == std::vector<int64_t>{0, 4});
  Tensor s({}, DataType::Int64);
  s.mutable_data<int64_t>()[0] = 99;
  CHECK(TensorFromProto(TensorToProto(s)).data<int64_t>()[0] == 99);
}

TEST_CASE("BlobProto with chunked tensors (segments)", "[io][tensor_proto]") {
  Tensor t = Sample(DataType::Float, {5, 2});
  auto chunks = TensorToChunkedBlobProtos(t, "big", 3);
  REQUIRE(chunks.size() == 4);
  CHECK(chunks[1].type() == "Tensor");
  CHECK(chunks[1].tensor().segment().begin() == 3);
  CHECK(chunks[1].tensor().segment().end() == 6);
  CHECK(chunks[1].tensor().dims_size() == 2);  // full dims on every chunk, as Caffe2 writes
  CHECK(chunks[3].tensor().float_data_size() == 1);
  // Any order, through the wire.
  std::vector<caffe2::BlobProto> shuffled;
  for (int i : {2, 0, 3, 1}) {
    caffe2::BlobProto b;
    ParseProtoFromString(SerializeProto(chunks[i]), &b);
    shuffled.push_back(b);
  }
  CHECK(SameContents(t, TensorFromBlobProtos(shuffled)));
  CHECK_THROWS_WITH(TensorFromBlobProto(chunks[1]), Catch::Contains("chunk"));
  shuffled.pop_back();
  CHECK_THROWS_WITH(TensorFromBlobProtos(shuffled), Catch::Contains("'big'"));
  caffe2::BlobProto other;
  other.set_name("q");
  other.set_type("QTensor");
  CHECK_THROWS_WITH(TensorFromBlobProto(other), Catch::Contains("'q'") && Catch::Contains("QTensor"));
  // One chunk covering everything is a plain tensor.
  CHECK(TensorToChunkedBlobProtos(t, "big", 100).size() == 1);
  CHECK(SameContents(t, TensorFromBlobProto(TensorToChunkedBlobProtos(t, "big", 100)[0])));
}
