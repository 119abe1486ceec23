// NumPy .npy reading and writing: every supported dtype, header versions, bad files.
#include <catch2/catch.hpp>

#include <cstring>

#include "core/npy.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

std::string NpyBytes(int major, const std::string& dict, const std::string& data) {
  std::string header = dict;
  const size_t pre = major == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string FloatBytes(std::vector<float> v) { return std::string(reinterpret_cast<char*>(v.data()), v.size() * 4); }

}  // namespace

TEST_CASE("npy: writer matches numpy's bytes and every dtype round trips", "[io][npy]") {
  Tensor t({2, 3}, DataType::Float);
  for (int i = 0; i < 6; ++i) t.mutable_data<float>()[i] = static_cast<float>(i);
  const std::string bytes = SerializeNpy(t);
  // numpy 1.x/2.x: np.save(f, np.arange(6, dtype='<f4').reshape(2, 3)) is 152 bytes.
  CHECK(bytes.size() == 152);
  CHECK(bytes.substr(0, 10) == std::string("\x93NUMPY\x01\x00v\x00", 10));
  CHECK(bytes.substr(10, 59) == "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  CHECK(bytes[127] == '\n');

  TempDir dir;
  for (DataType dt : {DataType::Float, DataType::Double, DataType::Float16, DataType::Int8, DataType::UInt8,
                      DataType::Int16, DataType::UInt16, DataType::Int32, DataType::Int64, DataType::Bool}) {
    INFO(DataTypeName(dt));
    Tensor x({4}, dt);
    auto* raw = static_cast<uint8_t*>(x.raw_mutable_data(dt));
    for (size_t i = 0; i < x.nbytes(); ++i) raw[i] = dt == DataType::Bool ? (i % 2) : static_cast<uint8_t>(i * 37);
    WriteNpy(dir.File("x.npy"), x);
    Tensor back = ReadNpy(dir.File("x.npy"));
    CHECK(back.dtype() == dt);
    CHECK(back.shape() == std::vector<int64_t>{4});
    CHECK(std::memcmp(back.raw_data(), x.raw_data(), x.nbytes()) == 0);
  }
  Tensor scalar({}, DataType::Double);
  scalar.mutable_data<double>()[0] = 2.5;
  CHECK(ParseNpy(SerializeNpy(scalar)).data<double>()[0] == 2.5);
  CHECK(ParseNpy(SerializeNpy(scalar)).ndim() == 0);
  CHECK(ParseNpy(SerializeNpy(Tensor({0, 3}, DataType::Int32))).shape() == std::vector<int64_t>{0, 3});
}

TEST_CASE("npy: versions 2 and 3 headers, 1-d shapes, double-quoted keys", "[io][npy]") {
  for (int major : {1, 2, 3}) {
    Tensor t = ParseNpy(NpyBytes(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                                 FloatBytes({1, 2, 3})));
    CHECK(t.shape() == std::vector<int64_t>{3});
    CHECK(t.data<float>()[2] == 3.f);
  }
  Tensor q = ParseNpy(NpyBytes(1, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1, 2)}",
                               FloatBytes({5, 6})));
  CHECK(q.shape() == std::vector<int64_t>{1, 2});
}

TEST_CASE("npy: bad files give kInvalidArgument naming the file", "[io][npy][bad_input]") {
  TempDir dir;
  auto expect = [&](const std::string& name, const std::string& bytes, const std::string& what) {
    const std::string path = dir.Write(name, bytes);
    try {
      ReadNpy(path);
      FAIL("no error for " << name);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInvalidArgument);
      CHECK_THAT(e.what(), Catch::Contains(path) && Catch::Contains(what));
    }
  };
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  const std::string good = NpyBytes(1, dict, FloatBytes({1, 2, 3, 4}));
  expect("magic.npy", "PK\x03\x04 not numpy", "magic");
  expect("short.npy", good.substr(0, 8), "preamble");
  expect("header.npy", good.substr(0, 40), "header");
  expect("data.npy", good.substr(0, good.size() - 3), "truncated");
  expect("trailing.npy", good + "xx", "trailing");
  expect("fortran.npy", NpyBytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                                 FloatBytes({1, 2, 3, 4})), "fortran_order");
  expect("bigendian.npy", NpyBytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
                                   FloatBytes({1})), "big-endian");
  expect("unicode.npy", NpyBytes(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }",
                                 std::string(12, 'a')), "unsupported dtype");
  expect("object.npy", NpyBytes(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "12345678"),
         "unsupported dtype");
  expect("noshape.npy", NpyBytes(1, "{'descr': '<f4', 'fortran_order': False}", ""), "shape");
  expect("badshape.npy", NpyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (a, 2), }", ""),
         "shape");
  expect("version.npy", std::string("\x93NUMPY\x09\x00\x10\x00", 10) + std::string(16, ' '), "version");
  expect("overflow.npy",
         NpyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (999999999999, 999999999999), }", ""),
         "shape");
  CHECK_THROWS_AS(ReadNpy(dir.File("missing.npy")), Error);
  CHECK_THROWS_WITH(SerializeNpy(Tensor({1}, DataType::String)), Catch::Contains("string"));
}
