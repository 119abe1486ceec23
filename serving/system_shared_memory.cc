#include "serving/system_shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "serving/request_memory.h"

namespace hetnet::serving {

struct SharedMemoryTarget::Region {
  std::string name, key;
  uint64_t offset = 0, byte_size = 0;
  int fd = -1;
  ~Region() {
    if (fd >= 0) ::close(fd);
  }
};

namespace {

// A POSIX shm name: "/" then 1-255 bytes with no further "/" and no NUL (shm_open's own rule, checked
// here so that no key can reach outside /dev/shm, whatever the C library does).
void CheckKey(const std::string& name, const std::string& key) {
  const bool ok = key.size() >= 2 && key.size() <= 256 && key[0] == '/' &&
                  key.find('/', 1) == std::string::npos && key.find('\0') == std::string::npos && key != "/." &&
                  key != "/..";
  HN_CHECK_KIND(kInvalidArgument, ok, "failed to register shared memory region '", name, "': key '", key,
                "' is not a POSIX shared memory name ('/' followed by 1-255 characters, none of them '/')");
}

uint64_t ObjectSize(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size < 0) return 0;
  return static_cast<uint64_t>(st.st_size);
}

// [offset, offset + size) within [0, limit), without overflow.
bool Within(uint64_t offset, uint64_t size, uint64_t limit) { return offset <= limit && size <= limit - offset; }

}  // namespace

std::optional<SharedMemoryRef> SharedMemoryRefOf(const std::string* region, const uint64_t* byte_size,
                                                 const uint64_t* offset, const std::string& tensor) {
  if (!region && !byte_size && !offset) return std::nullopt;
  HN_CHECK_KIND(kInvalidArgument, region && byte_size, tensor,
                " must give both 'shared_memory_region' and 'shared_memory_byte_size' to use shared memory (",
                region ? "'shared_memory_byte_size'" : "'shared_memory_region'", " is missing)");
  SharedMemoryRef ref;
  ref.region = *region;
  ref.byte_size = *byte_size;
  ref.offset = offset ? *offset : 0;
  return ref;
}

void SystemSharedMemory::CheckAllowed() const {
  HN_CHECK_KIND(kUnsupported, allowed_,
                "client shared memory is disabled on this server; start hetnet serve with --allow-client-shm to "
                "use it");
}

void SystemSharedMemory::Register(const std::string& name, const std::string& key, uint64_t offset,
                                  uint64_t byte_size) {
  CheckAllowed();
  HN_CHECK_KIND(kInvalidArgument, !name.empty(), "a shared memory region needs a name");
  CheckKey(name, key);
  // Read and write, never create; no symlinks; a regular object only (not a FIFO that would block).
  const int fd = ::shm_open(key.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0) {
    const int err = errno;
    Throw(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInvalidArgument,
          MakeString("Unable to open shared memory region: '", key, "' for region '", name, "': ", std::strerror(err)));
  }
  auto region = std::make_shared<Region>();
  region->fd = fd;
  region->name = name;
  region->key = key;
  region->offset = offset;
  region->byte_size = byte_size;
  struct stat st;
  HN_CHECK_KIND(kInvalidArgument, ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode), "failed to register shared memory ",
                "region '", name, "': '", key, "' is not a shared memory object");
  const uint64_t size = st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0;
  HN_CHECK_KIND(kInvalidArgument, Within(offset, byte_size, size), "failed to register shared memory region '", name,
                "': offset ", offset, " + byte_size ", byte_size, " exceeds the ", size, " bytes of '", key, "'");
  std::lock_guard<std::mutex> lock(mu_);  // name and count checked here, once, as the region goes in
  HN_CHECK_KIND(kInvalidArgument, !regions_.count(name), "shared memory region '", name, "' already in manager");
  HN_CHECK_KIND(kUnavailable, regions_.size() < kMaxRegions, "failed to register shared memory region '", name,
                "': ", kMaxRegions, " regions are registered, the most this server holds; unregister some");
  regions_.emplace(name, std::move(region));
}

void SystemSharedMemory::Unregister(const std::string& name) {
  CheckAllowed();
  std::lock_guard<std::mutex> lock(mu_);
  if (name.empty()) {
    regions_.clear();
  } else {
    regions_.erase(name);
  }
}

std::vector<SharedMemoryRegionStatus> SystemSharedMemory::Status(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SharedMemoryRegionStatus> out;
  for (const auto& [n, r] : regions_)
    if (name.empty() || n == name) out.push_back({r->name, r->key, r->offset, r->byte_size});
  HN_CHECK_KIND(kNotFound, name.empty() || !out.empty(), "Unable to find system shared memory region: '", name, "'");
  return out;
}

std::shared_ptr<const SystemSharedMemory::Region> SystemSharedMemory::Find(const SharedMemoryRef& ref,
                                                                           const std::string& tensor) const {
  CheckAllowed();
  std::shared_ptr<const Region> r;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = regions_.find(ref.region);
    if (it != regions_.end()) r = it->second;
  }
  HN_CHECK_KIND(kNotFound, r != nullptr, "Unable to find shared memory region: '", ref.region, "' (", tensor, ")");
  HN_CHECK_KIND(kInvalidArgument, Within(ref.offset, ref.byte_size, r->byte_size),
                "Invalid offset + byte size for shared memory region: '", ref.region, "' (", tensor, ": offset ",
                ref.offset, " + byte size ", ref.byte_size, " exceeds the region's ", r->byte_size, " bytes)");
  return r;
}

std::shared_ptr<std::string> SystemSharedMemory::Read(const SharedMemoryRef& ref, const std::string& tensor,
                                                      RequestMemoryLease* memory) const {
  auto r = Find(ref, tensor);
  if (memory) memory->GrowOrThrow(ref.byte_size, tensor + " from shared memory");
  auto out = std::make_shared<std::string>();
  out->resize(ref.byte_size);
  uint64_t done = 0;
  const uint64_t at = r->offset + ref.offset;
  while (done < ref.byte_size) {
    const ssize_t n = ::pread(r->fd, out->data() + done, ref.byte_size - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    HN_CHECK_KIND(kInvalidArgument, n > 0, "cannot read ", tensor, " from shared memory region '", ref.region,
                  "': '", r->key, "' now ends before byte ", at + ref.byte_size,
                  n < 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string(" (was it shrunk?)"));
    done += static_cast<uint64_t>(n);
  }
  return out;
}

SharedMemoryTarget SystemSharedMemory::Target(const SharedMemoryRef& ref, const std::string& tensor) const {
  SharedMemoryTarget t;
  t.region_ = Find(ref, tensor);
  t.ref_ = ref;
  t.tensor_ = tensor;
  return t;
}

void SharedMemoryTarget::Write(std::string_view bytes) const {
  const Region& r = *region_;
  HN_CHECK_KIND(kInvalidArgument, bytes.size() <= ref_.byte_size, "shared memory size specified with the request for ",
                tensor_, " (", ref_.byte_size, " bytes) should be at least ", bytes.size(), " bytes to hold the results");
  const uint64_t at = r.offset + ref_.offset;
  // Never grow the client's object: one that shrank since registering gets an error instead.
  HN_CHECK_KIND(kInvalidArgument, Within(at, bytes.size(), ObjectSize(r.fd)), "cannot write ", tensor_,
                " to shared memory region '", ref_.region, "': '", r.key, "' now ends before byte ", at + bytes.size(),
                " (was it shrunk?)");
  uint64_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(r.fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    HN_CHECK_KIND(kRuntime, n > 0, "cannot write ", tensor_, " to shared memory region '", ref_.region, "': ",
                  n < 0 ? std::strerror(errno) : "nothing written");
    done += static_cast<uint64_t>(n);
  }
}

}  // namespace hetnet::serving
