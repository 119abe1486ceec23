// SystemSharedMemory: registering POSIX shared memory objects and reading / writing tensors in them;
// the live-server side (tritonclient over HTTP and gRPC) is tests/python/serving/test_shared_memory.py.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>

#include "core/error.h"
#include "serving/request_memory.h"
#include "serving/system_shared_memory.h"

using hetnet::Error;
using hetnet::ErrorKind;
using hetnet::serving::RequestMemoryBudget;
using hetnet::serving::SharedMemoryRef;
using hetnet::serving::SharedMemoryRefOf;
using hetnet::serving::SystemSharedMemory;

namespace {

// A shared memory object of `size` bytes holding 0, 1, 2, ...; unlinked when the test ends.
struct ShmObject {
  explicit ShmObject(size_t size) {
    key = "/hetnet_cpp_test_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device()());
    fd = ::shm_open(key.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i);
    REQUIRE(::pwrite(fd, bytes.data(), size, 0) == static_cast<ssize_t>(size));
  }
  ~ShmObject() {
    ::close(fd);
    ::shm_unlink(key.c_str());
  }
  size_t Size() const {
    struct stat st;
    ::fstat(fd, &st);
    return static_cast<size_t>(st.st_size);
  }
  std::string key;
  int fd = -1;
};

ErrorKind KindOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.kind();
  }
  FAIL("no error thrown");
  return ErrorKind::kRuntime;
}

}  // namespace

TEST_CASE("shared memory regions register, report and unregister", "[serving]") {
  ShmObject obj(256);
  SystemSharedMemory shm(true);
  shm.Register("a", obj.key, 0, 256);
  shm.Register("b", obj.key, 64, 128);
  auto all = shm.Status("");
  REQUIRE(all.size() == 2);
  CHECK(all[1].name == "b");
  CHECK(all[1].key == obj.key);
  CHECK(all[1].offset == 64);
  CHECK(all[1].byte_size == 128);
  CHECK(shm.Status("a").size() == 1);
  CHECK(KindOf([&] { shm.Status("c"); }) == ErrorKind::kNotFound);
  CHECK_THROWS_WITH(shm.Register("a", obj.key, 0, 8), Catch::Contains("shared memory region 'a' already in manager"));
  shm.Unregister("a");
  shm.Unregister("never registered");  // not an error (Triton)
  CHECK(shm.Status("").size() == 1);
  shm.Unregister("");
  CHECK(shm.Status("").empty());
}

TEST_CASE("shared memory registration refuses bad keys and ranges", "[serving]") {
  ShmObject obj(100);
  SystemSharedMemory shm(true);
  CHECK_THROWS_WITH(shm.Register("r", obj.key, 0, 101), Catch::Contains("exceeds the 100 bytes"));
  CHECK_THROWS_WITH(shm.Register("r", obj.key, 1, 100), Catch::Contains("exceeds the 100 bytes"));
  // offset + byte_size wrapping around 2^64 is out of range, not 4 bytes.
  CHECK_THROWS_WITH(shm.Register("r", obj.key, UINT64_MAX - 3, 8), Catch::Contains("exceeds"));
  CHECK(KindOf([&] { shm.Register("r", "/hetnet_cpp_no_such_object", 0, 1); }) == ErrorKind::kNotFound);
  for (const char* key : {"", "/", "noslash", "/a/b", "/../etc/passwd", "/..", "/."})
    CHECK_THROWS_WITH(shm.Register("r", key, 0, 1), Catch::Contains("not a POSIX shared memory name"));
  CHECK_THROWS_WITH(shm.Register("r", "/" + std::string(300, 'k'), 0, 1), Catch::Contains("not a POSIX"));
  CHECK_THROWS_WITH(shm.Register("", obj.key, 0, 1), Catch::Contains("needs a name"));
  CHECK(shm.Status("").empty());
}

TEST_CASE("shared memory is refused, naming the flag, unless allowed", "[serving]") {
  ShmObject obj(16);
  SystemSharedMemory shm(false);
  CHECK(KindOf([&] { shm.Register("r", obj.key, 0, 16); }) == ErrorKind::kUnsupported);
  CHECK_THROWS_WITH(shm.Register("r", obj.key, 0, 16), Catch::Contains("--allow-client-shm"));
  CHECK_THROWS_WITH(shm.Read({"r", 0, 4}, "input 'x'", nullptr), Catch::Contains("--allow-client-shm"));
  CHECK(shm.Status("").empty());
}

TEST_CASE("tensors are read from and written to a region's range", "[serving]") {
  ShmObject obj(256);
  SystemSharedMemory shm(true);
  shm.Register("r", obj.key, 16, 64);  // bytes 16..79 of the object
  auto bytes = shm.Read({"r", 8, 4}, "input 'x'", nullptr);
  CHECK(*bytes == std::string("\x18\x19\x1a\x1b", 4));  // object bytes 24..27
  CHECK_THROWS_WITH(shm.Read({"r", 60, 8}, "input 'x'", nullptr),
                    Catch::Contains("Invalid offset + byte size") && Catch::Contains("input 'x'"));
  CHECK(KindOf([&] { shm.Read({"other", 0, 1}, "input 'x'", nullptr); }) == ErrorKind::kNotFound);

  shm.Target({"r", 4, 8}, "output 'y'").Write("abcdefgh");
  char back[8];
  REQUIRE(::pread(obj.fd, back, 8, 20) == 8);
  CHECK(std::string(back, 8) == "abcdefgh");
  CHECK_THROWS_WITH(shm.Target({"r", 4, 4}, "output 'y'").Write("abcdefgh"),
                    Catch::Contains("(4 bytes) should be at least 8 bytes"));

  CHECK_THROWS_WITH(shm.Target({"r", 60, 8}, "output 'y'"), Catch::Contains("Invalid offset + byte size"));
  // A target keeps its region: unregistered while the request runs, the output still lands.
  auto target = shm.Target({"r", 0, 4}, "output 'y'");
  shm.Unregister("r");
  target.Write("wxyz");
  REQUIRE(::pread(obj.fd, back, 4, 16) == 4);
  CHECK(std::string(back, 4) == "wxyz");
  shm.Register("r", obj.key, 16, 64);

  // The bytes read are charged to the request's lease first; a lease over its budget reads nothing.
  RequestMemoryBudget budget(100);
  auto lease = budget.Take(90, "test");
  CHECK_THROWS_WITH(shm.Read({"r", 0, 20}, "input 'x'", lease.get()), Catch::Contains("input 'x' from shared memory"));
  CHECK(lease->held() == 90);
  CHECK(shm.Read({"r", 0, 10}, "input 'x'", lease.get())->size() == 10);
  CHECK(lease->held() == 100);
}

TEST_CASE("a region shrunk after registering gives errors, never SIGBUS, and is not grown", "[serving]") {
  ShmObject obj(4096);
  SystemSharedMemory shm(true);
  shm.Register("r", obj.key, 0, 4096);
  REQUIRE(::ftruncate(obj.fd, 100) == 0);
  CHECK_THROWS_WITH(shm.Read({"r", 0, 4096}, "input 'x'", nullptr), Catch::Contains("now ends before byte 4096"));
  CHECK(shm.Read({"r", 0, 100}, "input 'x'", nullptr)->size() == 100);
  CHECK_THROWS_WITH(shm.Target({"r", 96, 8}, "output 'y'").Write("abcdefgh"),
                    Catch::Contains("now ends before byte 104"));
  CHECK(obj.Size() == 100);
}

TEST_CASE("the number of registered regions is capped", "[serving]") {
  ShmObject obj(8);
  SystemSharedMemory shm(true);
  for (size_t i = 0; i < SystemSharedMemory::kMaxRegions; ++i) shm.Register("r" + std::to_string(i), obj.key, 0, 8);
  CHECK(KindOf([&] { shm.Register("one_more", obj.key, 0, 8); }) == ErrorKind::kUnavailable);
  shm.Unregister("r0");
  shm.Register("one_more", obj.key, 0, 8);
  CHECK(shm.Status("").size() == SystemSharedMemory::kMaxRegions);
}

TEST_CASE("shared memory parameters come as region and byte size together", "[serving]") {
  const std::string region = "r";
  const uint64_t size = 64, offset = 8;
  CHECK_FALSE(SharedMemoryRefOf(nullptr, nullptr, nullptr, "input 'x'"));
  auto ref = SharedMemoryRefOf(&region, &size, &offset, "input 'x'");
  REQUIRE(ref);
  CHECK(ref->region == "r");
  CHECK(ref->byte_size == 64);
  CHECK(ref->offset == 8);
  CHECK(SharedMemoryRefOf(&region, &size, nullptr, "input 'x'")->offset == 0);
  CHECK_THROWS_WITH(SharedMemoryRefOf(&region, nullptr, nullptr, "input 'x'"),
                    Catch::Contains("input 'x'") && Catch::Contains("'shared_memory_byte_size' is missing"));
  CHECK_THROWS_WITH(SharedMemoryRefOf(nullptr, &size, nullptr, "output 'y'"),
                    Catch::Contains("'shared_memory_region' is missing"));
}
