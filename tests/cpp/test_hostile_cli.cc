// Hostile files through the `hetnet` command line (issue 18): crafted tensors, nets and minidb
// files give exit code 1 and a clear message, fast, never a crash or a huge allocation.
#include <catch2/catch.hpp>

#include <chrono>

#include "core/npy.h"
#include "core/proto_io.h"
#include "test_util_io.h"

#ifndef HETNET_CLI_PATH
#error "tests/CMakeLists.txt must define HETNET_CLI_PATH (the hetnet_cli binary)"
#endif

using namespace hetnet;
using namespace hetnet_test;

namespace {

struct Cli {
  TempDir dir;
  std::string predict;
  Cli() {
    caffe2::NetDef net;
    net.set_name("relu_net");
    net.add_external_input("data");
    net.add_external_output("y");
    AddOp(&net, "Relu", {"data"}, {"y"});
    predict = dir.File("predict.pb");
    WriteProtoToFile(predict, net);
  }
  // Runs the CLI; checks it exited (no signal) with code 1 within 5 s; returns stderr.
  std::string Fails(const std::string& args) const {
    const auto t0 = std::chrono::steady_clock::now();
    CommandResult r = RunCommand(std::string("'") + HETNET_CLI_PATH + "' " + args, dir);
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    return r.err;
  }
};

}  // namespace

TEST_CASE("hostile cli: a 7-byte string TensorProto claiming 2^26 strings", "[hostile][cli]") {
  Cli c;
  const std::string evil = c.dir.Write("evil.pb", std::string("\x08\x80\x80\x80\x20\x10\x04", 7));
  const std::string err = c.Fails("run --predict " + c.predict + " --input data=" + evil);
  CHECK_THAT(err, Catch::Contains("string_data") && Catch::Contains("67108864") && Catch::Contains("evil.pb"));
}

TEST_CASE("hostile cli: an 18-byte TensorProto claiming 2^62 floats", "[hostile][cli]") {
  Cli c;
  std::string bytes = wire::VarintField(1, int64_t{1} << 62) + wire::VarintField(2, 1) + wire::Bytes(13, "abcd");
  const std::string evil = c.dir.Write("evil18.pb", bytes);
  const std::string err = c.Fails("run --predict " + c.predict + " --input data=" + evil);
  CHECK_THAT(err, Catch::Contains("too many elements") && Catch::Contains("evil18.pb"));
}

TEST_CASE("hostile cli: a net with a fill of shape [2^62] and a Conv with pad 2^31-1", "[hostile][cli]") {
  Cli c;
  const std::string data = c.dir.File("data.npy");
  WriteNpy(data, FloatTensor({1, 1, 2, 2}, {1, 2, 3, 4}));
  caffe2::NetDef init;
  init.set_name("evil_init");
  auto* fill = AddOp(&init, "ConstantFill", {}, {"huge"});
  auto* shape = fill->add_arg();
  shape->set_name("shape");
  shape->add_ints(int64_t{1} << 62);
  const std::string init_path = c.dir.File("init.pb");
  WriteProtoToFile(init_path, init);
  std::string err = c.Fails("run --init " + init_path + " --predict " + c.predict + " --input data=" + data);
  CHECK_THAT(err, Catch::Contains("too many elements") && Catch::Contains("ConstantFill"));

  caffe2::NetDef conv;
  conv.set_name("evil_conv");
  conv.add_external_input("data");
  conv.add_external_output("y");
  AddFill(&conv, "w", {1, 1, 1, 1}, {1});
  auto* op = AddOp(&conv, "Conv", {"data", "w"}, {"y"});
  auto* pad = op->add_arg();
  pad->set_name("pad");
  pad->set_i(2147483647);
  const std::string conv_path = c.dir.File("conv.pb");
  WriteProtoToFile(conv_path, conv);
  err = c.Fails("run --predict " + conv_path + " --input data=" + data);
  CHECK_THAT(err, Catch::Contains("Conv") && Catch::Contains("too many elements"));
}

TEST_CASE("hostile cli: Load of a 440-byte minidb claiming 2 GiB records", "[hostile][cli]") {
  Cli c;
  std::string bytes(8, '\xff');
  bytes[3] = bytes[7] = '\x7f';  // two int32 lengths 0x7fffffff
  bytes += std::string(432, 'x');
  const std::string db = c.dir.Write("evil.minidb", bytes);
  caffe2::NetDef init;
  init.set_name("load_init");
  auto* op = AddOp(&init, "Load", {}, {"w"});
  auto* a = op->add_arg();
  a->set_name("db");
  a->set_s(db);
  const std::string init_path = c.dir.File("init.pb");
  WriteProtoToFile(init_path, init);
  const std::string data = c.dir.File("data.npy");
  WriteNpy(data, FloatTensor({2}, {1, 2}));
  const std::string err = c.Fails("run --init " + init_path + " --predict " + c.predict + " --input data=" + data);
  CHECK_THAT(err, Catch::Contains("truncated") && Catch::Contains("evil.minidb"));
}
