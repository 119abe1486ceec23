// Fills, GivenTensor*Fill, Reshape, Flatten.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

TEST_CASE("ConstantFill: shape, dtype, value, input shape, extra_shape, input_as_shape", "[ops][fill]") {
  Workspace ws;
  auto def = MakeOp("ConstantFill", {}, {"y"}, {ArgInts("shape", {2, 3}), ArgF("value", 1.5f)});
  RunOp(ws, def);
  CHECK(Fetch(ws, "y").shape() == std::vector<int64_t>{2, 3});
  CHECK(FetchVec<float>(ws, "y") == std::vector<float>(6, 1.5f));
  CheckShapeInference(ws, def);
  RunOp(ws, MakeOp("ConstantFill", {}, {"i"}, {ArgInts("shape", {4}), ArgI("value", 7), ArgI("dtype", 10)}));
  CHECK(Fetch(ws, "i").dtype() == DataType::Int64);
  CHECK(FetchVec<int64_t>(ws, "i") == std::vector<int64_t>(4, 7));
  RunOp(ws, MakeOp("ConstantFill", {}, {"b"}, {ArgInts("shape", {3}), ArgI("value", 1), ArgI("dtype", 5)}));
  CHECK(FetchVec<bool>(ws, "b") == std::vector<bool>(3, true));
  RunOp(ws, MakeOp("ConstantFill", {}, {"i32"}, {ArgInts("shape", {2}), ArgF("value", 3.f), ArgI("dtype", 2)}));
  CHECK(FetchVec<int32_t>(ws, "i32") == std::vector<int32_t>(2, 3));
  RunOp(ws, MakeOp("ConstantFill", {}, {"s"}, {ArgInts("shape", {2}), ArgS("value", "hi"), ArgI("dtype", 4)}));
  CHECK(FetchVec<std::string>(ws, "s") == std::vector<std::string>(2, "hi"));
  RunOp(ws, MakeOp("ConstantFill", {}, {"scalar"}, {ArgF("value", 2.f)}));
  CHECK(Fetch(ws, "scalar").ndim() == 0);
  CHECK(FetchVec<float>(ws, "scalar") == std::vector<float>{2.f});
  // With an input: its shape (any dtype), plus extra_shape.
  Feed<int32_t>(ws, "like", {2, 2}, {1, 2, 3, 4});
  auto d2 = MakeOp("ConstantFill", {"like"}, {"z"}, {ArgInts("extra_shape", {3})});
  RunOp(ws, d2);
  CHECK(Fetch(ws, "z").shape() == std::vector<int64_t>{2, 2, 3});
  CHECK(Fetch(ws, "z").dtype() == DataType::Float);
  CheckShapeInference(ws, d2);
  Feed<int64_t>(ws, "shp", {3}, {4, 0, 2});
  RunOp(ws, MakeOp("ConstantFill", {"shp"}, {"e"}, {ArgI("input_as_shape", 1)}));
  CHECK(Fetch(ws, "e").shape() == std::vector<int64_t>{4, 0, 2});
  // In place.
  RunOp(ws, MakeOp("ConstantFill", {"y"}, {"y"}, {ArgF("value", -1.f)}));
  CHECK(FetchVec<float>(ws, "y") == std::vector<float>(6, -1.f));
  // Errors.
  RequireThrowsWith(ws, MakeOp("ConstantFill", {"like"}, {"q"}, {ArgInts("shape", {2})}), {"'like'", "shape"});
  RequireThrowsWith(ws, MakeOp("ConstantFill", {}, {"q"}, {ArgInts("shape", {2, -3})}), {"'q'", "negative"});
  CHECK_THROWS_AS(RunOp(ws, MakeOp("ConstantFill", {}, {"q"}, {ArgI("dtype", 11)})), Error);
  Feed<float>(ws, "fshape", {2}, {1.f, 2.f});
  RequireThrowsWith(ws, MakeOp("ConstantFill", {"fshape"}, {"q"}, {ArgI("input_as_shape", 1)}), {"'fshape'", "float32"});
  CHECK(GradientRegistry::HasNoGradient("ConstantFill"));
}

TEST_CASE("Random fills: ranges, moments, seeds, Xavier scale", "[ops][fill]") {
  caffe2::DeviceOption seeded;
  seeded.set_random_seed(123);
  auto seeded_op = [&](caffe2::OperatorDef d) { *d.mutable_device_option() = seeded; return d; };
  Workspace ws;
  RunOp(ws, seeded_op(MakeOp("UniformFill", {}, {"u"}, {ArgInts("shape", {1000, 3}), ArgF("min", -2.f), ArgF("max", 3.f)})));
  auto u = FetchVec<float>(ws, "u");
  double mean = 0;
  for (float v : u) { CHECK(v >= -2.f); CHECK(v <= 3.f); mean += v; }
  CHECK(std::abs(mean / u.size() - 0.5) < 0.1);
  RunOp(ws, seeded_op(MakeOp("UniformFill", {}, {"u2"}, {ArgInts("shape", {1000, 3}), ArgF("min", -2.f), ArgF("max", 3.f)})));
  CHECK(FetchVec<float>(ws, "u2") == u);  // same seed, same numbers
  RunOp(ws, seeded_op(MakeOp("GaussianFill", {}, {"g"}, {ArgInts("shape", {4000}), ArgF("mean", 1.f), ArgF("std", 2.f)})));
  auto g = FetchVec<float>(ws, "g");
  double m = 0, v2 = 0;
  for (float v : g) m += v;
  m /= g.size();
  for (float v : g) v2 += (v - m) * (v - m);
  CHECK(std::abs(m - 1.0) < 0.15);
  CHECK(std::abs(std::sqrt(v2 / g.size()) - 2.0) < 0.15);
  auto xd = MakeOp("XavierFill", {}, {"x"}, {ArgInts("shape", {50, 12})});
  RunOp(ws, xd);
  const float s = std::sqrt(3.f / 12.f);
  float mx = 0;
  for (float v : FetchVec<float>(ws, "x")) { CHECK(std::abs(v) <= s); mx = std::max(mx, std::abs(v)); }
  CHECK(mx > 0.8f * s);
  CheckShapeInference(ws, xd);
  RunOp(ws, MakeOp("XavierFill", {}, {"x0"}, {ArgInts("shape", {0, 4})}));
  CHECK(Fetch(ws, "x0").numel() == 0);
  RequireThrowsWith(ws, MakeOp("UniformFill", {}, {"bad"}, {ArgF("min", 2.f), ArgF("max", 1.f)}), {"'bad'", "min"});
  RequireThrowsWith(ws, MakeOp("GaussianFill", {}, {"bad"}, {ArgF("std", -1.f)}), {"'bad'", "std"});
}

TEST_CASE("GivenTensor*Fill family", "[ops][fill]") {
  Workspace ws;
  auto d = MakeOp("GivenTensorFill", {}, {"f"}, {ArgInts("shape", {2, 2}), ArgFloats("values", {1, 2, 3, 4.5f})});
  RunOp(ws, d);
  CHECK(FetchVec<float>(ws, "f") == std::vector<float>{1, 2, 3, 4.5f});
  CHECK(Fetch(ws, "f").shape() == std::vector<int64_t>{2, 2});
  CheckShapeInference(ws, d);
  RunOp(ws, MakeOp("GivenTensorIntFill", {}, {"i"}, {ArgInts("shape", {3}), ArgInts("values", {-1, 0, 5})}));
  CHECK(FetchVec<int32_t>(ws, "i") == std::vector<int32_t>{-1, 0, 5});
  RunOp(ws, MakeOp("GivenTensorInt64Fill", {}, {"l"}, {ArgInts("shape", {2}), ArgInts("values", {1LL << 40, 3})}));
  CHECK(FetchVec<int64_t>(ws, "l") == std::vector<int64_t>{1LL << 40, 3});
  RunOp(ws, MakeOp("GivenTensorBoolFill", {}, {"b"}, {ArgInts("shape", {3}), ArgInts("values", {1, 0, 1})}));
  CHECK(FetchVec<bool>(ws, "b") == std::vector<bool>{true, false, true});
  RunOp(ws, MakeOp("GivenTensorStringFill", {}, {"s"}, {ArgInts("shape", {2}), ArgStrings("values", {"a", "bc"})}));
  CHECK(FetchVec<std::string>(ws, "s") == std::vector<std::string>{"a", "bc"});
  RunOp(ws, MakeOp("GivenTensorDoubleFill", {}, {"dd"}, {ArgInts("shape", {1}), ArgFloats("values", {0.25f})}));
  CHECK(FetchVec<double>(ws, "dd") == std::vector<double>{0.25});
  RunOp(ws, MakeOp("GivenTensorFill", {}, {"e"}, {ArgInts("shape", {0, 3})}));
  CHECK(Fetch(ws, "e").shape() == std::vector<int64_t>{0, 3});
  RequireThrowsWith(ws, MakeOp("GivenTensorFill", {}, {"bad"}, {ArgInts("shape", {2, 2}), ArgFloats("values", {1, 2, 3})}),
                    {"'bad'", "[2, 2]", "3 values"});
  CHECK(GradientRegistry::HasNoGradient("GivenTensorFill"));
}

TEST_CASE("Reshape: arg and input shapes, 0 and -1, old_shape, in place", "[ops][reshape]") {
  Workspace ws;
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
  Feed<float>(ws, "X", {2, 3, 4}, x);
  auto d = MakeOp("Reshape", {"X"}, {"Y", "old"}, {ArgInts("shape", {0, -1})});
  RunOp(ws, d);
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 12});
  CHECK(FetchVec<float>(ws, "Y") == x);
  CHECK(Fetch(ws, "old").dtype() == DataType::Int64);
  CHECK(FetchVec<int64_t>(ws, "old") == std::vector<int64_t>{2, 3, 4});
  CheckShapeInference(ws, d);
  Feed<int64_t>(ws, "S", {3}, {4, -1, 2});
  RunOp(ws, MakeOp("Reshape", {"X", "S"}, {"Y2", "old2"}));
  CHECK(Fetch(ws, "Y2").shape() == std::vector<int64_t>{4, 3, 2});
  Feed<int32_t>(ws, "S32", {2}, {6, 4});
  RunOp(ws, MakeOp("Reshape", {"X", "S32"}, {"Y3", "old3"}));
  CHECK(Fetch(ws, "Y3").shape() == std::vector<int64_t>{6, 4});
  RunOp(ws, MakeOp("Reshape", {"X"}, {"X", "old4"}, {ArgInts("shape", {24})}));  // in place
  CHECK(Fetch(ws, "X").shape() == std::vector<int64_t>{24});
  CHECK(FetchVec<float>(ws, "X") == x);
  Feed<float>(ws, "E", {0, 5}, {});
  RunOp(ws, MakeOp("Reshape", {"E"}, {"E2", "o"}, {ArgInts("shape", {5, -1})}));
  CHECK(Fetch(ws, "E2").shape() == std::vector<int64_t>{5, 0});
  // Errors.
  Feed<float>(ws, "Z", {2, 3}, std::vector<float>(6, 1.f));
  RequireThrowsWith(ws, MakeOp("Reshape", {"Z"}, {"R", "o"}, {ArgInts("shape", {4, 2})}), {"'Z'", "[2, 3]", "[4, 2]"});
  RequireThrowsWith(ws, MakeOp("Reshape", {"Z"}, {"R", "o"}, {ArgInts("shape", {-1, -1})}), {"more than one -1"});
  RequireThrowsWith(ws, MakeOp("Reshape", {"Z"}, {"R", "o"}, {ArgInts("shape", {-1, 4})}), {"'Z'", "[-1, 4]"});
  RequireThrowsWith(ws, MakeOp("Reshape", {"Z"}, {"R", "o"}, {ArgInts("shape", {6, 1, 0})}), {"'Z'", "0"});
  Feed<float>(ws, "Sf", {2}, {3.f, 2.f});
  RequireThrowsWith(ws, MakeOp("Reshape", {"Z", "Sf"}, {"R", "o"}), {"'Sf'", "float32"});
  CHECK_THROWS_AS(RunOp(ws, MakeOp("Reshape", {"Z"}, {"R", "o"})), Error);  // no shape at all
  CHECK_THROWS_AS(RunOp(ws, MakeOp("Reshape", {"Z", "S32"}, {"R", "o"}, {ArgInts("shape", {6})})), Error);  // both
  // Device inference: the shape input and old_shape stay on CPU for a GPU op.
  auto devs = OpSchemaRegistry::Find("Reshape")->InferDevices(MakeOp("Reshape", {"Z", "S"}, {"R", "o"}), Device::CUDA(0));
  CHECK(devs.first[0] == Device::CUDA(0));
  CHECK(devs.first[1] == Device::CPU());
  CHECK(devs.second[0] == Device::CUDA(0));
  CHECK(devs.second[1] == Device::CPU());
  // Gradient.
  Workspace g;
  Feed<float>(g, "X", {2, 3, 2}, RandomVec(12, 1));
  CheckGradient(g, MakeOp("Reshape", {"X"}, {"Y", "old"}, {ArgInts("shape", {3, -1})}), {0});
}

TEST_CASE("Flatten at axis, in place, gradient", "[ops][reshape]") {
  Workspace ws;
  auto x = RandomVec(2 * 3 * 4, 1);
  Feed<float>(ws, "X", {2, 3, 4}, x);
  auto d = MakeOp("Flatten", {"X"}, {"Y"});
  RunOp(ws, d);
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 12});
  CHECK(FetchVec<float>(ws, "Y") == x);
  CheckShapeInference(ws, d);
  auto d2 = MakeOp("Flatten", {"X"}, {"Y2"}, {ArgI("axis", 2)});
  RunOp(ws, d2);
  CHECK(Fetch(ws, "Y2").shape() == std::vector<int64_t>{6, 4});
  CheckShapeInference(ws, d2);
  RunOp(ws, MakeOp("Flatten", {"X"}, {"Y0"}, {ArgI("axis", 0)}));
  CHECK(Fetch(ws, "Y0").shape() == std::vector<int64_t>{1, 24});
  RunOp(ws, MakeOp("Flatten", {"X"}, {"X"}));
  CHECK(Fetch(ws, "X").shape() == std::vector<int64_t>{2, 12});
  RequireThrowsWith(ws, MakeOp("Flatten", {"X"}, {"Q"}, {ArgI("axis", 5)}), {"'X'", "axis 5"});
  Workspace g;
  Feed<float>(g, "X", {2, 3, 2}, RandomVec(12, 1));
  CheckGradient(g, MakeOp("Flatten", {"X"}, {"Y"}), {0});
}
