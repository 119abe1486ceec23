#include "core/minidb.h"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core/error.h"

namespace hetnet {

MiniDBWriter::MiniDBWriter(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) HN_THROW(kRuntime, "minidb: cannot open '", path, "' for writing: ", std::strerror(errno));
}

MiniDBWriter::~MiniDBWriter() {
  if (file_) std::fclose(file_);
}

void MiniDBWriter::Put(const std::string& key, const std::string& value) {
  HN_ENFORCE(file_, "minidb: '", path_, "' is closed");
  HN_ENFORCE(key.size() < (1u << 31) && value.size() < (1u << 31), "minidb: record '", key,
             "' is over 2 GiB; use a smaller chunk_size");
  const int32_t klen = static_cast<int32_t>(key.size()), vlen = static_cast<int32_t>(value.size());
  const bool ok = std::fwrite(&klen, sizeof(klen), 1, file_) == 1 && std::fwrite(&vlen, sizeof(vlen), 1, file_) == 1 &&
                  std::fwrite(key.data(), 1, key.size(), file_) == key.size() &&
                  std::fwrite(value.data(), 1, value.size(), file_) == value.size();
  if (!ok) HN_THROW(kRuntime, "minidb: writing record '", key, "' to '", path_, "' failed: ", std::strerror(errno));
}

void MiniDBWriter::Close() {
  if (!file_) return;
  const bool ok = std::fflush(file_) == 0;
  std::fclose(file_);
  file_ = nullptr;
  if (!ok) HN_THROW(kRuntime, "minidb: flushing '", path_, "' failed: ", std::strerror(errno));
}

std::vector<std::pair<std::string, std::string>> ReadMiniDB(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) HN_THROW(kNotFound, "minidb: cannot open '", path, "': ", std::strerror(errno));
  std::vector<std::pair<std::string, std::string>> out;
  try {
    // Record lengths are checked against the bytes the file has left before anything is allocated
    // (a tiny file claiming 2 GiB records must fail fast).
    HN_CHECK_KIND(kRuntime, std::fseek(f, 0, SEEK_END) == 0, "minidb: cannot seek in '", path, "'");
    const long file_size = std::ftell(f);
    HN_CHECK_KIND(kRuntime, file_size >= 0 && std::fseek(f, 0, SEEK_SET) == 0, "minidb: cannot seek in '", path, "'");
    int64_t left = file_size;
    for (;;) {
      int32_t len[2];
      const size_t got = std::fread(len, sizeof(int32_t), 2, f);
      if (got == 0 && std::feof(f)) break;
      HN_ENFORCE(got == 2, "minidb: '", path, "' is truncated in the header of record ", out.size());
      HN_ENFORCE(len[0] >= 0 && len[1] >= 0, "minidb: '", path, "' record ", out.size(), " has negative lengths (",
                 len[0], ", ", len[1], "); not a minidb file?");
      left -= static_cast<int64_t>(sizeof(len));
      HN_ENFORCE(static_cast<int64_t>(len[0]) + len[1] <= left, "minidb: '", path, "' is truncated in record ",
                 out.size(), " (key of ", len[0], " bytes, value of ", len[1], " bytes, but only ", left,
                 " bytes are left in the file)");
      left -= static_cast<int64_t>(len[0]) + len[1];
      std::string key(static_cast<size_t>(len[0]), '\0'), value(static_cast<size_t>(len[1]), '\0');
      HN_ENFORCE(std::fread(&key[0], 1, key.size(), f) == key.size() &&
                     std::fread(&value[0], 1, value.size(), f) == value.size(),
                 "minidb: '", path, "' is truncated in record ", out.size(), " (key of ", len[0], " bytes, value of ",
                 len[1], " bytes)");
      out.emplace_back(std::move(key), std::move(value));
    }
  } catch (...) {
    std::fclose(f);
    throw;
  }
  std::fclose(f);
  return out;
}

std::string MiniDBChunkKey(const std::string& blob, int64_t chunk_id) { return blob + "#%" + std::to_string(chunk_id); }

std::pair<std::string, int64_t> ParseMiniDBKey(const std::string& key) {
  const size_t p = key.rfind("#%");
  if (p == std::string::npos) return {key, -1};
  const std::string id = key.substr(p + 2);
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) return {key, -1};
  return {key.substr(0, p), std::stoll(id)};
}

}  // namespace hetnet
