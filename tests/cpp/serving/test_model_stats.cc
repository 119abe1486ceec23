// Per-model copy totals behind hetnet_copy_bytes_total / _count_total / hetnet_copy_duration_us.
#include <catch2/catch.hpp>

#include "serving/model_stats.h"

using namespace hetnet;
using namespace hetnet::serving;

namespace {
CopyInfo Copy(Device from, Device to, int64_t bytes) {
  CopyInfo c;
  c.from = from;
  c.to = to;
  c.bytes = bytes;
  return c;
}
}  // namespace

TEST_CASE("copy totals add bytes and known durations per device pair", "[serving]") {
  ModelStats s;
  const std::vector<CopyInfo> run = {Copy(Device::CPU(), Device::CUDA(0), 4096),
                                     Copy(Device::CUDA(0), Device::CPU(), 40)};
  s.CountCopies(run, {2.5e-6, 1e-6});
  s.CountCopies(run, {1.5e-6, -1});  // the second copy's time was not known yet: counted, not timed
  s.CountCopies({Copy(Device::CPU(), Device::CUDA(0), -1)}, {});  // bytes unknown, no times given
  const auto totals = s.Copies();
  REQUIRE(totals.size() == 2);
  const auto& h2d = totals.at({"cpu", "cuda:0"});
  CHECK(h2d.count == 3);
  CHECK(h2d.bytes == 8192);
  CHECK(h2d.timed == 2);
  CHECK(h2d.ns == Approx(4000).margin(2));
  const auto& d2h = totals.at({"cuda:0", "cpu"});
  CHECK(d2h.count == 2);
  CHECK(d2h.bytes == 80);
  CHECK(d2h.timed == 1);
  CHECK(d2h.ns == Approx(1000).margin(1));
}
