#include "core/tensor_proto.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/checked_size.h"
#include "core/error.h"
#include "core/narrow_types.h"

namespace hetnet {

namespace {

using caffe2::TensorProto;

std::string Describe(const TensorProto& p) {
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  return MakeString("tensor '", p.name(), "' (", TensorProto::DataType_Name(p.data_type()).empty()
                                                    ? std::to_string(p.data_type())
                                                    : TensorProto::DataType_Name(p.data_type()),
                    ShapeToString(dims), ")");
}

// The element count of the declared dims (checked: no negative dim, no overflow, at most kMaxElements).
int64_t ProtoNumel(const TensorProto& p) {
  for (int64_t d : p.dims()) HN_ENFORCE(d >= 0, Describe(p), " has a negative dimension ", d);
  try {
    return CheckedNumel(p.dims().data(), static_cast<size_t>(p.dims_size()), "dims");
  } catch (const Error&) {
    HN_THROW(kInvalidArgument, Describe(p), " has too many elements (dims overflow or exceed ", kMaxElements, ")");
  }
}

void CheckCount(const TensorProto& p, const char* field, int64_t have, int64_t want) {
  HN_ENFORCE(have == want, Describe(p), ": ", field, " holds ", have, " value(s) but ", want,
             " element(s) were expected");
}

// Copies little-endian bytes (raw_data / byte_data) of exactly count elements.
void CopyBytesField(const TensorProto& p, const char* field, const std::string& bytes, size_t itemsize,
                    int64_t count, void* out) {
  HN_ENFORCE(bytes.size() == static_cast<size_t>(count) * itemsize, Describe(p), ": ", field, " holds ",
             bytes.size(), " bytes but ", count, " element(s) of ", itemsize, " byte(s) need ",
             static_cast<size_t>(count) * itemsize);
  if (count) std::memcpy(out, bytes.data(), bytes.size());
}

template <typename T, typename Field>
void CopyTyped(const TensorProto& p, const char* name, const Field& f, int64_t count, T* out) {
  CheckCount(p, name, f.size(), count);
  std::copy(f.begin(), f.end(), out);
}

// Bool, (u)int8, (u)int16, fp16 and BYTE: int32_data (Caffe2's writer), byte_data or raw_data.
template <typename T>
void ReadSmall(const TensorProto& p, int64_t count, T* out) {
  if (p.int32_data_size() > 0) {
    CheckCount(p, "int32_data", p.int32_data_size(), count);
    for (int64_t i = 0; i < count; ++i) {
      const int32_t v = p.int32_data(static_cast<int>(i));
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        out[i].bits = static_cast<uint16_t>(v);  // the 16-bit pattern
      } else if constexpr (std::is_same_v<T, bool>) {
        out[i] = v != 0;
      } else {
        out[i] = static_cast<T>(v);
      }
    }
  } else if (!p.byte_data().empty()) {
    CopyBytesField(p, "byte_data", p.byte_data(), sizeof(T), count, out);
  } else if (!p.raw_data().empty()) {
    CopyBytesField(p, "raw_data", p.raw_data(), sizeof(T), count, out);
  } else {
    CheckCount(p, "int32_data/byte_data/raw_data", 0, count);
  }
  if constexpr (std::is_same_v<T, bool>) {  // bytes other than 0/1 are not valid bools
    for (int64_t i = 0; i < count; ++i) {
      uint8_t b;
      std::memcpy(&b, &out[i], 1);
      if (b > 1) out[i] = true;
    }
  }
}

template <typename T, typename Field>
void ReadWide(const TensorProto& p, const char* name, const Field& f, int64_t count, T* out) {
  if (f.size() > 0) {
    CopyTyped(p, name, f, count, out);
  } else if (!p.raw_data().empty()) {
    CopyBytesField(p, "raw_data", p.raw_data(), sizeof(T), count, out);
  } else {
    CheckCount(p, (std::string(name) + "/raw_data").c_str(), 0, count);
  }
}

void ReadBFloat16(const TensorProto& p, int64_t count, float* out) {
  const std::string& raw = p.raw_data();
  HN_ENFORCE(raw.size() == static_cast<size_t>(count) * 2, Describe(p), ": data_format 1 (bfloat16) needs ",
             count * 2, " bytes of raw_data, found ", raw.size());
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t bits = (static_cast<uint32_t>(static_cast<uint8_t>(raw[2 * i + 1])) << 24) |
                          (static_cast<uint32_t>(static_cast<uint8_t>(raw[2 * i])) << 16);
    std::memcpy(&out[i], &bits, 4);
  }
}

// Checks that the proto holds exactly `count` elements in the field ReadElements will read, before
// anything is allocated: a few bytes claiming a huge shape fail here, not after allocating it.
void CheckDataPresent(const TensorProto& p, DataType dtype, int64_t count) {
  auto bytes = [&](const char* field, const std::string& b, size_t itemsize) {
    const bool ok = static_cast<uint64_t>(count) <= b.size() / itemsize && b.size() == static_cast<size_t>(count) * itemsize;
    HN_ENFORCE(ok, Describe(p), ": ", field, " holds ", b.size(), " bytes but ", count, " element(s) of ", itemsize,
               " byte(s) were expected");
  };
  if (p.data_format() == 1) return bytes("raw_data (bfloat16)", p.raw_data(), 2);
  auto wide = [&](const char* name, int have, size_t itemsize) {
    if (have > 0) return CheckCount(p, name, have, count);
    if (!p.raw_data().empty()) return bytes("raw_data", p.raw_data(), itemsize);
    CheckCount(p, (std::string(name) + "/raw_data").c_str(), 0, count);
  };
  switch (dtype) {
    case DataType::Float: return wide("float_data", p.float_data_size(), 4);
    case DataType::Double: return wide("double_data", p.double_data_size(), 8);
    case DataType::Int32: return wide("int32_data", p.int32_data_size(), 4);
    case DataType::Int64: return wide("int64_data", p.int64_data_size(), 8);
    case DataType::String: return CheckCount(p, "string_data", p.string_data_size(), count);
    default: {
      const size_t itemsize = ItemSize(dtype);
      if (p.int32_data_size() > 0) return CheckCount(p, "int32_data", p.int32_data_size(), count);
      if (!p.byte_data().empty()) return bytes("byte_data", p.byte_data(), itemsize);
      if (!p.raw_data().empty()) return bytes("raw_data", p.raw_data(), itemsize);
      CheckCount(p, "int32_data/byte_data/raw_data", 0, count);
    }
  }
}

// Writes `count` proto elements into out (typed as dtype).
void ReadElements(const TensorProto& p, DataType dtype, int64_t count, void* out) {
  if (p.data_format() == 1) return ReadBFloat16(p, count, static_cast<float*>(out));
  switch (dtype) {
    case DataType::Float: return ReadWide(p, "float_data", p.float_data(), count, static_cast<float*>(out));
    case DataType::Double: return ReadWide(p, "double_data", p.double_data(), count, static_cast<double*>(out));
    case DataType::Int32: return ReadWide(p, "int32_data", p.int32_data(), count, static_cast<int32_t*>(out));
    case DataType::Int64: return ReadWide(p, "int64_data", p.int64_data(), count, static_cast<int64_t*>(out));
    case DataType::Bool: return ReadSmall(p, count, static_cast<bool*>(out));
    case DataType::Byte:
    case DataType::UInt8: return ReadSmall(p, count, static_cast<uint8_t*>(out));
    case DataType::Int8: return ReadSmall(p, count, static_cast<int8_t*>(out));
    case DataType::UInt16: return ReadSmall(p, count, static_cast<uint16_t*>(out));
    case DataType::Int16: return ReadSmall(p, count, static_cast<int16_t*>(out));
    case DataType::Float16: return ReadSmall(p, count, static_cast<Half*>(out));
    // hetnet's own types: written as raw_data; int32_data/byte_data are read too.
    case DataType::BFloat16: return ReadSmall(p, count, static_cast<BFloat16*>(out));
    case DataType::UInt32: return ReadSmall(p, count, static_cast<uint32_t*>(out));
    case DataType::UInt64: return ReadSmall(p, count, static_cast<uint64_t*>(out));
    case DataType::String: {
      CheckCount(p, "string_data", p.string_data_size(), count);
      auto* s = static_cast<std::string*>(out);
      for (int64_t i = 0; i < count; ++i) s[i] = p.string_data(static_cast<int>(i));
      return;
    }
    default: HN_THROW(kInvalidArgument, Describe(p), " has unsupported data_type ", p.data_type());
  }
}

DataType ProtoDataType(const TensorProto& p) {
  HN_ENFORCE(p.data_format() == 0 || p.data_format() == 1, Describe(p), " has unknown data_format ",
             p.data_format(), " (known: 0 protobuf, 1 bfloat16 in raw_data)");
  if (p.data_format() == 1) return DataType::Float;  // bfloat16 is widened to float32
  const int t = static_cast<int>(p.data_type());
  HN_ENFORCE(t != 0 && IsKnownDataType(t), Describe(p), " has unsupported data_type ", t);
  return static_cast<DataType>(t);
}

}  // namespace

void DeserializeTensorProtoInto(const TensorProto& p, Tensor* dst) {
  const DataType dtype = ProtoDataType(p);
  const int64_t numel = ProtoNumel(p);
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  int64_t begin = 0, end = numel;
  if (p.has_segment()) {
    begin = p.segment().begin();
    end = p.segment().end();
    HN_ENFORCE(0 <= begin && begin <= end && end <= numel, Describe(p), " has segment [", begin, ", ", end,
               ") outside its ", numel, " element(s)");
  }
  CheckDataPresent(p, dtype, end - begin);
  const bool full = begin == 0 && end == numel;
  if (full) {
    // Validate the counts into a fresh tensor first, so a bad proto leaves dst untouched.
    Tensor t(Device::CPU());
    t.Resize(dims);
    void* out = t.raw_mutable_data(dtype);
    ReadElements(p, dtype, numel, out);
    *dst = std::move(t);
    return;
  }
  if (!(dst->device().is_cpu() && dst->shape() == dims && dst->dtype() == dtype && dst->initialized())) {
    // A fresh tensor for one chunk: the elements other chunks cover start as zeros, never as
    // whatever the heap held (strings are constructed empty).
    Tensor t(Device::CPU());
    t.Resize(dims);
    void* fresh = t.raw_mutable_data(dtype);
    if (dtype != DataType::String) std::memset(fresh, 0, t.nbytes());
    *dst = std::move(t);
  }
  auto* base = static_cast<char*>(dst->raw_mutable_data(dtype));
  ReadElements(p, dtype, end - begin, base + static_cast<size_t>(begin) * ItemSize(dtype));
}

Tensor TensorFromProto(const TensorProto& proto) {
  // One proto is one whole tensor here; a chunk (a segment short of the whole) has no values for
  // the rest (TensorFromBlobProtos reads all chunks).
  if (proto.has_segment()) {
    const int64_t numel = ProtoNumel(proto);
    HN_ENFORCE(proto.segment().begin() == 0 && proto.segment().end() == numel, Describe(proto),
               " is one chunk [", proto.segment().begin(), ", ", proto.segment().end(),
               ") of a chunked tensor of ", numel, " element(s), not a whole tensor");
  }
  Tensor t(Device::CPU());
  DeserializeTensorProtoInto(proto, &t);
  return t;
}

TensorProto TensorToProto(const Tensor& src, const std::string& name, int64_t begin, int64_t end) {
  HN_ENFORCE(src.dtype() != DataType::Undefined, "cannot serialize tensor '", name, "': it has no dtype");
  HN_CHECK_KIND(kUnsupported, !IsNarrowDataType(src.dtype()), "cannot serialize tensor '", name, "': caffe2.proto has no "
                "data_type for ", DataTypeName(src.dtype()), " (Cast it to a wider type first)");
  const Tensor host = src.device().is_cpu() ? src : src.To(Device::CPU());
  if (end < 0) end = host.numel();
  HN_ENFORCE(0 <= begin && begin <= end && end <= host.numel(), "cannot serialize elements [", begin, ", ",
             end, ") of tensor '", name, "' with ", host.numel(), " element(s)");
  TensorProto p;
  if (!name.empty()) p.set_name(name);
  for (int64_t d : host.shape()) p.add_dims(d);
  p.set_data_type(static_cast<TensorProto::DataType>(host.dtype()));
  if (begin != 0 || end != host.numel()) {
    p.mutable_segment()->set_begin(begin);
    p.mutable_segment()->set_end(end);
  }
  DeviceToOption(src.device(), p.mutable_device_detail());
  if (end == begin) return p;
  const char* base = static_cast<const char*>(host.raw_data()) + static_cast<size_t>(begin) * host.itemsize();
  const int64_t n = end - begin;
  DispatchDataType(host.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* d = reinterpret_cast<const T*>(base);
    if constexpr (std::is_same_v<T, float>) {
      p.mutable_float_data()->Add(d, d + n);
    } else if constexpr (std::is_same_v<T, double>) {
      p.mutable_double_data()->Add(d, d + n);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      p.mutable_int64_data()->Add(d, d + n);
    } else if constexpr (std::is_same_v<T, int32_t>) {
      p.mutable_int32_data()->Add(d, d + n);
    } else if constexpr (std::is_same_v<T, std::string>) {
      for (int64_t i = 0; i < n; ++i) p.add_string_data(d[i]);
    } else if constexpr (std::is_same_v<T, Half>) {
      p.mutable_int32_data()->Reserve(static_cast<int>(n));
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(d[i].bits);
    } else if constexpr (std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t> ||
                         std::is_same_v<T, BFloat16>) {  // hetnet's own types: little-endian raw_data
      p.set_raw_data(std::string(base, static_cast<size_t>(n) * sizeof(T)));
    } else if constexpr (std::is_same_v<T, uint8_t>) {
      if (host.dtype() == DataType::Byte) {  // Caffe2 reads BYTE from byte_data
        p.set_byte_data(std::string(base, static_cast<size_t>(n)));
      } else {
        for (int64_t i = 0; i < n; ++i) p.add_int32_data(d[i]);
      }
    } else {  // bool, int8, int16, uint16: int32_data as Caffe2 writes them
      p.mutable_int32_data()->Reserve(static_cast<int>(n));
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(static_cast<int32_t>(d[i]));
    }
  });
  return p;
}

caffe2::BlobProto TensorToBlobProto(const Tensor& t, const std::string& name) {
  caffe2::BlobProto b;
  b.set_name(name);
  b.set_type("Tensor");
  *b.mutable_tensor() = TensorToProto(t, name);
  return b;
}

std::vector<caffe2::BlobProto> TensorToChunkedBlobProtos(const Tensor& t, const std::string& name,
                                                         int64_t chunk_size) {
  HN_ENFORCE(chunk_size > 0, "chunk size must be positive, got ", chunk_size);
  const Tensor host = t.device().is_cpu() ? t : t.To(Device::CPU());
  std::vector<caffe2::BlobProto> out;
  int64_t begin = 0;
  do {
    const int64_t end = std::min(host.numel(), begin + chunk_size);
    caffe2::BlobProto b;
    b.set_name(name);
    b.set_type("Tensor");
    *b.mutable_tensor() = TensorToProto(host, name, begin, end);
    DeviceToOption(t.device(), b.mutable_tensor()->mutable_device_detail());  // where it lived, for keep_device
    if (!(begin == 0 && end == host.numel()) && !b.tensor().has_segment()) {
      b.mutable_tensor()->mutable_segment()->set_begin(begin);
      b.mutable_tensor()->mutable_segment()->set_end(end);
    }
    out.push_back(std::move(b));
    begin = end;
  } while (begin < host.numel());
  return out;
}

static const TensorProto& TensorOfBlob(const caffe2::BlobProto& blob) {
  HN_ENFORCE(blob.type().empty() || blob.type() == "Tensor", "blob '", blob.name(), "' holds type '",
             blob.type(), "', not a Tensor");
  HN_ENFORCE(blob.has_tensor(), "blob '", blob.name(), "' has no tensor field");
  return blob.tensor();
}

Tensor TensorFromBlobProto(const caffe2::BlobProto& blob) {
  const TensorProto& p = TensorOfBlob(blob);
  if (p.has_segment()) {
    const int64_t numel = ProtoNumel(p);
    HN_ENFORCE(p.segment().begin() == 0 && p.segment().end() == numel, "blob '", blob.name(),
               "' is one chunk [", p.segment().begin(), ", ", p.segment().end(), ") of a chunked tensor of ",
               numel, " element(s); read all chunks with TensorFromBlobProtos");
  }
  return TensorFromProto(p);
}

Tensor TensorFromBlobProtos(const std::vector<caffe2::BlobProto>& chunks) {
  HN_ENFORCE(!chunks.empty(), "no chunks given for a chunked tensor");
  std::vector<std::pair<int64_t, int64_t>> ranges;
  Tensor t(Device::CPU());
  const TensorProto& first = TensorOfBlob(chunks[0]);
  const int64_t total = ProtoNumel(first);
  // Every check before the first allocation: the chunks agree and cover the tensor exactly once,
  // and each holds its data (so a few small chunks cannot make us allocate a huge tensor).
  for (const auto& c : chunks) {
    const TensorProto& p = TensorOfBlob(c);
    HN_ENFORCE(p.data_type() == first.data_type() && p.dims_size() == first.dims_size() &&
                   std::equal(p.dims().begin(), p.dims().end(), first.dims().begin()),
               "chunk ", Describe(p), " of blob '", c.name(), "' disagrees with the first chunk ", Describe(first));
    const int64_t b = p.has_segment() ? p.segment().begin() : 0, e = p.has_segment() ? p.segment().end() : total;
    HN_ENFORCE(0 <= b && b <= e && e <= total, Describe(p), " has segment [", b, ", ", e, ") outside its ", total,
               " element(s)");
    CheckDataPresent(p, ProtoDataType(p), e - b);
    ranges.emplace_back(b, e);
  }
  std::sort(ranges.begin(), ranges.end());
  int64_t next = 0;
  for (const auto& r : ranges) {
    HN_ENFORCE(r.first == next, "chunks of blob '", chunks[0].name(), "' ",
               r.first < next ? "overlap" : "leave a gap", " at element ", std::min(next, r.first));
    next = r.second;
  }
  HN_ENFORCE(next == total, "chunks of blob '", chunks[0].name(), "' cover ", next, " of ", total, " element(s)");
  for (const auto& c : chunks) DeserializeTensorProtoInto(TensorOfBlob(c), &t);
  return t;
}

}  // namespace hetnet
