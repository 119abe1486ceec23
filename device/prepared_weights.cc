#include "device/prepared_weights.h"

#include <cstring>
#include <tuple>
#include <utility>

namespace hetnet {

Checksum ContentHash(const void* p, size_t nbytes) {
  // Eight lanes of adds (one AVX-512 register each for the sums and the running sums), so the
  // loop runs at memory speed; the lanes are combined with distinct odd weights at the end.
  const unsigned char* b = static_cast<const unsigned char*>(p);
  const size_t words = nbytes / 8;
  uint64_t s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, r[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= words; i += 8) {
    uint64_t w[8];
    std::memcpy(w, b + 8 * i, sizeof(w));
    for (int j = 0; j < 8; ++j) {
      s[j] += w[j];
      r[j] += s[j];
    }
  }
  Checksum c;
  for (; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, b + 8 * i, 8);
    c.sum += w;
    c.weighted += c.sum * 17;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, b + 8 * words, nbytes - 8 * words);
  c.sum += tail;
  for (int j = 0; j < 8; ++j) {
    c.sum += s[j];
    c.weighted += r[j] * (2 * j + 1);
  }
  c.weighted ^= static_cast<uint64_t>(nbytes);
  return c;
}

namespace {
// (version, version2) of w's contents: its write generation, or a checksum of external storage.
std::pair<uint64_t, uint64_t> ContentVersion(const Tensor& w) {
  if (!w.external_storage()) return {w.write_generation(), 0};
  const Checksum c = ContentHash(w.raw_data(), w.nbytes());
  return {c.sum, c.weighted};
}
}  // namespace

WeightVersion WeightVersion::Of(const Tensor& w) {
  WeightVersion v;
  v.storage_id = w.storage_id();
  std::tie(v.version, v.version2) = ContentVersion(w);
  v.external = w.external_storage();
  v.data = w.raw_data();
  v.shape = w.shape();
  return v;
}

bool WeightVersion::Describes(const Tensor& w) const {
  if (w.storage_id() != storage_id || w.raw_data() != data || w.external_storage() != external || w.shape() != shape)
    return false;
  return ContentVersion(w) == std::make_pair(version, version2);
}

}  // namespace hetnet
