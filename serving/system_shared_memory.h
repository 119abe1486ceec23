// Triton's system shared memory extension (serving-facts §2.1): clients register POSIX shared memory
// objects (shm_open keys) as named regions, then name a region, offset and byte size in place of an
// input's data or to receive an output. One registry per server, used by both front ends.
//
// The server reads and writes a region with pread/pwrite on the object's descriptor, never through a
// mapping: a client that shrinks its object after registering (ftruncate) then gets an error, where a
// mapping would have killed the server with SIGBUS. Inputs cost one more copy for it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetnet::serving {

class RequestMemoryLease;  // serving/request_memory.h

// Where one tensor's bytes are: `byte_size` bytes from `offset` into region `region`.
struct SharedMemoryRef {
  std::string region;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

// The three shared-memory parameters of a tensor, as the protocol carried them (absent = nullptr),
// into a ref; nullopt when the tensor names no region. Region and byte size come together or not at
// all (Triton's rule); `tensor` names the tensor in the error ("input 'x'").
std::optional<SharedMemoryRef> SharedMemoryRefOf(const std::string* region, const uint64_t* byte_size,
                                                 const uint64_t* offset, const std::string& tensor);

struct SharedMemoryRegionStatus {
  std::string name;
  std::string key;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

class SystemSharedMemory;

// An output's destination, resolved when the request is accepted: it keeps its region open, so a
// region unregistered while the request runs still receives the output (Triton defers the same way).
class SharedMemoryTarget {
 public:
  // Writes `bytes`; kInvalidArgument when they do not fit in the ref's byte size, or when the object
  // shrank below the range since registering.
  void Write(std::string_view bytes) const;
  const SharedMemoryRef& ref() const { return ref_; }

 private:
  friend class SystemSharedMemory;
  struct Region;
  std::shared_ptr<const Region> region_;
  SharedMemoryRef ref_;
  std::string tensor_;
};

class SystemSharedMemory {
 public:
  // Registered regions at most: each holds a descriptor.
  static constexpr size_t kMaxRegions = 1024;

  // `allowed` is --allow-client-shm: without it every call but Status refuses, naming the flag.
  explicit SystemSharedMemory(bool allowed) : allowed_(allowed) {}
  bool allowed() const { return allowed_; }

  // Opens `key` (a POSIX shm name, "/name") and checks that [offset, offset + byte_size) lies in the
  // object. kAlreadyExists for a name in use; kInvalidArgument for a bad key or range; kNotFound for
  // a key that names no object.
  void Register(const std::string& name, const std::string& key, uint64_t offset, uint64_t byte_size);
  // "" = every region. Unknown names are not an error (Triton). Requests in flight keep what they use.
  void Unregister(const std::string& name);
  // "" = every region; an unknown name is kNotFound.
  std::vector<SharedMemoryRegionStatus> Status(const std::string& name) const;

  // The bytes `ref` names, read now, charged to `memory` (may be null) before they are allocated.
  std::shared_ptr<std::string> Read(const SharedMemoryRef& ref, const std::string& tensor,
                                    RequestMemoryLease* memory) const;
  // Where an output goes: the region found and the ref's range checked now.
  SharedMemoryTarget Target(const SharedMemoryRef& ref, const std::string& tensor) const;

 private:
  using Region = SharedMemoryTarget::Region;
  std::shared_ptr<const Region> Find(const SharedMemoryRef& ref, const std::string& tensor) const;
  void CheckAllowed() const;

  const bool allowed_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Region>> regions_;
};

}  // namespace hetnet::serving
