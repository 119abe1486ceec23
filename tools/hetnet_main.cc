// The `hetnet` command line: `hetnet run` (init + predict nets on inputs from files) and
// `hetnet inspect` (what a NetDef contains and where it runs).
// Exit codes: 0 ok, 1 runtime error (the full hetnet::Error text on stderr), 2 bad usage.
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "core/error.h"
#include "tools/cli_common.h"

namespace hetnet_cli { int ExportOnnxCommand(int argc, char** argv); }  // tools/cli_export_onnx.cc
namespace hetnet_cli { int CalibrateCommand(int argc, char** argv); }  // tools/cli_calibrate.cc

namespace {

const char* const kMainHelp =
    "usage: hetnet <command> [options]\n"
    "\n"
    "commands:\n"
    "  run       run an init net and a predict net on inputs from .npy / TensorProto files\n"
    "  inspect   print a NetDef: operators, devices, engines, inputs and outputs\n"
    "  serve     serve a Triton-style model repository over KServe v2 HTTP and gRPC\n"
    "  export-onnx  write an init + predict net pair as an ONNX model\n"
    "  calibrate    measure this machine's devices and links; write a device profile (JSON)\n"
    "\n"
    "`hetnet <command> --help` describes a command.\n"
    "exit codes: 0 ok, 1 runtime error, 2 bad usage\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace hetnet_cli;
  if (argc < 2) {
    std::cerr << kMainHelp;
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kMainHelp;
    return kExitOk;
  }
#ifdef HETNET_WITH_SERVING
  const char* serve_help = kServeHelp;
#else
  const char* serve_help = nullptr;  // cli_serve.cc is not built
#endif
  const char* help = cmd == "run" ? kRunHelp : cmd == "inspect" ? kInspectHelp : cmd == "serve" ? serve_help : nullptr;
  try {
    if (cmd == "run") return RunCommand(argc - 1, argv + 1);
    if (cmd == "inspect") return InspectCommand(argc - 1, argv + 1);
    if (cmd == "export-onnx") return ExportOnnxCommand(argc - 1, argv + 1);
    if (cmd == "calibrate") return CalibrateCommand(argc - 1, argv + 1);
#ifdef HETNET_WITH_SERVING
    if (cmd == "serve") return ServeCommand(argc - 1, argv + 1);
#else
    if (cmd == "serve") throw hetnet::Error(hetnet::ErrorKind::kUnsupported, "this build has no `serve` (HETNET_BUILD_SERVING=OFF)");
#endif
    throw UsageError("unknown command '" + cmd + "' (commands: run, inspect, serve)");
  } catch (const UsageError& e) {
    std::cerr << "hetnet: " << e.what() << "\n" << (help ? help : kMainHelp);
    return kExitUsage;
  } catch (const hetnet::Error& e) {
    std::cerr << "hetnet " << cmd << ": error: " << e.what() << "\n";
    return kExitRuntimeError;
  } catch (const std::exception& e) {
    std::cerr << "hetnet " << cmd << ": error: " << e.what() << "\n";
    return kExitRuntimeError;
  }
}
