#include "device/collectives/gloo_common_world.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>

#include <gloo/barrier.h>
#include <gloo/config.h>
#include <gloo/context.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#if GLOO_HAVE_TRANSPORT_IBVERBS
#include <gloo/transport/ibverbs/device.h>
#endif

namespace hetnet {

namespace {

// Gloo's rendezvous store over a hetnet StoreHandler. Every wait uses the world's timeout, so a
// rank that never joins makes the others fail with the handler's kTimeout instead of hanging.
class StoreBridge final : public gloo::rendezvous::Store {
 public:
  StoreBridge(StoreHandlerPtr store, std::chrono::milliseconds timeout) : store_(std::move(store)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->Set(key, std::string(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    const std::string v = store_->Get(key, timeout_);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->Wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override {
    store_->Wait(keys, timeout_);
  }

 private:
  StoreHandlerPtr store_;
  std::chrono::milliseconds timeout_;
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string SockaddrText(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof(buf));
  else if (ss.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof(buf));
  else
    return "(no address)";
  return buf;
}

bool IsLoopback(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr) >> 24) == 127;
  if (ss.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127;
  }
  return false;
}

// MASTER_ADDR resolved (first address), or false when unset.
bool ResolveMaster(sockaddr_storage* out, std::string* text) {
  *text = Env("MASTER_ADDR");
  if (text->empty()) return false;
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  const std::string port = Env("MASTER_PORT").empty() ? "9" : Env("MASTER_PORT");
  const int rc = getaddrinfo(text->c_str(), port.c_str(), &hints, &res);
  HN_CHECK_KIND(kInvalidArgument, rc == 0 && res, "MASTER_ADDR '", *text, "' does not resolve: ", gai_strerror(rc));
  std::memset(out, 0, sizeof(*out));
  std::memcpy(out, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return true;
}

// The local address the kernel would use to reach `master` (a UDP connect sends nothing).
std::string LocalAddressTowards(const sockaddr_storage& master, const std::string& master_text) {
  const int fd = socket(master.ss_family, SOCK_DGRAM, 0);
  HN_CHECK_KIND(kIo, fd >= 0, "socket(): ", std::strerror(errno));
  const socklen_t len = master.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  sockaddr_storage local{};
  socklen_t local_len = sizeof(local);
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&master), len) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0;
  const int err = errno;
  close(fd);
  HN_CHECK_KIND(kInvalidArgument, ok, "no route to MASTER_ADDR '", master_text, "': ", std::strerror(err),
                "; set HETNET_SOCKET_IFNAME to the interface that reaches it");
  return SockaddrText(local);
}

struct TcpChoice {
  gloo::transport::tcp::attr attr;
  std::string why;  // where the choice came from, for messages
};

// Interface selection (distributed-facts §8 R11): the op's `interface`, HETNET_SOCKET_IFNAME,
// GLOO_SOCKET_IFNAME, the address that routes to MASTER_ADDR, else Gloo's hostname lookup.
// Checks that interface `name` exists with an address of `family` (AF_UNSPEC: any IP) before
// Gloo looks it up: Gloo's own lookup leaks its getifaddrs list when the name is missing, and
// this message lists what exists.
void RequireInterface(const std::string& name, int family) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;  // let Gloo report it
  bool found = false;
  std::string names;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6))
      continue;
    if (names.find(std::string(a->ifa_name) + ",") == std::string::npos) names += std::string(a->ifa_name) + ",";
    if (name == a->ifa_name && (family == AF_UNSPEC || a->ifa_addr->sa_family == family)) found = true;
  }
  freeifaddrs(list);
  if (!names.empty()) names.pop_back();
  HN_CHECK_KIND(kInvalidArgument, found, "tcp transport: no network interface named '", name, "' with an ",
                family == AF_INET6 ? "IPv6" : family == AF_INET ? "IPv4" : "IP", " address (this host has: ",
                names, ")");
}

TcpChoice ChooseTcp(const std::string& interface, std::string* advertised) {
  TcpChoice c;
  sockaddr_storage master{};
  std::string master_text;
  const bool have_master = ResolveMaster(&master, &master_text);
  if (have_master) c.attr.ai_family = master.ss_family;
  if (!interface.empty()) {
    c.attr.iface = interface;
    c.why = "interface '" + interface + "' (op argument)";
  } else if (!Env("HETNET_SOCKET_IFNAME").empty()) {
    c.attr.iface = Env("HETNET_SOCKET_IFNAME");
    c.why = "HETNET_SOCKET_IFNAME=" + c.attr.iface;
  } else if (!Env("GLOO_SOCKET_IFNAME").empty()) {
    c.attr.iface = Env("GLOO_SOCKET_IFNAME");
    c.why = "GLOO_SOCKET_IFNAME=" + c.attr.iface;
  } else if (have_master) {
    c.attr.hostname = LocalAddressTowards(master, master_text);
    c.why = "the route to MASTER_ADDR=" + master_text;
  } else {
    c.why = "this host's name (gethostname)";
  }
  if (!c.attr.iface.empty()) RequireInterface(c.attr.iface, c.attr.ai_family);
  gloo::transport::tcp::attr resolved;
  try {
    resolved = gloo::transport::tcp::CreateDeviceAttr(c.attr);
  } catch (const std::exception& e) {
    HN_THROW(kInvalidArgument, "tcp transport: no usable address from ", c.why, ": ", e.what());
  }
  *advertised = SockaddrText(resolved.ai_addr);
  if (have_master && !IsLoopback(master) && IsLoopback(resolved.ai_addr))
    HN_THROW(kInvalidArgument, "tcp transport: ", c.why, " gives ", *advertised, ", but MASTER_ADDR=", master_text,
             " is another host: would advertise 127.0.0.1 to remote peers; set HETNET_SOCKET_IFNAME to the ",
             "interface that reaches MASTER_ADDR (or pass the op argument `interface`)");
  return c;
}

struct DeviceEntry {
  std::shared_ptr<gloo::transport::Device> device;
  std::string text;
};

// One transport device per (transport, interface choice) and process: a second common world with
// other arguments gets its own device, never the first one's (Caffe2 reused the first silently).
DeviceEntry GetDevice(const std::string& transport, const std::string& interface) {
  static std::mutex mu;
  static auto* cache = new std::map<std::string, DeviceEntry>();  // never destroyed: devices own threads
  static pid_t owner = getpid();
  std::lock_guard<std::mutex> lock(mu);
  if (owner != getpid()) {  // a fork child: the parent's device threads do not exist here; leak them
    for (auto& kv : *cache) new std::shared_ptr<gloo::transport::Device>(kv.second.device);
    cache->clear();
    owner = getpid();
  }
  if (transport == "tcp") {
    std::string advertised;
    TcpChoice c = ChooseTcp(interface, &advertised);
    const std::string key = "tcp|" + c.attr.iface + "|" + c.attr.hostname + "|" + std::to_string(c.attr.ai_family);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
    DeviceEntry e;
    try {
      e.device = gloo::transport::tcp::CreateDevice(c.attr);
    } catch (const std::exception& ex) {
      HN_THROW(kIo, "tcp transport on ", advertised, " (", c.why, "): ", ex.what());
    }
    e.text = "tcp " + advertised + " (" + c.why + ")";
    return (*cache)[key] = e;
  }
  if (transport == "ibverbs") {
#if GLOO_HAVE_TRANSPORT_IBVERBS
    const std::string key = "ibverbs|" + interface;
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
    std::vector<std::string> names;
    try {
      names = gloo::transport::ibverbs::getDeviceNames();
    } catch (const std::exception& ex) {
      HN_THROW(kUnsupported, "ibverbs transport: cannot list RDMA devices: ", ex.what());
    }
    HN_CHECK_KIND(kUnsupported, !names.empty(),
                  "ibverbs transport: this machine has no RDMA (InfiniBand/RoCE) device; use transport \"tcp\"");
    gloo::transport::ibverbs::attr attr;
    attr.name = interface.empty() ? names.front() : interface;
    attr.port = 1;
    attr.index = 0;
    DeviceEntry e;
    try {
      e.device = gloo::transport::ibverbs::CreateDevice(attr);
    } catch (const std::exception& ex) {
      HN_THROW(kUnsupported, "ibverbs transport on device '", attr.name, "': ", ex.what());
    }
    e.text = "ibverbs " + attr.name;
    return (*cache)[key] = e;
#else
    HN_THROW(kUnsupported, "Gloo was not compiled with ibverbs support");
#endif
  }
  HN_THROW(kInvalidArgument, "Invalid transport: ", transport, " (expected \"tcp\" or \"ibverbs\")");
}

// A rank's connectFullMesh (or makeContext) can return while a peer is still accepting its
// connection; a rank that then exits at once (a local error, a one-op job) would make that peer's
// connect fail with "Connection closed by peer". One barrier on the new context means no rank
// leaves creation before every rank has finished connecting.
void WaitUntilAllRanksConnected(const std::shared_ptr<gloo::Context>& ctx, std::chrono::milliseconds timeout) {
  if (ctx->size == 1) return;
  gloo::BarrierOptions opts(ctx);
  opts.setTimeout(timeout);
  gloo::barrier(opts);
}

}  // namespace

std::shared_ptr<GlooCommonWorld> GlooCommonWorld::Create(const GlooWorldOptions& opts, const StoreHandlerPtr& store) {
  HN_ENFORCE(store, "common world '", opts.name, "': no store handler to rendezvous through");
  HN_ENFORCE(opts.size >= 1 && opts.rank >= 0 && opts.rank < opts.size, "common world '", opts.name,
             "': rank must satisfy 0 <= rank < size, got rank ", opts.rank, " and size ", opts.size);
  HN_ENFORCE(opts.timeout.count() > 0, "common world '", opts.name, "': timeout must be positive");
  std::shared_ptr<GlooCommonWorld> w(new GlooCommonWorld());
  w->name_ = opts.name;
  w->transport_ = opts.transport;
  w->rank_ = opts.rank;
  w->size_ = opts.size;
  w->timeout_ = opts.timeout;
  DeviceEntry dev = GetDevice(opts.transport, opts.interface);
  w->device_ = dev.device;
  w->device_text_ = dev.text;
  auto ctx = std::make_shared<gloo::rendezvous::Context>(opts.rank, opts.size);
  ctx->setTimeout(opts.timeout);
  StoreBridge bridge(store, opts.timeout);
  gloo::rendezvous::PrefixStore prefixed(opts.name, bridge);
  try {
    ctx->connectFullMesh(prefixed, w->device_);
    WaitUntilAllRanksConnected(ctx, opts.timeout);
  } catch (Error& e) {
    throw e.AddContext(MakeString("while connecting ", w->Describe(), " through ", store->Describe()));
  } catch (const std::exception& e) {
    HN_THROW(kIo, "connecting ", w->Describe(), " through ", store->Describe(), " failed: ", e.what());
  }
  w->context_ = std::move(ctx);
  return w;
}

std::shared_ptr<GlooCommonWorld> GlooCommonWorld::Clone(const std::string& name, bool /*sync*/) {
  std::shared_ptr<GlooCommonWorld> w(new GlooCommonWorld());
  w->name_ = name;
  w->transport_ = transport_;
  w->rank_ = rank_;
  w->size_ = size_;
  w->timeout_ = timeout_;
  w->device_ = device_;
  w->device_text_ = device_text_;
  Run("CloneCommonWorld", [&] {
    gloo::rendezvous::ContextFactory factory(context());
    auto ctx = factory.makeContext(w->device_);
    ctx->setTimeout(timeout_);
    WaitUntilAllRanksConnected(ctx, timeout_);
    w->context_ = std::move(ctx);
  });
  return w;
}

void GlooCommonWorld::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (unusable_) return;
  unusable_ = true;
  unusable_reason_ = "it was closed by DestroyCommonWorld";
  if (context_) context_->closeConnections();
}

std::string GlooCommonWorld::Describe() const {
  return MakeString("GLOO common world '", name_, "' rank ", rank_, " of ", size_, " over ",
                    device_text_.empty() ? transport_ : device_text_);
}

const std::shared_ptr<gloo::Context>& GlooCommonWorld::context() const {
  if (unusable_) {
    std::lock_guard<std::mutex> lock(mu_);
    HN_THROW(kIo, Describe(), " is unusable: ", unusable_reason_, "; create a new common world");
  }
  return context_;
}

void GlooCommonWorld::Fail(const char* what, const std::string& gloo_text) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!unusable_) unusable_reason_ = MakeString("an earlier ", what, " failed (", gloo_text, ")");
    unusable_ = true;
  }
  HN_THROW(kIo, what, " on ", Describe(), " failed: ", gloo_text);
}

std::string GlooAdvertisedAddress(const std::string& interface) {
  std::string advertised;
  ChooseTcp(interface, &advertised);
  return advertised;
}

}  // namespace hetnet
