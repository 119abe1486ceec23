// A device profile file (`hetnet calibrate` output, `--profile-file`, HETNET_DEVICE_PROFILE): JSON
// validated into a DeviceProfile, written back and re-read (the round trip must accept its own
// output), and its lookups.
#include "core/device_profile.h"
#include "fuzz/fuzz_common.h"

static void Run(const uint8_t* data, size_t size) {
  const hetnet::DeviceProfile p = hetnet::DeviceProfile::FromJson(hetnet_fuzz::Bytes(data, size), "<fuzz>");
  const hetnet::DeviceProfile again = hetnet::DeviceProfile::FromJson(p.ToJson(), "<round trip>");
  for (const auto& d : again.devices) {
    (void)again.Find(d.name);
    (void)again.Correction(d.name, "Conv");
  }
  for (const auto& l : again.links) (void)again.FindLink(l.from, l.to, l.pinned);
}

HETNET_FUZZ_ENTRY(Run)
