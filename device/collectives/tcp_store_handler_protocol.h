// The TCP store's wire format (client: tcp_store_handler.cc, server: tcp_store_handler_server.cc).
// Every message is a frame: u32 little-endian payload length, then the payload. A request payload
// is a u8 command and its fields; a reply payload is a u8 status and its fields. Strings are u32
// length + bytes, integers i64 little-endian. One request is in flight per connection.
//
//   SET    key value          -> OK | CONFLICT
//   GET    key timeout_ms     -> OK value | TIMEOUT       (the server waits for the key)
//   ADD    key delta          -> OK new_value
//   CHECK  n key...           -> OK u8(all set)
//   NUMKEYS                   -> OK count
//   DELETE key                -> OK u8(deleted)
//   WAIT   n key... timeout_ms -> OK | TIMEOUT            (timeout_ms 0: no timeout)
// Any malformed request gets BAD_REQUEST with a message; a frame over kMaxFrame closes the connection.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace hetnet {
namespace tcp_store {

enum class Command : uint8_t { kSet = 1, kGet, kAdd, kCheck, kNumKeys, kDelete, kWait };
enum class Status : uint8_t { kOk = 0, kTimeout = 1, kConflict = 2, kBadRequest = 3 };

constexpr uint32_t kMaxFrame = 1u << 30;  // 1 GiB: a serialized blob; larger frames are refused

class Writer {
 public:
  Writer& U8(uint8_t v) { buf_.push_back(static_cast<char>(v)); return *this; }
  Writer& U32(uint32_t v) { return Raw(&v, 4); }
  Writer& I64(int64_t v) { return Raw(&v, 8); }
  Writer& Str(const std::string& s) { U32(static_cast<uint32_t>(s.size())); buf_ += s; return *this; }
  const std::string& payload() const { return buf_; }
  // The payload with its length prefix.
  std::string Frame() const {
    uint32_t n = static_cast<uint32_t>(buf_.size());
    std::string f(reinterpret_cast<const char*>(&n), 4);  // little-endian hosts only (x86-64, aarch64)
    return f + buf_;
  }

 private:
  Writer& Raw(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); return *this; }
  std::string buf_;
};

// Reads fields from a payload; any read past the end sets !ok() and returns zero/empty values.
class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  uint8_t U8() { uint8_t v = 0; Raw(&v, 1); return v; }
  uint32_t U32() { uint32_t v = 0; Raw(&v, 4); return v; }
  int64_t I64() { int64_t v = 0; Raw(&v, 8); return v; }
  std::string Str() {
    const uint32_t n = U32();
    if (!ok_ || n > s_.size() - pos_) { ok_ = false; return {}; }
    std::string out = s_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == s_.size(); }
  size_t remaining() const { return s_.size() - pos_; }

 private:
  void Raw(void* p, size_t n) {
    if (!ok_ || n > s_.size() - pos_) { ok_ = false; return; }
    std::memcpy(p, s_.data() + pos_, n);
    pos_ += n;
  }
  const std::string& s_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace tcp_store
}  // namespace hetnet
