// The element types hetnet adds beyond Caffe2's (uint32, uint64, bfloat16): the bfloat16 conversion
// against an independent nearest-value search, the dtype tables and the TensorProto fields, and the
// CPU kernels that take them (integer wrap as NumPy's, unsigned comparisons, shifts, TopK, Range,
// Cast) against references computed here in wider or exact arithmetic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "core/tensor_proto.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t ToBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// The reference: of the two bfloat16 values bracketing finite f (its bits truncated, and the next
// one away from zero), the nearer in exact double arithmetic; a tie takes the even pattern.
uint16_t ReferenceBFloat16(float f) {
  const uint32_t x = ToBits(f);
  const uint16_t lo = static_cast<uint16_t>(x >> 16);
  if ((x & 0xffffu) == 0) return lo;
  const uint16_t hi = static_cast<uint16_t>(lo + 1);  // next magnitude (may become Inf)
  const double d = f;
  const double dlo = std::fabs(d - static_cast<double>(FromBits(static_cast<uint32_t>(lo) << 16)));
  const uint32_t hi_bits = static_cast<uint32_t>(hi) << 16;
  // Past the largest finite value the upper neighbour is Inf: measure to 2^128 (where it would be).
  const double hi_value = (hi_bits & 0x7fffffffu) == 0x7f800000u ? std::copysign(std::ldexp(1.0, 128), d)
                                                                  : static_cast<double>(FromBits(hi_bits));
  const double dhi = std::fabs(d - hi_value);
  if (dlo != dhi) return dlo < dhi ? lo : hi;
  return (lo & 1u) ? hi : lo;
}

}  // namespace

TEST_CASE("BFloat16 rounds to nearest even, keeps NaN and Inf, handles denormals", "[dtypes][bfloat16]") {
  // Ties: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 (even: 1); 1 + 3 * 2^-8 halfway above 1 + 2^-7.
  CHECK(FloatToBFloat16(1.f + std::ldexp(1.f, -8)).bits == 0x3f80);
  CHECK(FloatToBFloat16(1.f + 3 * std::ldexp(1.f, -8)).bits == 0x3f82);
  CHECK(FloatToBFloat16(1.f + std::ldexp(1.f, -8) + std::ldexp(1.f, -20)).bits == 0x3f81);  // just above
  CHECK(FloatToBFloat16(-1.f - 3 * std::ldexp(1.f, -8)).bits == 0xbf82);
  // NaN stays NaN (quiet, sign kept), even one whose payload sits in the low 16 bits only.
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    const BFloat16 b = FloatToBFloat16(FromBits(nan));
    CHECK(std::isnan(BFloat16ToFloat(b)));
    CHECK((b.bits & 0x8000u) == ((nan >> 16) & 0x8000u));
  }
  CHECK(FloatToBFloat16(std::numeric_limits<float>::infinity()).bits == 0x7f80);
  CHECK(FloatToBFloat16(-std::numeric_limits<float>::infinity()).bits == 0xff80);
  CHECK(FloatToBFloat16(std::numeric_limits<float>::max()).bits == 0x7f80);  // rounds past the largest
  CHECK(std::isinf(BFloat16ToFloat(FloatToBFloat16(std::numeric_limits<float>::max()))));
  // Denormals: float's smallest rounds to 0; ties between bfloat16 denormals go to even.
  CHECK(FloatToBFloat16(FromBits(0x00000001u)).bits == 0x0000);
  CHECK(FloatToBFloat16(FromBits(0x00008000u)).bits == 0x0000);
  CHECK(FloatToBFloat16(FromBits(0x00018000u)).bits == 0x0002);
  CHECK(FloatToBFloat16(FromBits(0x80008001u)).bits == 0x8001);
  CHECK(BFloat16ToFloat(BFloat16{0x0001}) == std::ldexp(1.f, -133));
  CHECK(std::signbit(BFloat16ToFloat(FloatToBFloat16(-0.f))));
  // Every bfloat16 pattern converts to float and back unchanged (NaNs stay NaN).
  for (uint32_t b = 0; b <= 0xffffu; ++b) {
    const float f = BFloat16ToFloat(BFloat16{static_cast<uint16_t>(b)});
    if (std::isnan(f)) CHECK(std::isnan(BFloat16ToFloat(FloatToBFloat16(f))));
    else if (FloatToBFloat16(f).bits != b) FAIL("pattern " << b << " does not round trip");
  }
  // Random finite floats (all exponents) against the nearest-value reference.
  std::mt19937 gen(15);
  std::uniform_int_distribution<uint32_t> bits;
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const uint32_t x = bits(gen);
    if ((x & 0x7f800000u) == 0x7f800000u) continue;
    ++checked;
    const uint16_t want = ReferenceBFloat16(FromBits(x));
    if (FloatToBFloat16(FromBits(x)).bits != want) FAIL("float bits " << x << ": got " << FloatToBFloat16(FromBits(x)).bits << ", want " << want);
  }
  CHECK(checked > 190000);
}

TEST_CASE("uint32, uint64, bfloat16: dtype tables and numbers apart from Caffe2's", "[dtypes]") {
  CHECK(ItemSize(DataType::UInt32) == 4);
  CHECK(ItemSize(DataType::UInt64) == 8);
  CHECK(ItemSize(DataType::BFloat16) == 2);
  CHECK(std::string(DataTypeName(DataType::UInt32)) == "uint32");
  CHECK(std::string(DataTypeName(DataType::UInt64)) == "uint64");
  CHECK(std::string(DataTypeName(DataType::BFloat16)) == "bfloat16");
  for (DataType t : {DataType::UInt32, DataType::UInt64, DataType::BFloat16}) {
    const int v = static_cast<int>(t);
    CHECK(IsKnownDataType(v));
    CHECK(v > 15);  // Caffe2's TensorProto.DataType ends at 15 (REBATCHING_BUFFER)
    CHECK(caffe2::TensorProto::DataType_IsValid(v));  // declared in proto/caffe2.proto, so it parses
  }
  CHECK(!IsKnownDataType(14));
  CHECK(!IsKnownDataType(100));
  CHECK(!IsKnownDataType(104));
  CHECK(static_cast<int>(caffe2::TensorProto::UINT32) == static_cast<int>(DataType::UInt32));
  CHECK(static_cast<int>(caffe2::TensorProto::BFLOAT16) == static_cast<int>(DataType::BFloat16));
}

TEST_CASE("new dtypes cross TensorProto as little-endian raw_data", "[dtypes][io][tensor_proto]") {
  Tensor u = HostTensor<uint64_t>({3}, {0, 1, std::numeric_limits<uint64_t>::max()});
  caffe2::TensorProto p = TensorToProto(u, "u");
  CHECK(p.data_type() == caffe2::TensorProto::UINT64);
  CHECK(p.raw_data().size() == 24);
  CHECK(p.int64_data_size() == 0);
  caffe2::TensorProto q;
  REQUIRE(q.ParseFromString(p.SerializeAsString()));
  CHECK(q.data_type() == caffe2::TensorProto::UINT64);  // not dropped as an unknown enum value
  Tensor back = TensorFromProto(q);
  REQUIRE(back.dtype() == DataType::UInt64);
  CHECK(back.data<uint64_t>()[2] == std::numeric_limits<uint64_t>::max());
  // bfloat16 is also read from int32_data (the 16-bit patterns, as Caffe2 writes float16).
  caffe2::TensorProto b;
  b.set_data_type(caffe2::TensorProto::BFLOAT16);
  b.add_dims(2);
  b.add_int32_data(0x3fc0);  // 1.5
  b.add_int32_data(0xc000);  // -2
  Tensor bt = TensorFromProto(b);
  REQUIRE(bt.dtype() == DataType::BFloat16);
  CHECK(BFloat16ToFloat(bt.data<BFloat16>()[0]) == 1.5f);
  CHECK(BFloat16ToFloat(bt.data<BFloat16>()[1]) == -2.f);
}

TEST_CASE("Add/Sub/Mul/Div on uint32 and uint64 wrap as NumPy's", "[dtypes][ops]") {
  const std::vector<uint32_t> a32{0xffffffffu, 7, 0, 0x80000000u, 12345};
  const std::vector<uint32_t> b32{2, 9, 5, 0x80000000u, 0};
  const std::vector<uint64_t> a64{~uint64_t{0}, 7, 0, uint64_t{1} << 63, 99};
  const std::vector<uint64_t> b64{3, 9, 5, uint64_t{1} << 63, 0};
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    INFO(op);
    Workspace ws;
    Feed<uint32_t>(ws, "A", {5}, a32);
    Feed<uint32_t>(ws, "B", {5}, b32);
    Feed<uint64_t>(ws, "C", {5}, a64);
    Feed<uint64_t>(ws, "D", {5}, b64);
    RunOp(ws, MakeOp(op, {"A", "B"}, {"Y32"}));
    RunOp(ws, MakeOp(op, {"C", "D"}, {"Y64"}));
    const auto y32 = FetchVec<uint32_t>(ws, "Y32");
    const auto y64 = FetchVec<uint64_t>(ws, "Y64");
    const std::string o = op;
    for (size_t i = 0; i < 5; ++i) {
      // Reference: exact in 128 bits, reduced modulo 2^32 / 2^64; x / 0 is 0 (hetnet's rule).
      auto ref = [&](unsigned __int128 x, unsigned __int128 y, unsigned __int128 mod) -> unsigned __int128 {
        if (o == "Add") return (x + y) % mod;
        if (o == "Sub") return (x + mod - y) % mod;
        if (o == "Mul") return (x * y) % mod;
        return y == 0 ? 0 : x / y;
      };
      CHECK(y32[i] == static_cast<uint32_t>(ref(a32[i], b32[i], (unsigned __int128)1 << 32)));
      CHECK(y64[i] == static_cast<uint64_t>(ref(a64[i], b64[i], (unsigned __int128)1 << 64)));
    }
  }
  // Numpy broadcasting and the legacy broadcast path take them too.
  Workspace ws;
  Feed<uint64_t>(ws, "A", {2, 2}, {1, 2, 3, 4});
  Feed<uint64_t>(ws, "B", {2}, {~uint64_t{0}, 10});
  RunOp(ws, MakeOp("Add", {"A", "B"}, {"Y"}, {ArgI("broadcast", 1)}));
  CHECK(FetchVec<uint64_t>(ws, "Y") == std::vector<uint64_t>{0, 12, 2, 14});
  Feed<uint64_t>(ws, "B1", {2, 1}, {5, 6});
  RunOp(ws, MakeOp("Sub", {"A", "B1"}, {"Z"}));
  CHECK(FetchVec<uint64_t>(ws, "Z") == std::vector<uint64_t>{~uint64_t{0} - 3, ~uint64_t{0} - 2, ~uint64_t{0} - 2, ~uint64_t{0} - 1});
}

TEST_CASE("comparisons, bit ops and Mod on unsigned values above the signed range", "[dtypes][ops]") {
  Workspace ws;
  const uint64_t big = (uint64_t{1} << 63) + 5;
  Feed<uint64_t>(ws, "A", {3}, {big, 1, 7});
  Feed<uint64_t>(ws, "B", {3}, {1, big, 7});
  RunOp(ws, MakeOp("GT", {"A", "B"}, {"G"}));
  CHECK(FetchVec<bool>(ws, "G") == std::vector<bool>{true, false, false});  // unsigned, not two's complement
  RunOp(ws, MakeOp("LE", {"A", "B"}, {"L"}));
  CHECK(FetchVec<bool>(ws, "L") == std::vector<bool>{false, true, true});
  Feed<uint32_t>(ws, "U", {2}, {0xfffffff0u, 3});
  Feed<uint32_t>(ws, "V", {2}, {3, 0xfffffff0u});
  RunOp(ws, MakeOp("EQ", {"U", "V"}, {"E"}));
  CHECK(FetchVec<bool>(ws, "E") == std::vector<bool>{false, false});
  RunOp(ws, MakeOp("BitwiseXor", {"A", "B"}, {"X"}));
  CHECK(FetchVec<uint64_t>(ws, "X") == std::vector<uint64_t>{big ^ 1, big ^ 1, 0});
  // Shifts: counts at or past the width (and ones that are negative as int64) give 0.
  Feed<uint64_t>(ws, "S", {4}, {1, 63, 64, uint64_t{1} << 63});
  Feed<uint64_t>(ws, "One", {1}, {~uint64_t{0}});
  RunOp(ws, MakeOp("BitShift", {"One", "S"}, {"R"}, {ArgS("direction", "RIGHT")}));
  CHECK(FetchVec<uint64_t>(ws, "R") == std::vector<uint64_t>{~uint64_t{0} >> 1, 1, 0, 0});
  Feed<uint32_t>(ws, "Y32", {2}, {31, 32});
  Feed<uint32_t>(ws, "X32", {1}, {3});
  RunOp(ws, MakeOp("BitShift", {"X32", "Y32"}, {"L"}, {ArgS("direction", "LEFT")}));
  CHECK(FetchVec<uint32_t>(ws, "L") == std::vector<uint32_t>{0x80000000u, 0});
  RunOp(ws, MakeOp("OnnxMod", {"U", "V"}, {"M"}));
  CHECK(FetchVec<uint32_t>(ws, "M") == std::vector<uint32_t>{0xfffffff0u % 3, 3});
}

TEST_CASE("TopK on CPU takes integer dtypes, largest and smallest", "[dtypes][ops][topk]") {
  std::mt19937_64 gen(7);
  std::vector<uint64_t> x(24);
  for (auto& v : x) v = gen() % 5 == 0 ? x[0] : gen();  // some ties
  for (int largest : {1, 0}) {
    INFO("largest " << largest);
    Workspace ws;
    Feed<uint64_t>(ws, "X", {4, 6}, x);
    RunOp(ws, MakeOp("TopK", {"X"}, {"V", "I"}, {ArgI("k", 3), ArgI("largest", largest)}));
    const auto v = FetchVec<uint64_t>(ws, "V");
    const auto idx = FetchVec<int64_t>(ws, "I");
    for (int r = 0; r < 4; ++r) {
      std::vector<int64_t> order(6);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return largest ? x[r * 6 + a] > x[r * 6 + b] : x[r * 6 + a] < x[r * 6 + b];
      });
      for (int j = 0; j < 3; ++j) {
        CHECK(idx[r * 3 + j] == order[j]);
        CHECK(v[r * 3 + j] == x[r * 6 + order[j]]);
      }
    }
  }
}

TEST_CASE("Cast, Range and ConstantFill produce bfloat16 and the unsigned types", "[dtypes][ops][cast]") {
  Workspace ws;
  const std::vector<float> f{1.f + std::ldexp(1.f, -8), -3.75f, 1e-40f, 3.4e38f, std::nanf("")};
  Feed<float>(ws, "F", {5}, f);
  RunOp(ws, MakeOp("Cast", {"F"}, {"B"}, {ArgS("to", "BFLOAT16")}));
  const Tensor b = Fetch(ws, "B");
  REQUIRE(b.dtype() == DataType::BFloat16);
  for (int i = 0; i < 5; ++i) CHECK(b.data<BFloat16>()[i].bits == FloatToBFloat16(f[i]).bits);
  RunOp(ws, MakeOp("Cast", {"B"}, {"U"}, {ArgI("to", static_cast<int>(DataType::UInt32))}));
  CHECK(FetchVec<uint32_t>(ws, "U")[0] == 1);
  RunOp(ws, MakeOp("Cast", {"B"}, {"H"}, {ArgS("to", "FLOAT16")}));  // through float32
  CHECK(HalfToFloat(FetchVec<Half>(ws, "H")[1]) == -3.75f);
  Feed<int64_t>(ws, "N", {2}, {-1, 5});
  RunOp(ws, MakeOp("Cast", {"N"}, {"N64"}, {ArgS("to", "UINT64")}));
  CHECK(FetchVec<uint64_t>(ws, "N64") == std::vector<uint64_t>{~uint64_t{0}, 5});  // wraps as NumPy's astype

  Feed(ws, "S", HostTensor<BFloat16>({}, {FloatToBFloat16(1.f)}));
  Feed(ws, "L", HostTensor<BFloat16>({}, {FloatToBFloat16(10.f)}));
  Feed(ws, "D", HostTensor<BFloat16>({}, {FloatToBFloat16(2.5f)}));
  RunOp(ws, MakeOp("Range", {"S", "L", "D"}, {"R"}));
  const Tensor r = Fetch(ws, "R");
  REQUIRE(r.dtype() == DataType::BFloat16);
  REQUIRE(r.numel() == 4);
  for (int i = 0; i < 4; ++i) CHECK(BFloat16ToFloat(r.data<BFloat16>()[i]) == 1.f + 2.5f * i);

  RunOp(ws, MakeOp("ConstantFill", {}, {"C"},
                   {ArgInts("shape", {2}), ArgI("dtype", static_cast<int>(DataType::BFloat16)), ArgF("value", 0.1f)}));
  CHECK(FetchVec<BFloat16>(ws, "C")[1].bits == FloatToBFloat16(0.1f).bits);
  RunOp(ws, MakeOp("ConstantFill", {}, {"C2"},
                   {ArgInts("shape", {1}), ArgI("dtype", static_cast<int>(DataType::UInt32)), ArgI("value", 4000000000)}));
  CHECK(FetchVec<uint32_t>(ws, "C2")[0] == 4000000000u);
}

TEST_CASE("float16 and bfloat16 Add/Mul/comparisons run through float32 on CPU; other ops refuse them",
          "[dtypes][ops][bfloat16]") {
  Workspace ws;
  // 1 + 2^-8 is not a bfloat16: the sum 1 + (1 + 2^-8 rounded = 1) is 2; 3 * (1 + 2^-7) rounds to even.
  const float a[] = {1.f, 3.f, -2.5f, 1e30f};
  const float b[] = {1.f + std::ldexp(1.f, -8), 1.f + std::ldexp(1.f, -7), 4.f, 1e10f};
  std::vector<BFloat16> ab, bb;
  std::vector<Half> ah, bh;
  for (int i = 0; i < 4; ++i) {
    ab.push_back(FloatToBFloat16(a[i])), bb.push_back(FloatToBFloat16(b[i]));
    ah.push_back(FloatToHalf(a[i] / 1e25f)), bh.push_back(FloatToHalf(b[i]));
  }
  Feed(ws, "A", HostTensor<BFloat16>({4}, ab));
  Feed(ws, "B", HostTensor<BFloat16>({4}, bb));
  RunOp(ws, MakeOp("Mul", {"A", "B"}, {"M"}));
  RunOp(ws, MakeOp("Add", {"A", "B"}, {"A"}));  // in place
  RunOp(ws, MakeOp("GT", {"B", "A"}, {"G"}));
  const auto m = FetchVec<BFloat16>(ws, "M"), sum = FetchVec<BFloat16>(ws, "A");
  const auto g = FetchVec<bool>(ws, "G");
  for (int i = 0; i < 4; ++i) {
    // Reference: the exact double result of the bfloat16 operands, rounded to the nearest bfloat16.
    const double x = BFloat16ToFloat(ab[i]), y = BFloat16ToFloat(bb[i]);
    CHECK(m[i].bits == ReferenceBFloat16(static_cast<float>(x * y)));  // float holds x * y exactly
    CHECK(sum[i].bits == ReferenceBFloat16(static_cast<float>(x + y)));
    CHECK(g[i] == (y > BFloat16ToFloat(sum[i])));
  }
  CHECK(BFloat16ToFloat(m[1]) == 3.f + 4 * std::ldexp(1.f, -7));  // 3 + 3 * 2^-7 tied, to even
  Feed(ws, "H", HostTensor<Half>({4}, ah));
  Feed(ws, "HB", HostTensor<Half>({4}, bh));
  RunOp(ws, MakeOp("Sub", {"H", "HB"}, {"HS"}, {ArgI("broadcast", 1)}));
  const auto hs = FetchVec<Half>(ws, "HS");
  for (int i = 0; i < 4; ++i)
    CHECK(hs[i].bits == FloatToHalf(HalfToFloat(ah[i]) - HalfToFloat(bh[i])).bits);  // float32 exact here
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("OnnxMod", {"B", "B"}, {"Y"})), Catch::Matchers::Contains("bfloat16"));
}
