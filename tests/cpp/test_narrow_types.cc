// ONNX's narrow types (core/narrow_types.h): every code round-trips through its value, the values
// of the formats' landmarks (largest finite, smallest subnormal, Inf/NaN codes), rounding ties to
// even, saturation, and the Cast operator on them. tests/python/onnx/test_onnx_narrow_types.py
// compares the same conversions with ml_dtypes and ONNX's reference over sweeps of values.
#include <cmath>

#include "core/narrow_types.h"
#include "op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
const DataType kFloats[] = {kFloat8E4M3FN, kFloat8E4M3FNUZ, kFloat8E5M2, kFloat8E5M2FNUZ, kFloat4E2M1, kFloat8E8M0};
}

TEST_CASE("narrow types: every code of a float type round-trips through its value", "[narrow_types]") {
  for (DataType t : kFloats) {
    const int codes = t == kFloat4E2M1 ? 16 : 256;
    for (int c = 0; c < codes; ++c) {
      const float v = NarrowToFloat(t, static_cast<uint8_t>(c));
      if (std::isnan(v)) continue;
      INFO(DataTypeName(t) << " code " << c << " value " << v);
      CHECK(NarrowFromDouble(t, v, false, E8M0Rounding::kDown) == c);  // (up would lift E8M0's 2^-127, a float32 subnormal)
    }
  }
}

TEST_CASE("narrow types: landmarks, ties to even and saturation", "[narrow_types]") {
  CHECK(NarrowToFloat(kFloat8E4M3FN, 0x7E) == 448.f);
  CHECK(std::isnan(NarrowToFloat(kFloat8E4M3FN, 0x7F)));
  CHECK(NarrowToFloat(kFloat8E4M3FN, 0x01) == std::ldexp(1.f, -9));
  CHECK(NarrowToFloat(kFloat8E4M3FNUZ, 0x7F) == 240.f);
  CHECK(std::isnan(NarrowToFloat(kFloat8E4M3FNUZ, 0x80)));
  CHECK(NarrowToFloat(kFloat8E5M2, 0x7B) == 57344.f);
  CHECK(std::isinf(NarrowToFloat(kFloat8E5M2, 0x7C)));
  CHECK(NarrowToFloat(kFloat4E2M1, 0x7) == 6.f);
  CHECK(NarrowToFloat(kFloat4E2M1, 0xF) == -6.f);
  CHECK(NarrowToFloat(kFloat8E8M0, 127) == 1.f);
  CHECK(NarrowToFloat(kInt4, 0xF) == -1.f);
  CHECK(NarrowToFloat(kUInt4, 0xF) == 15.f);
  CHECK(NarrowToFloat(kInt2, 0x2) == -2.f);

  CHECK(NarrowFromDouble(kFloat4E2M1, 5.0, true) == 0x6);   // tie between 4 and 6: even mantissa (4)
  CHECK(NarrowFromDouble(kFloat4E2M1, 0.25, true) == 0x0);  // tie between 0 and 0.5: 0
  CHECK(NarrowFromDouble(kFloat8E4M3FN, 464.0, false) == 0x7E);  // tie between 448 and 480 (the NaN code): even
  CHECK(NarrowFromDouble(kFloat8E4M3FN, 465.0, false) == 0x7F);  // past it: NaN
  CHECK(NarrowFromDouble(kFloat8E4M3FN, 460.0, false) == 0x7E);  // rounds down to 448
  CHECK(NarrowFromDouble(kFloat8E4M3FN, INFINITY, true) == 0x7E);
  CHECK(NarrowFromDouble(kFloat8E4M3FN, -INFINITY, true) == 0xFE);
  CHECK(NarrowFromDouble(kFloat8E5M2, 1e6, false) == 0x7C);      // Inf
  CHECK(NarrowFromDouble(kFloat8E5M2FNUZ, 1e6, false) == 0x80);  // NaN
  CHECK(NarrowFromDouble(kFloat8E4M3FNUZ, -0.0, true) == 0x00);  // no negative zero
  CHECK(NarrowFromDouble(kFloat8E8M0, 1.5, true, E8M0Rounding::kUp) == 128);
  CHECK(NarrowFromDouble(kFloat8E8M0, 1.5, true, E8M0Rounding::kDown) == 127);
  CHECK(NarrowFromDouble(kInt4, -2.7, true) == 0xE);  // truncates toward zero: -2
  CHECK(NarrowFromInteger(kInt4, 300) == 0xC);        // wraps: 300 mod 16
  CHECK(NarrowFromInteger(kUInt2, -1) == 0x3);
  CHECK(ItemSize(kFloat8E5M2) == 1);
  CHECK(std::string(DataTypeName(kFloat4E2M1)) == "float4_e2m1fn");
}

TEST_CASE("narrow types: Cast converts on CPU in both directions; arithmetic refuses them by name", "[narrow_types]") {
  Workspace ws;
  Feed<float>(ws, "x", {4}, {0.5f, -3.f, 1000.f, 0.f});
  auto cast = [&](const std::string& in, const std::string& out, DataType to, int saturate) {
    RunOp(ws, MakeOp("Cast", {in}, {out}, {ArgI("to", static_cast<int>(to)), ArgI("saturate", saturate)}));
    return Fetch(ws, out);
  };
  const Tensor f8 = cast("x", "f8", kFloat8E4M3FN, 1);
  REQUIRE(f8.dtype() == kFloat8E4M3FN);
  CHECK(static_cast<const uint8_t*>(f8.raw_data())[2] == 0x7E);  // 1000 saturates to 448
  const Tensor back = cast("f8", "back", DataType::Float, 1);
  CHECK(back.data<float>()[0] == 0.5f);
  CHECK(back.data<float>()[1] == -3.f);
  CHECK(back.data<float>()[2] == 448.f);
  CHECK(back.data<float>()[3] == 0.f);
  CHECK(static_cast<const uint8_t*>(cast("x", "f8n", kFloat8E4M3FN, 0).raw_data())[2] == 0x7F);  // NaN
  try {  // in a workspace run, the error names the operator and its input
    ws.RunOperatorOnce(MakeOp("Relu", {"f8"}, {"r"}));
    FAIL("Relu ran on a float8 tensor");
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("Relu") != std::string::npos);
    CHECK(msg.find("'f8' float8_e4m3fn[4]") != std::string::npos);
  }
}
