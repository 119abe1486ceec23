// uint32/uint64 on CUDA: Add/Sub/Mul/Div (legacy and NumPy broadcasting), the comparisons and TopK
// (every dtype, largest and smallest) give the CPU's bits; values above the signed range and wraps
// included. Skips with a visible reason where no GPU exists.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

template <typename T>
Tensor Unsigned(std::vector<int64_t> shape, uint64_t seed) {
  std::mt19937_64 gen(seed);
  Tensor t = HostTensor<T>(shape, std::vector<T>(static_cast<size_t>(Numel(shape))));
  T* p = t.mutable_data<T>();
  for (int64_t i = 0; i < t.numel(); ++i)  // ties, zeros (Div), values past the signed maximum
    p[i] = gen() % 7 == 0 ? p[0] : gen() % 11 == 0 ? T(0) : static_cast<T>(gen());
  return t;
}

// def on CPU and CUDA:0 from the same inputs; every output byte for byte.
void SameBits(const caffe2::OperatorDef& def, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  Workspace cpu, gpu;
  for (const auto& in : inputs) {
    Feed(cpu, in.first, in.second);
    Feed(gpu, in.first, in.second, Device::CUDA(0));
  }
  RunOp(cpu, def);
  RunOp(gpu, OnDevice(def, Device::CUDA(0)));
  for (const auto& o : def.output()) {
    const Tensor a = Fetch(cpu, o), b = Fetch(gpu, o);
    INFO(def.type() << " output '" << o << "' " << DataTypeName(a.dtype()));
    REQUIRE(a.dtype() == b.dtype());
    REQUIRE(a.shape() == b.shape());
    CHECK(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
  }
}

template <typename T>
void ArithmeticAndCompare() {
  const Tensor a = Unsigned<T>({3, 4, 5}, 1), b = Unsigned<T>({3, 4, 5}, 2), row = Unsigned<T>({5}, 3),
               mid = Unsigned<T>({4}, 4);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "EQ", "GT", "GE", "LT", "LE"}) {
    SameBits(MakeOp(op, {"A", "B"}, {"C"}), {{"A", a}, {"B", b}});
    SameBits(MakeOp(op, {"A", "B"}, {"C"}), {{"A", a}, {"B", row}});  // NumPy broadcasting
    SameBits(MakeOp(op, {"A", "B"}, {"C"}, {ArgI("broadcast", 1), ArgI("axis", 1)}), {{"A", a}, {"B", mid}});
  }
}

}  // namespace

TEST_CASE("uint32 and uint64 arithmetic and comparisons on CUDA equal the CPU's", "[gpu][dtypes]") {
  if (SkipWithoutGpu()) return;
  ArithmeticAndCompare<uint32_t>();
  ArithmeticAndCompare<uint64_t>();
}

TEST_CASE("TopK on CUDA takes every CPU dtype, largest and smallest", "[gpu][dtypes][topk]") {
  if (SkipWithoutGpu()) return;
  const Tensor u64 = Unsigned<uint64_t>({4, 9}, 5), u32 = Unsigned<uint32_t>({4, 9}, 6);
  Tensor i64 = HostTensor<int64_t>({4, 9}, std::vector<int64_t>(36)), i8 = HostTensor<int8_t>({2, 9, 2}, std::vector<int8_t>(36));
  std::mt19937 gen(7);
  for (int k = 0; k < 36; ++k) i64.mutable_data<int64_t>()[k] = static_cast<int64_t>(gen()) - (1ll << 31);
  for (int k = 0; k < 36; ++k) i8.mutable_data<int8_t>()[k] = static_cast<int8_t>(gen() % 9) - 4;
  for (int largest : {1, 0}) {
    INFO("largest " << largest);
    for (const Tensor* x : std::vector<const Tensor*>{&u64, &u32, &i64})
      SameBits(MakeOp("TopK", {"X"}, {"V", "I", "F"}, {ArgI("k", 4), ArgI("largest", largest)}), {{"X", *x}});
    SameBits(MakeOp("TopK", {"X"}, {"V", "I"}, {ArgI("k", 3), ArgI("axis", 1), ArgI("largest", largest)}),
             {{"X", i8}});
  }
}
