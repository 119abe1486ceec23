// The `hetnet` command line, spawned as a process on files this test writes.
#include <catch2/catch.hpp>

#include "core/npy.h"
#include "core/predictor.h"
#include "core/proto_io.h"
#include "core/tensor_proto.h"
#include "test_util_io.h"

#ifndef HETNET_CLI_PATH
#error "tests/CMakeLists.txt must define HETNET_CLI_PATH (the hetnet_cli binary)"
#endif

using namespace hetnet;
using namespace hetnet_test;

namespace {

struct CliFixture {
  TempDir dir;
  std::string init, predict, data;
  CliFixture() {
    caffe2::NetDef init_net, predict_net;
    MakeMlp(&init_net, &predict_net);
    init = dir.File("init_net.pb");
    predict = dir.File("predict_net.pb");
    WriteProtoToFile(init, init_net);
    WriteProtoToFile(predict, predict_net, /*text=*/true);  // both formats are read
    data = dir.File("data.npy");
    WriteNpy(data, FloatTensor({2, 4}, {1, 2, 3, 4, -1, -2, 0.5f, 0}));
  }
  CommandResult Hetnet(const std::string& args) const {
    return RunCommand(std::string("'") + HETNET_CLI_PATH + "' " + args, dir);
  }
  Tensor Expected() const {
    caffe2::NetDef init_net, predict_net;
    MakeMlp(&init_net, &predict_net);
    Predictor p(init_net, predict_net);
    return p.Run(Predictor::TensorMap{{"data", ReadNpy(data)}}).at("prob");
  }
};

}  // namespace

TEST_CASE("cli: run prints outputs and writes .npy", "[io][cli]") {
  CliFixture f;
  CommandResult r = f.Hetnet("run --init " + f.init + " --predict " + f.predict + " --input data=" + f.data);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("prob: float32[2, 3] on cpu") && Catch::Contains("min=") &&
                        Catch::Contains("mean=") && Catch::Contains("first=["));

  const std::string out = f.dir.File("prob.npy");
  r = f.Hetnet("run --init=" + f.init + " --predict=" + f.predict + " --input data=" + f.data + " --output prob=" +
               out + " --output fc --iters 3");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("written to") && Catch::Contains("fc: float32[2, 3]") &&
                        Catch::Contains("mean time per run"));
  Tensor got = ReadNpy(out);
  CHECK(Values(got) == Values(f.Expected()));

  // The same input as a serialized TensorProto (detected by content, not by name).
  const std::string tp = f.dir.File("data.bin");
  WriteProtoToFile(tp, TensorToProto(ReadNpy(f.data), "data"));
  const std::string out2 = f.dir.File("prob2.npy");
  r = f.Hetnet("run --init " + f.init + " --predict " + f.predict + " --input data=" + tp + " --output prob=" + out2);
  REQUIRE(r.exit_code == 0);
  CHECK(Values(ReadNpy(out2)) == Values(got));
}

TEST_CASE("cli: inspect lists ops, devices, engines and externals", "[io][cli]") {
  CliFixture f;
  caffe2::NetDef net;
  net.set_name("mixed");
  net.set_type("dag");
  net.add_external_input("x");
  net.add_external_output("z");
  AddOp(&net, "Relu", {"x"}, {"y"})->set_engine("CUDNN");
  auto* gpu = AddOp(&net, "Relu", {"y"}, {"z"});
  gpu->mutable_device_option()->set_device_type(1);
  gpu->mutable_device_option()->set_device_id(1);
  auto* odd = AddOp(&net, "Relu", {"z"}, {"w"});
  odd->mutable_device_option()->set_device_type(7);
  const std::string path = f.dir.File("mixed.pb");
  WriteProtoToFile(path, net);
  CommandResult r = f.Hetnet("inspect " + path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("net 'mixed'") && Catch::Contains("type: dag"));
  CHECK_THAT(r.out, Catch::Contains("#0 Relu  device=cpu  engine=CUDNN  x -> y"));
  CHECK_THAT(r.out, Catch::Contains("#1 Relu  device=cuda:1  engine=default  y -> z"));
  CHECK_THAT(r.out, Catch::Contains("#2 Relu  device=") && Catch::Contains("unsupported"));
  CHECK_THAT(r.out, Catch::Contains("external inputs: x") && Catch::Contains("external outputs: z"));

  r = f.Hetnet("inspect " + f.predict + " --init " + f.init + " --placement --memory");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("#0 FC") && Catch::Contains("Placement of net 'mlp'"));
  r = f.Hetnet("inspect " + f.predict + " --dot");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("digraph"));
}

TEST_CASE("cli: --help and exit code 2 for bad usage", "[io][cli]") {
  CliFixture f;
  for (const char* args : {"--help", "run --help", "inspect --help", "run -h"}) {
    CommandResult r = f.Hetnet(args);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("usage: hetnet"));
  }
  for (const char* args : {"", "frobnicate", "run --input data=x.npy", "run --predict p.pb --bogus",
                           "run --predict", "run --predict p.pb --input data", "run --predict p.pb --iters 0",
                           "inspect", "inspect a.pb b.pb", "inspect --nope a.pb"}) {
    CommandResult r = f.Hetnet(args);
    INFO(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("usage: hetnet"));
  }
}

TEST_CASE("cli: runtime errors exit 1 with the full error text", "[io][cli][bad_input]") {
  CliFixture f;
  const std::string base = "run --init " + f.init + " --predict " + f.predict;
  CommandResult r = f.Hetnet("inspect " + f.dir.File("missing.pb"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("missing.pb") && Catch::Contains("does not exist"));

  const std::string garbage = f.dir.Write("garbage.pb", std::string("\xff\x01\x00garbage\x07", 11));
  r = f.Hetnet("inspect " + garbage);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("garbage.pb") && Catch::Contains("caffe2.NetDef"));

  const std::string bad_npy = f.dir.Write("bad.npy", std::string("\x93NUMPY\x01\x00\x05\x00{'de", 14));
  r = f.Hetnet(base + " --input data=" + bad_npy);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("bad.npy") && Catch::Contains("input 'data'"));

  r = f.Hetnet(base + " --input data=" + f.data + " --input label=" + f.data);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("'label'") && Catch::Contains("expected inputs: 'data'"));

  const std::string wide = f.dir.File("wide.npy");
  WriteNpy(wide, FloatTensor({2, 5}, std::vector<float>(10, 1.f)));
  r = f.Hetnet(base + " --input data=" + wide);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("net 'mlp'") && Catch::Contains("operator #0 (FC)") && Catch::Contains("'data'"));

  caffe2::NetDef typo;
  typo.set_name("typo");
  typo.add_external_input("data");
  typo.add_external_output("y");
  AddOp(&typo, "Relu", {"data"}, {"r"});
  AddOp(&typo, "Softmaxx", {"r"}, {"y"});
  const std::string typo_path = f.dir.File("typo.pb");
  WriteProtoToFile(typo_path, typo);
  r = f.Hetnet("run --predict " + typo_path + " --input data=" + f.data);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("net 'typo'") && Catch::Contains("operator #1 (Softmaxx)") &&
                        Catch::Contains("did you mean") && Catch::Contains("Softmax"));
}
