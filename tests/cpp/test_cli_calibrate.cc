// `hetnet calibrate --quick`: measures this machine in about a second, writes a profile that
// DeviceProfile::Load accepts, with plausible (positive, bounded) numbers and a cpu entry.
#include <catch2/catch.hpp>

#include <unistd.h>

#include "core/device.h"
#include "core/device_profile.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

CommandResult Hetnet(const TempDir& dir, const std::string& args) {
  // `timeout` bounds the test even if a measurement hangs.
  return RunCommand(std::string("timeout 120 '") + HETNET_CLI_PATH + "' " + args, dir);
}

}  // namespace

TEST_CASE("cli: calibrate --quick writes a plausible profile", "[cli][auto_placement][profile]") {
  TempDir dir;
  const std::string path = dir.File("profile.json");
  CommandResult r = Hetnet(dir, "calibrate --quick --output " + path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const DeviceProfile p = DeviceProfile::Load(path);

  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  CHECK_THAT(p.source, Catch::StartsWith(std::string("measured by hetnet calibrate on ") + host + ", 20"));
  CHECK_FALSE(p.machine.empty());
  const DeviceCaps* cpu = p.Find("cpu");
  REQUIRE(cpu != nullptr);
  REQUIRE(p.devices.size() == static_cast<size_t>(1 + NumCudaDevices()));
  for (const DeviceCaps& d : p.devices) {
    INFO(d.name);
    for (const char* cls : {"small", "medium", "large"}) {
      REQUIRE(d.gemm_gflops.count(cls));
      REQUIRE(d.conv_gflops.count(cls));
      CHECK(d.gemm_gflops.at(cls) > 0);
      CHECK(d.gemm_gflops.at(cls) < 1e6);  // a PFLOP/s would be a timing error
      CHECK(d.conv_gflops.at(cls) > 0);
      CHECK(d.conv_gflops.at(cls) < 1e6);
    }
    CHECK(d.mem_bandwidth_gbs > 0.05);
    CHECK(d.mem_bandwidth_gbs < 1e5);
    CHECK(d.dispatch_us > 0);
    CHECK(d.dispatch_us < 1e4);
  }
  // No ordering between shape classes is asserted: under a parallel ctest on a 16-core GPU machine the
  // CPU's large GEMM (a 16-thread OpenMP team) measured 6.7 GFLOP/s against 52 for the small one.
  CHECK(cpu->memory_bytes > (int64_t{64} << 20));
  // Links to and from every GPU; none without one.
  for (int g = 0; g < NumCudaDevices(); ++g) {
    const std::string gpu = Device::CUDA(g).str();
    REQUIRE(p.FindLink("cpu", gpu) != nullptr);
    REQUIRE(p.FindLink(gpu, "cpu") != nullptr);
    CHECK(p.FindLink("cpu", gpu)->bandwidth_gbs > 0);
    CHECK(p.FindLink(gpu, "cpu")->latency_us > 0);
  }
  if (NumCudaDevices() == 0) CHECK(p.links.empty());

  // Without --output the profile goes to stdout.
  r = Hetnet(dir, "calibrate --quick");
  REQUIRE(r.exit_code == 0);
  CHECK(DeviceProfile::FromJson(r.out, "stdout").Find("cpu") != nullptr);
}

TEST_CASE("cli: calibrate usage errors", "[cli][auto_placement][profile]") {
  TempDir dir;
  CommandResult r = Hetnet(dir, "calibrate --bogus");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown option '--bogus'") && Catch::Contains("usage: hetnet calibrate"));
  r = Hetnet(dir, "calibrate --help");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("--quick"));
  // An unwritable output is a runtime error naming the file.
  r = Hetnet(dir, "calibrate --quick --output " + dir.File("no/such/dir/p.json"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("no/such/dir/p.json"));
}
