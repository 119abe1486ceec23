// Catch2 runner. `--require-gpu` (first argument) makes the run report "skipped" (exit 77, which
// ctest shows as Skipped) on a machine without a CUDA device, instead of passing vacuously.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

#include "core/device.h"

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  if (argc > 1 && std::strcmp(argv[1], "--require-gpu") == 0) {
    args.erase(args.begin() + 1);
    if (hetnet::NumCudaDevices() == 0) {
      std::printf("SKIPPED: no CUDA device on this machine (NumCudaDevices() == 0%s); GPU tests not run\n",
                  hetnet::HasCudaSupport() ? "" : ", and this build has no CUDA");
      return 77;
    }
  }
  return Catch::Session().run(static_cast<int>(args.size()), args.data());
}
