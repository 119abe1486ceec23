#include "serving/http_routes.h"

#include <algorithm>
#include <vector>

namespace hetnet::serving {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoding; false on a malformed escape.
bool PercentDecode(std::string_view in, std::string* out, bool plus_is_space = false) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Matches the path segments (decoded) against the API; Op::kNone = 404.
Route Match(const std::vector<std::string>& s) {
  Route r;
  const size_t n = s.size();
  if (n == 0 || s[0] != "v2") return r;
  if (n == 1) {
    r.op = Op::kServerMetadata;
    return r;
  }
  if (s[1] == "health" && n == 3) {
    if (s[2] == "live") r.op = Op::kLive;
    if (s[2] == "ready") r.op = Op::kReady;
    r.health = true;
    return r;
  }
  if (s[1] == "repository") {
    r.method = "POST";
    if (n == 3 && s[2] == "index") r.op = Op::kRepoIndex;
    if (n == 5 && s[2] == "models" && !s[3].empty()) {
      r.model = s[3];
      if (s[4] == "load") r.op = Op::kRepoLoad;
      if (s[4] == "unload") r.op = Op::kRepoUnload;
    }
    return r;
  }
  if (s[1] == "systemsharedmemory" || s[1] == "cudasharedmemory") {  // [/region/<r>]/<action>
    const bool named = n == 5 && s[2] == "region" && !s[3].empty();
    if (!(n == 3 || named)) return r;
    if (named) r.region = s[3];
    const std::string& action = s[n - 1];
    if (action == "status") r.op = Op::kShmStatus;
    if (action == "unregister") r.op = Op::kShmUnregister, r.method = "POST";
    if (action == "register" && named) r.op = Op::kShmRegister, r.method = "POST";
    if (r.op != Op::kNone && s[1] == "cudasharedmemory") r.op = Op::kCudaShm;
    return r;
  }
  if (s[1] != "models" || n < 3 || s[2].empty()) return r;
  if (n == 3 && s[2] == "stats") {  // every model's statistics, before the model routes (Triton)
    r.op = Op::kModelStats;
    return r;
  }
  r.model = s[2];
  size_t i = 3;
  if (n >= 5 && s[3] == "versions") {
    if (!AllDigits(s[4])) return r;
    r.version = s[4];
    i = 5;
  }
  if (i == n) {
    r.op = Op::kModelMetadata;
  } else if (i + 1 == n) {
    const std::string& a = s[i];
    if (a == "ready") {
      r.op = Op::kModelReady;
      r.health = true;
    } else if (a == "config") {
      r.op = Op::kModelConfig;
    } else if (a == "stats") {
      r.op = Op::kModelStats;
    } else if (a == "placement") {
      r.op = Op::kPlacement;
    } else if (a == "infer") {
      r.op = Op::kInfer;
      r.method = "POST";
    }
  }
  return r;
}

}  // namespace

std::optional<Route> RouteOf(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  std::vector<std::string> segs;
  std::string seg;
  if (path.empty() || path[0] != '/') return std::nullopt;
  size_t pos = 1;
  while (true) {
    size_t slash = path.find('/', pos);
    std::string_view raw = path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
    if (!PercentDecode(raw, &seg)) return std::nullopt;
    segs.push_back(seg);
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return Match(segs);
}

std::string QueryValue(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = item.find('=');
    std::string k, v;
    if (!PercentDecode(item.substr(0, eq), &k, true)) continue;
    if (k != key) continue;
    if (eq != std::string_view::npos && PercentDecode(item.substr(eq + 1), &v, true)) return v;
    return "";
  }
  return "";
}

}  // namespace hetnet::serving
