// Predictor: same results as a plain Workspace run, thread safety, and errors naming blobs.
#include <catch2/catch.hpp>

#include <thread>

#include "core/net.h"
#include "core/predictor.h"
#include "core/workspace.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

std::vector<float> InputFor(int seed) {
  std::vector<float> v(8);
  for (int i = 0; i < 8; ++i) v[i] = static_cast<float>((seed * 7 + i * 3) % 11) * 0.3f - 1.5f;
  return v;
}

std::vector<float> PlainWorkspaceRun(const caffe2::NetDef& init, const caffe2::NetDef& predict, int seed) {
  Workspace ws;
  ws.RunNetOnce(init);
  *ws.CreateBlob("data")->GetMutable<Tensor>() = FloatTensor({2, 4}, InputFor(seed));
  ws.RunNetOnce(predict);
  return Values(ws.GetBlobOrThrow("prob").GetTensor());
}

}  // namespace

TEST_CASE("Predictor equals a plain Workspace run", "[io][predictor]") {
  caffe2::NetDef init, predict;
  MakeMlp(&init, &predict);
  Predictor p(init, predict);
  CHECK(p.input_names() == std::vector<std::string>{"data"});
  CHECK(p.output_names() == std::vector<std::string>{"prob"});
  for (int seed = 0; seed < 3; ++seed) {
    auto out = p.Run(Predictor::TensorMap{{"data", FloatTensor({2, 4}, InputFor(seed))}});
    REQUIRE(out.count("prob"));
    CHECK(out.at("prob").shape() == std::vector<int64_t>{2, 3});
    CHECK(out.at("prob").device() == Device::CPU());
    CHECK(Values(out.at("prob")) == PlainWorkspaceRun(init, predict, seed));
  }
  // By position.
  auto v = p.Run(std::vector<Tensor>{FloatTensor({2, 4}, InputFor(1))});
  REQUIRE(v.size() == 1);
  CHECK(Values(v[0]) == PlainWorkspaceRun(init, predict, 1));
  CHECK(p.weights().HasBlob("w"));
}

TEST_CASE("Predictor outputs are the caller's: a later run does not change them", "[io][predictor]") {
  caffe2::NetDef init, predict;
  MakeMlp(&init, &predict);
  Predictor p(init, predict);
  auto first = p.Run(Predictor::TensorMap{{"data", FloatTensor({2, 4}, InputFor(0))}});
  const std::vector<float> kept = Values(first.at("prob"));
  p.Run(Predictor::TensorMap{{"data", FloatTensor({2, 4}, InputFor(5))}});
  CHECK(Values(first.at("prob")) == kept);
}

TEST_CASE("Predictor: 8 threads x many runs give identical results", "[io][predictor]") {
  caffe2::NetDef init, predict;
  MakeMlp(&init, &predict);
  Predictor p(init, predict);
  std::vector<std::vector<float>> expected;
  for (int s = 0; s < 8; ++s) expected.push_back(PlainWorkspaceRun(init, predict, s));
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int seed = (t + i) % 8;
        auto out = p.Run(Predictor::TensorMap{{"data", FloatTensor({2, 4}, InputFor(seed))}});
        if (Values(out.at("prob")) != expected[seed]) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) CHECK(mismatches[t] == 0);
  CHECK(p.NumInstances() >= 1);
  CHECK(p.NumInstances() <= 9);
}

TEST_CASE("Predictor: a net that overwrites its input leaves the caller's tensor alone", "[io][predictor]") {
  caffe2::NetDef init, predict;
  predict.set_name("inplace");
  predict.add_external_input("x");
  predict.add_external_output("x");
  AddOp(&predict, "Relu", {"x"}, {"x"});
  Predictor p(init, predict);
  Tensor x = FloatTensor({3}, {-1, 2, -3});
  auto out = p.Run(Predictor::TensorMap{{"x", x}});
  CHECK(Values(out.at("x")) == std::vector<float>{0, 2, 0});
  CHECK(Values(x) == std::vector<float>{-1, 2, -3});
}

TEST_CASE("Predictor errors name the blob and list expected inputs", "[io][predictor][bad_input]") {
  caffe2::NetDef init, predict;
  MakeMlp(&init, &predict);
  Predictor p(init, predict);
  const Tensor good = FloatTensor({2, 4}, InputFor(0));
  CHECK_THROWS_WITH(p.Run(Predictor::TensorMap{{"data", good}, {"dta", good}}),
                    Catch::Contains("'dta'") && Catch::Contains("expected inputs: 'data'"));
  // A weight that is an external input may be replaced for one run (Caffe2's zoo nets): a wrong
  // shape then fails in the net, and the error says the run replaced it.
  CHECK_THROWS_WITH(p.Run(Predictor::TensorMap{{"data", good}, {"w", good}}),
                    Catch::Contains("'w'") && Catch::Contains("in place of the blob(s) the init net filled"));
  CHECK_THROWS_WITH(p.Run(Predictor::TensorMap{}), Catch::Contains("input 'data'") && Catch::Contains("not given"));
  CHECK_THROWS_WITH(p.Run(std::vector<Tensor>{good, good}), Catch::Contains("1 input(s)") && Catch::Contains("2 given"));
  // Wrong shape: the net's error names net, operator and blob; the predictor keeps working.
  try {
    p.Run(Predictor::TensorMap{{"data", FloatTensor({2, 5}, std::vector<float>(10, 1.f))}});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("net 'mlp'") && Catch::Contains("operator #0 (FC)"));
  }
  CHECK(Values(p.Run(Predictor::TensorMap{{"data", good}}).at("prob")) == PlainWorkspaceRun(init, predict, 0));

  // An output that no op produces.
  caffe2::NetDef bad = predict;
  bad.add_external_output("nowhere");
  Predictor q(init, bad);
  CHECK_THROWS_WITH(q.Run(Predictor::TensorMap{{"data", good}}), Catch::Contains("output 'nowhere'"));
  // Nets that cannot be created fail in the constructor, naming the operator.
  caffe2::NetDef unknown = predict;
  unknown.mutable_op(1)->set_type("Rleu");
  CHECK_THROWS_WITH(Predictor(init, unknown), Catch::Contains("Rleu") && Catch::Contains("Relu") &&
                                                  Catch::Contains("operator #1"));
  caffe2::NetDef bad_init = init;
  bad_init.mutable_op(0)->set_type("GivenTensorFillz");
  CHECK_THROWS_WITH(Predictor(bad_init, predict), Catch::Contains("init net 'mlp_init'"));
}

TEST_CASE("Predictor: inputs fed on another device than the net's re-create the instance's net once",
          "[io][predictor]") {
  // The net says CUDA (inputs assumed there at creation); soft placement runs it on this machine's
  // CPU, GPU or not, and the CPU inputs make each instance re-create its net for where they are.
  caffe2::NetDef init, predict;
  MakeMlp(&init, &predict);
  caffe2::NetDef on_gpu = predict;
  on_gpu.mutable_device_option()->set_device_type(1);
  auto* soft = on_gpu.add_arg();
  soft->set_name("soft_placement");
  soft->set_i(1);
  Predictor p(init, on_gpu);
  for (int seed = 0; seed < 3; ++seed) {
    INFO("run " << seed);
    auto out = p.Run(Predictor::TensorMap{{"data", FloatTensor({2, 4}, InputFor(seed))}});
    CHECK(Values(out.at("prob").To(Device::CPU())) == PlainWorkspaceRun(init, predict, seed));
  }
}
