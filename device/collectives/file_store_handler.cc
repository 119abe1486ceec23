#include "device/collectives/file_store_handler.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/error.h"

namespace hetnet {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(10);  // Caffe2's wait poll
// A lock holder only does a few file operations; waiting longer than this means something is stuck.
constexpr auto kLockTimeout = std::chrono::seconds(30);

// MurmurHash3_x64_128 (Austin Appleby's public-domain algorithm), written from its description.
uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

void Murmur3x64_128(const std::string& key, uint32_t seed, uint64_t out[2]) {
  const auto* data = reinterpret_cast<const uint8_t*>(key.data());
  const size_t len = key.size();
  const size_t nblocks = len / 16;
  uint64_t h1 = seed, h2 = seed;
  const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
  for (size_t i = 0; i < nblocks; ++i) {
    uint64_t k1, k2;
    std::memcpy(&k1, data + i * 16, 8);  // little-endian hosts, as Caffe2 assumed
    std::memcpy(&k2, data + i * 16 + 8, 8);
    k1 *= c1; k1 = Rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    h1 = Rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
    k2 *= c2; k2 = Rotl64(k2, 33); k2 *= c1; h2 ^= k2;
    h2 = Rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
  }
  const uint8_t* tail = data + nblocks * 16;
  uint64_t k1 = 0, k2 = 0;
  const size_t rest = len & 15;
  for (size_t i = rest; i > 8; --i) k2 ^= uint64_t(tail[i - 1]) << ((i - 9) * 8);
  if (rest > 8) { k2 *= c2; k2 = Rotl64(k2, 33); k2 *= c1; h2 ^= k2; }
  for (size_t i = std::min<size_t>(rest, 8); i > 0; --i) k1 ^= uint64_t(tail[i - 1]) << ((i - 1) * 8);
  if (rest > 0) { k1 *= c1; k1 = Rotl64(k1, 31); k1 *= c2; h1 ^= k1; }
  h1 ^= len; h2 ^= len;
  h1 += h2; h2 += h1;
  h1 = Fmix64(h1); h2 = Fmix64(h2);
  h1 += h2; h2 += h1;
  out[0] = h1;
  out[1] = h2;
}

std::string ErrnoText() { return std::strerror(errno); }

bool ReadWholeFile(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    HN_THROW(kIo, "file store: cannot open ", path, ": ", ErrnoText());
  }
  out->clear();
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = ErrnoText();
      ::close(fd);
      HN_THROW(kIo, "file store: cannot read ", path, ": ", why);
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

// flock(2) on "<base>/.lock" for the read-modify-write operations; one open file per holder, so
// threads of one process exclude each other too.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& base) {
    const std::string path = base + "/.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) HN_THROW(kIo, "file store: cannot open lock file ", path, ": ", ErrnoText());
    const auto deadline = Clock::now() + kLockTimeout;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        const std::string why = ErrnoText();
        ::close(fd_);
        HN_THROW(kIo, "file store: flock ", path, ": ", why);
      }
      if (Clock::now() > deadline) {
        ::close(fd_);
        HN_THROW(kTimeout, "file store: lock ", path, " held by another process for over ",
                 std::chrono::duration_cast<std::chrono::seconds>(kLockTimeout).count(), " s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~DirectoryLock() { ::close(fd_); }  // closing releases the lock
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::string FileStoreEncodeName(const std::string& name) {
  uint64_t h[2];
  Murmur3x64_128(name, 0xcafef00d, h);
  uint8_t bytes[16];
  std::memcpy(bytes, h, 16);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    // Caffe2 printed each byte as a signed char with "%02x" into a 2-character slot, so bytes
    // >= 0x80 came out as "ff" (the start of "ffffffXX"). Kept: the same directory layout.
    if (b >= 0x80) {
      out += "ff";
    } else {
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

FileStoreHandler::FileStoreHandler(const std::string& path, const std::string& prefix) : prefix_(prefix) {
  HN_ENFORCE(!path.empty() && path.find('\0') == std::string::npos, "file store: path must be a non-empty path");
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr)
    HN_THROW(kNotFound, "file store: realpath(", path, "): ", ErrnoText());
  base_ = buf;
  if (!prefix.empty()) {
    base_ += "/" + FileStoreEncodeName(prefix);
    if (::mkdir(base_.c_str(), 0777) != 0 && errno != EEXIST)
      HN_THROW(kIo, "file store: cannot create ", base_, " (prefix '", prefix, "'): ", ErrnoText());
  }
  struct stat st;
  HN_CHECK_KIND(kNotFound, ::stat(base_.c_str(), &st) == 0 && S_ISDIR(st.st_mode), "file store: ", base_,
                " is not a directory");
}

std::string FileStoreHandler::ObjectPath(const std::string& name) const {
  return base_ + "/" + FileStoreEncodeName(name);
}

std::string FileStoreHandler::TempPath(const std::string& name) const {
  return base_ + "/." + FileStoreEncodeName(name);
}

void FileStoreHandler::WriteAtomically(const std::string& name, const std::string& data) const {
  const std::string tmp = TempPath(name), path = ObjectPath(name);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) HN_THROW(kIo, "file store: cannot create ", tmp, " for key '", name, "': ", ErrnoText());
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = ErrnoText();
      ::close(fd);
      ::unlink(tmp.c_str());
      HN_THROW(kIo, "file store: cannot write ", tmp, " for key '", name, "': ", why);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = ErrnoText();
    ::unlink(tmp.c_str());
    HN_THROW(kIo, "file store: cannot publish key '", name, "' as ", path, ": ", why);
  }
}

void FileStoreHandler::Set(const std::string& name, const std::string& data) {
  DirectoryLock lock(base_);
  std::string existing;
  if (ReadWholeFile(ObjectPath(name), &existing)) {
    HN_ENFORCE(existing == data, "file store: key '", name, "' is already set to different data (",
               existing.size(), " bytes, new ", data.size(),
               " bytes); keys are set once (a prefix or run ID reused from an earlier run?)");
    return;
  }
  WriteAtomically(name, data);
}

std::string FileStoreHandler::Get(const std::string& name, std::chrono::milliseconds timeout) {
  Wait({name}, timeout);
  std::string data;
  HN_CHECK_KIND(kNotFound, ReadWholeFile(ObjectPath(name), &data), "file store: key '", name,
                "' was deleted while being read (", Describe(), ")");
  return data;
}

int64_t FileStoreHandler::Add(const std::string& name, int64_t value) {
  DirectoryLock lock(base_);
  std::string text;
  int64_t current = 0;
  if (ReadWholeFile(ObjectPath(name), &text)) {
    char* end = nullptr;
    errno = 0;
    current = std::strtoll(text.c_str(), &end, 10);
    HN_ENFORCE(!text.empty() && errno == 0 && end == text.c_str() + text.size(), "file store: key '", name,
               "' does not hold an integer (Add on a key set with Set?)");
  }
  const int64_t next = static_cast<int64_t>(static_cast<uint64_t>(current) + static_cast<uint64_t>(value));
  WriteAtomically(name, std::to_string(next));
  return next;
}

int64_t FileStoreHandler::GetNumKeys() {
  DIR* dir = ::opendir(base_.c_str());
  if (dir == nullptr) HN_THROW(kIo, "file store: cannot list ", base_, ": ", ErrnoText());
  int64_t n = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;  // ".", "..", the lock and temp files
    struct stat st;
    const std::string p = base_ + "/" + e->d_name;
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ++n;
  }
  ::closedir(dir);
  return n;
}

bool FileStoreHandler::DeleteKey(const std::string& name) {
  DirectoryLock lock(base_);
  if (::unlink(ObjectPath(name).c_str()) == 0) return true;
  if (errno == ENOENT) return false;
  HN_THROW(kIo, "file store: cannot delete key '", name, "': ", ErrnoText());
}

bool FileStoreHandler::Check(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (::access(ObjectPath(n).c_str(), F_OK) != 0) return false;
  return true;
}

void FileStoreHandler::Wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout) {
  const auto start = Clock::now();
  while (!Check(names)) {
    if (timeout != kNoTimeout && Clock::now() - start >= timeout)
      HN_THROW(kTimeout, WaitTimeoutMessage(names, *this, timeout));
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::string FileStoreHandler::Describe() const {
  return "file store " + base_ + (prefix_.empty() ? "" : " (prefix '" + prefix_ + "')");
}

}  // namespace hetnet
