// `hetnet inspect/run` placement options: --soft-placement, --strict, --svg, on a mixed CPU/GPU net.
#include <catch2/catch.hpp>

#include "core/device.h"
#include "core/npy.h"
#include "core/proto_io.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

// Relu on GPU 0 between two CPU ops: the pass inserts a copy each way.
caffe2::NetDef MixedNet() {
  caffe2::NetDef net;
  net.set_name("mixed_cli");
  net.add_external_input("x");
  net.add_external_output("z");
  const char* types[] = {"Scale", "Relu", "Sigmoid"};
  const char* in[] = {"x", "a", "y"};
  const char* out[] = {"a", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    auto* op = net.add_op();
    op->set_type(types[i]);
    op->add_input(in[i]);
    op->add_output(out[i]);
    if (i == 1) op->mutable_device_option()->set_device_type(1);
  }
  return net;
}

CommandResult Hetnet(const TempDir& dir, const std::string& args) {
  return RunCommand(std::string("'") + HETNET_CLI_PATH + "' " + args, dir);
}

}  // namespace

TEST_CASE("cli: placement of a mixed net, with and without a GPU", "[io][cli][placement]") {
  TempDir dir;
  const std::string net = dir.File("mixed.pb");
  WriteProtoToFile(net, MixedNet());
  if (NumCudaDevices() > 0) {
    CommandResult r = Hetnet(dir, "inspect --placement " + net);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("CopyCPUToGPU") && Catch::Contains("CopyGPUToCPU"));
    return;
  }
  // No GPU: a clear error naming the GPU op, exit code 1.
  CommandResult r = Hetnet(dir, "inspect --placement " + net);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("#1 Relu on cuda:0") && Catch::Contains("soft_placement"));
  // Soft placement runs it on CPU and says so.
  r = Hetnet(dir, "inspect --soft-placement --placement " + net);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("soft placement (cuda:0 not available)") && Catch::Contains("0 inserted copies"));
  const std::string x = dir.File("x.npy");
  WriteNpy(x, FloatTensor({3}, {-1.f, 0.f, 2.f}));
  r = Hetnet(dir, "run --soft-placement --predict " + net + " --input x=" + x);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("z: float32[3] on cpu"));
}

TEST_CASE("cli: --svg draws the placement graph when Graphviz is installed", "[io][cli][placement]") {
  TempDir dir;
  const std::string net = dir.File("mixed.pb");
  WriteProtoToFile(net, MixedNet());
  const std::string svg = dir.File("mixed.svg");
  CommandResult dot = RunCommand("command -v dot", dir);
  CommandResult r = Hetnet(dir, "inspect --soft-placement --svg " + svg + " " + net);
  if (dot.exit_code != 0) {
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("Graphviz"));
    return;
  }
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CommandResult head = RunCommand("grep -c '<svg' '" + svg + "'", dir);
  CHECK(head.exit_code == 0);
}

TEST_CASE("cli: --help lists the placement options", "[io][cli][placement]") {
  TempDir dir;
  for (const char* cmd : {"run --help", "inspect --help"}) {
    CommandResult r = Hetnet(dir, cmd);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("--strict") && Catch::Contains("--soft-placement"));
  }
}
