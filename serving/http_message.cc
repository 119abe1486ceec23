// Plain pieces of the HTTP front ends that need neither Beast nor the server: request/response
// structs, JSON string quoting, gzip/deflate of bodies.
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/error.h"
#include "serving/http_server.h"

namespace hetnet::serving {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string TooLargeMessage(uint64_t n, size_t limit) {
  return MakeString("request JSON size of ", n, " bytes exceeds the maximum allowed input size of ", limit,
                    " bytes. Use --http-max-input-size to increase the limit.");
}

std::string Inflate(const std::string& in, bool raw_deflate, size_t limit, std::string* out, bool* too_large) {
  *too_large = false;
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, raw_deflate ? -MAX_WBITS : MAX_WBITS + 32) != Z_OK) return "cannot initialize zlib";
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(std::min<size_t>(in.size(), UINT32_MAX));
  size_t consumed_total = 0;
  out->clear();
  out->resize(std::min<size_t>(std::max<size_t>(in.size() * 4, 4096), limit + 1));
  size_t produced = 0;
  int rc = Z_OK;
  while (true) {
    if (produced == out->size()) {
      if (out->size() > limit) {
        *too_large = true;
        break;
      }
      out->resize(std::min<size_t>(out->size() * 2, limit + 1));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out->size() - produced, UINT32_MAX));
    uInt before_out = zs.avail_out;
    uInt before_in = zs.avail_in;
    rc = inflate(&zs, Z_NO_FLUSH);
    produced += before_out - zs.avail_out;
    consumed_total += before_in - zs.avail_in;
    if (zs.avail_in == 0 && consumed_total < in.size()) {
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed_total));
      zs.avail_in = static_cast<uInt>(std::min<size_t>(in.size() - consumed_total, UINT32_MAX));
    }
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && before_out != 0 && zs.avail_in == 0) break;  // truncated input
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
  }
  inflateEnd(&zs);
  if (*too_large) return TooLargeMessage(produced, limit);
  if (rc != Z_STREAM_END) return "failed to decompress the request body: corrupt or truncated compressed data";
  if (produced > limit) {
    *too_large = true;
    return TooLargeMessage(produced, limit);
  }
  out->resize(produced);
  return "";
}

bool Deflate(const std::vector<std::string_view>& pieces, bool gzip, std::string* out) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, gzip ? MAX_WBITS + 16 : MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return false;
  }
  size_t total = 0;
  for (auto p : pieces) total += p.size();
  out->resize(deflateBound(&zs, total) + 64);
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(out->size());
  bool ok = true;
  for (size_t i = 0; i < pieces.size() && ok; ++i) {
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(pieces[i].data()));
    zs.avail_in = static_cast<uInt>(pieces[i].size());
    ok = deflate(&zs, Z_NO_FLUSH) == Z_OK && zs.avail_in == 0;
  }
  ok = ok && deflate(&zs, Z_FINISH) == Z_STREAM_END;
  out->resize(out->size() - zs.avail_out);
  deflateEnd(&zs);
  return ok;
}

// q=0 means refused.
std::string ChooseEncoding(const std::string* accept) {
  if (!accept) return "";
  bool gzip = false, deflate = false;
  std::string_view rest = *accept;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t semi = item.find(';');
    std::string_view token = item.substr(0, semi);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    bool refused = semi != std::string_view::npos && item.find("q=0", semi) != std::string_view::npos &&
                   item.find("q=0.", semi) == std::string_view::npos;
    if (refused) continue;
    if (IEquals(token, "gzip") || IEquals(token, "x-gzip")) gzip = true;
    if (IEquals(token, "deflate")) deflate = true;
  }
  return gzip ? "gzip" : deflate ? "deflate" : "";
}

// ---------------------------------------------------------------------------------------------------

const std::string* HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (IEquals(k, name)) return &v;
  }
  return nullptr;
}

size_t HttpReply::BodySize() const {
  size_t n = body.size();
  for (auto p : parts) n += p.size();
  return n;
}

HttpReply HttpReply::Json(int status, std::string json) {
  HttpReply r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(json);
  return r;
}

// Length of the valid UTF-8 sequence at s[i] (1-4), or 0 when the bytes there are not one.
static size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto c = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = c(i);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((c(i + k) & 0xC0) != 0x80) return 0;
  }
  if (n == 2 && b < 0xC2) return 0;                                    // overlong
  if (n == 3 && b == 0xE0 && c(i + 1) < 0xA0) return 0;                // overlong
  if (n == 3 && b == 0xED && c(i + 1) >= 0xA0) return 0;               // surrogate
  if (n == 4 && (b > 0xF4 || (b == 0xF0 && c(i + 1) < 0x90) || (b == 0xF4 && c(i + 1) >= 0x90))) return 0;
  return n;
}

std::string JsonQuote(std::string_view text) {
  std::string s = "\"";
  s.reserve(text.size() + 8);
  static const char* hex = "0123456789abcdef";
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': s += "\\\""; break;
      case '\\': s += "\\\\"; break;
      case '\n': s += "\\n"; break;
      case '\r': s += "\\r"; break;
      case '\t': s += "\\t"; break;
      default:
        if (c < 0x20) {
          s += "\\u00";
          s += hex[c >> 4];
          s += hex[c & 15];
        } else if (c < 0x80) {
          s += static_cast<char>(c);
        } else if (size_t n = Utf8SequenceLength(text, i)) {
          s.append(text.data() + i, n);
          i += n;
          continue;
        } else {
          s += "\\ufffd";  // not UTF-8: the answer stays valid JSON
        }
    }
    ++i;
  }
  s += '"';
  return s;
}

HttpReply HttpReply::Error(int status, std::string_view message) {
  return Json(status, "{\"error\":" + JsonQuote(message) + "}");
}

}  // namespace hetnet::serving
