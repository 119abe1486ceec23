// Store handlers (device/collectives/*store_handler*): the file store across threads (each
// operation opens its own files, as separate processes would), the TCP store (server and clients in
// threads over loopback; a dead server, garbage bytes), and the store ops.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/blob_serialization.h"
#include "core/workspace.h"
#include "device/collectives/file_store_handler.h"
#include "device/collectives/tcp_store_handler.h"
#include "test_util_io.h"

using namespace hetnet;
using hetnet_test::TempDir;
using namespace std::chrono_literals;

namespace {

template <typename F>
ErrorKind KindOf(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  FAIL("no hetnet::Error thrown");
  return ErrorKind::kRuntime;
}

}  // namespace

TEST_CASE("file store: names are Caffe2's MurmurHash3 layout", "[store]") {
  // 32 hex characters, deterministic, different keys give different names.
  const std::string a = FileStoreEncodeName("a"), b = FileStoreEncodeName("b");
  CHECK(a.size() == 32);
  CHECK(a == FileStoreEncodeName("a"));
  CHECK(a != b);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
}

TEST_CASE("file store: set, get, check, wait, set-once", "[store]") {
  TempDir dir;
  FileStoreHandler store(dir.path());
  CHECK_FALSE(store.Check({"k"}));
  store.Set("k", std::string("v\0w", 3));
  CHECK(store.Check({"k"}));
  CHECK(store.Get("k") == std::string("v\0w", 3));
  store.Set("k", std::string("v\0w", 3));  // the same data again is fine
  std::string msg;
  CHECK(KindOf([&] { store.Set("k", "other"); }, &msg) == ErrorKind::kInvalidArgument);
  CHECK(msg.find("already set") != std::string::npos);
  CHECK(store.Get("k") == std::string("v\0w", 3));

  // A second handler on the same directory (another process, in effect) sees the key.
  FileStoreHandler other(dir.path());
  CHECK(other.Get("k", 100ms) == std::string("v\0w", 3));
  // A prefix is a separate namespace.
  FileStoreHandler prefixed(dir.path(), "run1");
  CHECK_FALSE(prefixed.Check({"k"}));
  CHECK(prefixed.base_path().rfind("/" + FileStoreEncodeName("run1")) != std::string::npos);
}

TEST_CASE("file store: wait returns when another thread sets, and times out otherwise", "[store]") {
  TempDir dir;
  FileStoreHandler store(dir.path());
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    FileStoreHandler(dir.path()).Set("late", "x");
  });
  const auto t0 = std::chrono::steady_clock::now();
  store.Wait({"late"}, 5000ms);
  setter.join();
  CHECK(std::chrono::steady_clock::now() - t0 < 4s);

  std::string msg;
  const auto t1 = std::chrono::steady_clock::now();
  CHECK(KindOf([&] { store.Wait({"late", "never", "nope"}, 100ms); }, &msg) == ErrorKind::kTimeout);
  CHECK(std::chrono::steady_clock::now() - t1 < 2s);
  CHECK(msg.find("Wait timeout for name(s): late never nope") != std::string::npos);
  CHECK(KindOf([&] { store.Get("never", 50ms); }, &msg) == ErrorKind::kTimeout);
  CHECK(msg.find("Wait timeout for name(s): never") != std::string::npos);
}

TEST_CASE("file store: add is atomic across handlers, numkeys and delete work", "[store]") {
  TempDir dir;
  constexpr int kThreads = 4, kAdds = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      FileStoreHandler s(dir.path());
      for (int i = 0; i < kAdds; ++i) s.Add("counter", 1);
    });
  for (auto& t : threads) t.join();
  FileStoreHandler store(dir.path());
  CHECK(store.Add("counter", 0) == kThreads * kAdds);
  CHECK(store.Add("counter", -5) == kThreads * kAdds - 5);
  CHECK(store.Get("counter") == std::to_string(kThreads * kAdds - 5));
  store.Set("a", "1");
  CHECK(store.GetNumKeys() == 2);  // the lock and temp files do not count
  CHECK(store.DeleteKey("a"));
  CHECK_FALSE(store.DeleteKey("a"));
  CHECK(store.GetNumKeys() == 1);
  CHECK_FALSE(store.Check({"a"}));
  CHECK(KindOf([&] { store.Add("k2", 1), store.Set("s", "text"), store.Add("s", 1); }) == ErrorKind::kInvalidArgument);
  CHECK(KindOf([] { FileStoreHandler("/nonexistent/dir/for/store"); }) == ErrorKind::kNotFound);
}

TEST_CASE("blob serialization: strings and tensors round-trip", "[store]") {
  Blob s;
  s.Reset(std::make_shared<std::string>(std::string("\x80pickle\0bytes", 13)));
  const std::string bytes = SerializeBlob(s, "s");
  caffe2::BlobProto proto;
  REQUIRE(proto.ParseFromString(bytes));
  CHECK(proto.type() == "std::string");
  CHECK(proto.content() == std::string("\x80pickle\0bytes", 13));
  Blob back;
  DeserializeBlob(bytes, &back, "test");
  CHECK(back.Get<std::string>() == std::string("\x80pickle\0bytes", 13));

  Blob t;
  Tensor* x = t.GetMutableTensor(Device::CPU());
  x->Resize({2, 3});
  float* d = x->mutable_data<float>();
  for (int i = 0; i < 6; ++i) d[i] = i * 0.5f;
  Blob tb;
  DeserializeBlob(SerializeBlob(t, "t"), &tb, "test");
  REQUIRE(tb.IsTensor());
  CHECK(tb.GetTensor().shape() == std::vector<int64_t>{2, 3});
  CHECK(tb.GetTensor().data<float>()[5] == 2.5f);

  Blob other;
  other.Reset(std::make_shared<int>(3));
  CHECK(KindOf([&] { SerializeBlob(other, "o"); }) == ErrorKind::kUnsupported);
  CHECK(KindOf([&] { DeserializeBlob("\xff\xff garbage", &back, "test"); }) == ErrorKind::kInvalidArgument);
}

TEST_CASE("store ops over a file store: set, get, add, wait, timeout", "[store]") {
  TempDir dir;
  Workspace ws;
  auto run = [&](const std::string& type, std::vector<std::string> in, std::vector<std::string> out,
                 std::vector<std::pair<std::string, std::string>> str_args = {},
                 std::vector<std::pair<std::string, int64_t>> int_args = {}) {
    caffe2::OperatorDef op;
    op.set_type(type);
    for (auto& i : in) op.add_input(i);
    for (auto& o : out) op.add_output(o);
    for (auto& [k, v] : str_args) {
      auto* a = op.add_arg();
      a->set_name(k);
      a->set_s(v);
    }
    for (auto& [k, v] : int_args) {
      auto* a = op.add_arg();
      a->set_name(k);
      a->set_i(v);
    }
    ws.RunOperatorOnce(op);
  };
  CHECK(KindOf([&] { run("FileStoreHandlerCreate", {}, {"h"}); }) == ErrorKind::kInvalidArgument);
  run("FileStoreHandlerCreate", {}, {"h"}, {{"path", dir.path()}, {"prefix", "p"}});
  REQUIRE(ws.GetBlobOrThrow("h").IsType<StoreHandlerPtr>());
  ws.CreateBlob("msg")->Reset(std::make_shared<std::string>("hello"));
  run("StoreSet", {"h", "msg"}, {});
  run("StoreGet", {"h"}, {"msg_copy"}, {{"blob_name", "msg"}});
  CHECK(ws.GetBlobOrThrow("msg_copy").Get<std::string>() == "hello");
  run("StoreAdd", {"h"}, {"n"}, {{"blob_name", "cnt"}}, {{"add_value", 3}});
  run("StoreAdd", {"h"}, {"n"}, {{"blob_name", "cnt"}});
  CHECK(ws.GetBlobOrThrow("n").GetTensor().data<int64_t>()[0] == 4);
  CHECK(KindOf([&] { run("StoreAdd", {"h"}, {"n"}); }) == ErrorKind::kInvalidArgument);
  caffe2::OperatorDef wait;
  wait.set_type("StoreWait");
  wait.add_input("h");
  auto* names = wait.add_arg();
  names->set_name("blob_names");
  names->add_strings("msg");
  names->add_strings("cnt");
  ws.RunOperatorOnce(wait);
  std::string msg;
  CHECK(KindOf([&] { run("StoreGet", {"h"}, {"absent"}, {}, {{"timeout_ms", 50}}); }, &msg) == ErrorKind::kTimeout);
  CHECK(msg.find("Wait timeout for name(s): absent") != std::string::npos);
  CHECK(KindOf([&] { run("StoreSet", {"msg", "msg"}, {}); }) == ErrorKind::kInvalidArgument);
}

namespace {

// A raw loopback connection to the store's port, for sending bytes no client would.
int RawConnect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  return fd;
}

// A port nothing listens on (bound, then released).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

TEST_CASE("TCP store: server and clients in threads", "[store][tcp]") {
  TCPStoreHandler server("127.0.0.1", 0, true, 5000ms);
  REQUIRE(server.port() > 0);
  constexpr int kClients = 4;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int r = 1; r <= kClients; ++r)
    threads.emplace_back([&, r] {
      TCPStoreHandler c("127.0.0.1", server.port(), false, 5000ms);
      c.Set("rank" + std::to_string(r), std::string(r, '\0') + "x");
      for (int i = 0; i < 20; ++i) c.Add("counter", 1);
      // Every rank sees every other rank's key (the Get parks on the server until it is set).
      for (int o = 1; o <= kClients; ++o)
        if (c.Get("rank" + std::to_string(o), 5000ms) != std::string(o, '\0') + "x") return;
      ok++;
    });
  for (auto& t : threads) t.join();
  CHECK(ok == kClients);
  CHECK(server.Add("counter", 0) == kClients * 20);
  CHECK(server.GetNumKeys() == kClients + 1);
  CHECK(server.Check({"rank1", "rank4"}));
  CHECK_FALSE(server.Check({"rank1", "rank9"}));
  CHECK(server.DeleteKey("rank1"));
  CHECK_FALSE(server.DeleteKey("rank1"));
  server.Set("rank2", std::string(2, '\0') + "x");  // same data: fine
  CHECK(KindOf([&] { server.Set("rank2", "different"); }) == ErrorKind::kInvalidArgument);
  CHECK(KindOf([&] { server.Add("rank2", 1); }) == ErrorKind::kInvalidArgument);

  // A big value (a serialized tensor) crosses intact.
  std::string big(3 << 20, 'b');
  big[12345] = 'q';
  server.Set("big", big);
  CHECK(TCPStoreHandler("127.0.0.1", server.port(), false, 5000ms).Get("big") == big);

  // Wait returns when a key is set later by another client.
  std::thread late([&] {
    std::this_thread::sleep_for(50ms);
    TCPStoreHandler("127.0.0.1", server.port(), false, 5000ms).Set("late", "1");
  });
  server.Wait({"late", "rank3"}, 5000ms);
  late.join();

  // Prefixes are separate namespaces on one server.
  TCPStoreHandler p("127.0.0.1", server.port(), false, 5000ms, "job2");
  CHECK_FALSE(p.Check({"late"}));
  p.Set("late", "2");
  CHECK(p.Get("late") == "2");
  CHECK(server.Get("late") == "1");
}

TEST_CASE("TCP store: timeouts and a dead server", "[store][tcp]") {
  std::string msg;
  {
    TCPStoreHandler server("127.0.0.1", 0, true, 2000ms);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(KindOf([&] { server.Get("missing", 100ms); }, &msg) == ErrorKind::kTimeout);
    CHECK(msg.find("Wait timeout for name(s): missing") != std::string::npos);
    CHECK(KindOf([&] { server.Wait({"a", "b"}, 100ms); }, &msg) == ErrorKind::kTimeout);
    CHECK(msg.find("Wait timeout for name(s): a b") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < 2s);
    server.Set("a", "still works after timeouts");
    CHECK(server.Get("a") == "still works after timeouts");

    // A second client sees what the server handler set.
    TCPStoreHandler client("127.0.0.1", server.port(), false, 2000ms);
    CHECK(client.Get("a") == "still works after timeouts");
  }
  // Nobody listens: connecting retries until the timeout, then kIo naming host:port.
  const int port = FreePort();
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(KindOf([&] { TCPStoreHandler("127.0.0.1", port, false, 300ms).Set("k", "v"); }, &msg) == ErrorKind::kIo);
  CHECK(msg.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < 3s);

  // The server dies while a client waits on it.
  auto server = std::make_unique<TCPStoreHandler>("127.0.0.1", 0, true, 2000ms);
  TCPStoreHandler client("127.0.0.1", server->port(), false, 500ms);
  std::thread killer([&] {
    std::this_thread::sleep_for(100ms);
    server.reset();
  });
  const auto t1 = std::chrono::steady_clock::now();
  CHECK(KindOf([&] { client.Get("never", 10000ms); }, &msg) == ErrorKind::kIo);
  killer.join();
  CHECK(std::chrono::steady_clock::now() - t1 < 5s);
  CHECK(KindOf([&] { client.Set("k", "v"); }) == ErrorKind::kIo);
}

TEST_CASE("TCP store: garbage bytes do not crash the server", "[store][tcp]") {
  TCPStoreHandler server("127.0.0.1", 0, true, 2000ms);
  server.Set("k", "v");
  const std::vector<std::string> garbage = {
      std::string("\xff\xff\xff\xff", 4),                       // a 4 GiB frame: refused, connection dropped
      std::string("\x05\x00\x00\x00\x63hello", 9),             // unknown command
      std::string("\x09\x00\x00\x00\x01\xff\xff\xff\x7f\x00\x00\x00\x00", 13),  // SET, key longer than frame
      std::string("\x05\x00\x00\x00\x04\xff\xff\xff\xff", 9),  // CHECK with 4 billion keys
      std::string("\x01\x00\x00\x00\x05", 5),                   // a valid NUMKEYS, then the client leaves
      std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),          // a stray HTTP client
      std::string("\x02\x00", 2),                                 // a truncated header, then close
  };
  for (const auto& g : garbage) {
    const int fd = RawConnect(server.port());
    CHECK(send(fd, g.data(), g.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(g.size()));
    char buf[256];
    timeval tv{0, 200000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    (void)!recv(fd, buf, sizeof(buf), 0);  // a BAD_REQUEST reply, a close, or nothing
    close(fd);
  }
  // Many connections opened and abandoned mid-frame.
  std::vector<int> fds;
  for (int i = 0; i < 50; ++i) {
    fds.push_back(RawConnect(server.port()));
    (void)!send(fds.back(), "\x10\x00\x00\x00\x01", 5, MSG_NOSIGNAL);
  }
  for (int fd : fds) close(fd);
  CHECK(server.Get("k", 2000ms) == "v");
  CHECK(TCPStoreHandler("127.0.0.1", server.port(), false, 2000ms).Get("k") == "v");
}

TEST_CASE("TCP store: IPv6 loopback", "[store][tcp]") {
  std::unique_ptr<TCPStoreHandler> server;
  try {
    server = std::make_unique<TCPStoreHandler>("::1", 0, true, 2000ms);
  } catch (const Error& e) {
    WARN("no IPv6 loopback here: " << e.what());
    return;
  }
  TCPStoreHandler client("::1", server->port(), false, 2000ms);
  client.Set("six", "6");
  CHECK(server->Get("six") == "6");
}
