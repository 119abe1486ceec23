#include "core/proto_io.h"
#include "core/proto_parse_bound.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include <sys/stat.h>

#include "core/checked_size.h"
#include "core/error.h"

namespace hetnet {

namespace {

// Collects text-format parse errors instead of letting protobuf print them to stderr.
class CollectingErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (first_.empty()) first_ = MakeString("line ", line + 1, ", column ", column + 1, ": ", message);
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

// Text format is only plausible for printable data; binary garbage would otherwise yield odd messages.
bool LooksLikeText(const std::string& data) {
  for (unsigned char c : data)
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) return false;
  return true;
}

}  // namespace

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    if (err == ENOENT) HN_THROW(kNotFound, "file '", path, "' does not exist");
    HN_THROW(kRuntime, "cannot open file '", path, "': ", std::strerror(err));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) HN_THROW(kRuntime, "error while reading file '", path, "'");
  return ss.str();
}

void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) HN_THROW(kRuntime, "cannot open file '", path, "' for writing: ", std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) HN_THROW(kRuntime, "error while writing file '", path, "'");
}

void CheckProtoParseMemory(const std::string& data, const google::protobuf::Descriptor* type,
                           const std::string& source) {
  google::protobuf::io::ArrayInputStream wire(data.data(), static_cast<int>(std::min<size_t>(data.size(), INT32_MAX)));
  // Also when the walk fails: a parse allocates up to the fault before it gives up.
  const ParseBound bound = BoundParsedSize(type, &wire, data.size(), ProtoDepthCap());
  CheckLimit(Limit::kMaxProtoParseBytes, static_cast<int64_t>(std::min<uint64_t>(bound.bytes, INT64_MAX)),
             MakeString("the memory to parse '", source, "' (", data.size(), " bytes) as ", type->full_name()));
}

int ProtoDepthCap() { return static_cast<int>(std::min<int64_t>(GetLimit(Limit::kMaxProtoDepth), 1 << 20)); }

namespace {

// The size caps, checked before any parsing.
void CheckProtoSize(const std::string& data, const std::string& expected, const std::string& source) {
  if (data.empty()) HN_THROW(kInvalidArgument, "'", source, "' is empty; expected a serialized ", expected);
  CheckLimit(Limit::kMaxProtoBytes, static_cast<int64_t>(data.size()), "'" + source + "'");
  HN_ENFORCE(data.size() <= static_cast<size_t>(INT32_MAX), "'", source, "' (", data.size(),
             " bytes) is over protobuf's 2 GiB message limit");
}

// Text format into msg (left as it was on failure); *problem says why not. Throws when the parse
// could take more memory than the proto-parse-memory cap.
bool ParseText(const std::string& data, google::protobuf::Message* msg, std::string* problem,
               const std::string& source) {
  const uint64_t bound = BoundTextParsedSize(msg->GetDescriptor(), data);
  CheckLimit(Limit::kMaxProtoParseBytes, static_cast<int64_t>(std::min<uint64_t>(bound, INT64_MAX)),
             MakeString("the memory to parse '", source, "' (", data.size(), " bytes) as ",
                        msg->GetDescriptor()->full_name(), " in text format"));
  const int depth = ProtoDepthCap();
  auto text_msg = std::unique_ptr<google::protobuf::Message>(msg->New());
  google::protobuf::TextFormat::Parser parser;
  parser.SetRecursionLimit(depth);
  CollectingErrors errors;
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(data, text_msg.get())) {
    msg->CopyFrom(*text_msg);
    return true;
  }
  *problem = errors.first().empty() ? "parse failed" : errors.first();
  if (errors.first().find("recursion limit") != std::string::npos)
    *problem += MakeString("; messages nest deeper than the ", LimitName(Limit::kMaxProtoDepth), " of ", depth,
                           " (raise it with the environment variable ", LimitEnvVar(Limit::kMaxProtoDepth),
                           "=<n> or hetnet::SetLimit)");
  return false;
}

}  // namespace

void ParseProtoFromString(const std::string& data, google::protobuf::Message* msg, const std::string& source) {
  const std::string expected = msg->GetTypeName();
  CheckProtoSize(data, expected, source);
  CheckProtoParseMemory(data, msg->GetDescriptor(), source);
  // Binary first (Caffe2 order), into a message of its own so that what a failed parse allocated
  // goes with it. Parse partially so missing required fields get a precise message.
  msg->Clear();
  std::string binary_problem;
  bool binary_ok = false;
  std::unique_ptr<google::protobuf::Message> binary(msg->New());
  google::protobuf::io::ArrayInputStream array(data.data(), static_cast<int>(data.size()));
  google::protobuf::io::CodedInputStream coded(&array);
  coded.SetRecursionLimit(ProtoDepthCap());
  if (binary->MergePartialFromCodedStream(&coded) && coded.ConsumedEntireMessage()) {
    binary_ok = binary->IsInitialized();
    // A printable text file can occasionally scan as binary made only of unknown fields: such a
    // result is kept only if the text parse below fails.
    if (binary_ok && binary->GetReflection()->GetUnknownFields(*binary).empty()) {
      msg->GetReflection()->Swap(msg, binary.get());
      return;
    }
    if (!binary_ok) binary_problem = "binary parse is missing required field(s) " + binary->InitializationErrorString();
  } else {
    binary_problem = "not valid binary protobuf (truncated or corrupt)";
  }
  if (!binary_ok) binary.reset();
  std::string text_problem = "not text format either (contains binary bytes)";
  if (LooksLikeText(data)) {
    std::string why;
    if (ParseText(data, msg, &why, source)) return;
    text_problem = "not text format either (" + why + ")";
  }
  if (binary_ok) {
    msg->GetReflection()->Swap(msg, binary.get());
    return;
  }
  msg->Clear();
  HN_THROW(kInvalidArgument, "could not parse '", source, "' (", data.size(), " bytes) as ", expected, ": ",
           binary_problem, "; ", text_problem);
}

void ParseTextProtoFromString(const std::string& data, google::protobuf::Message* msg, const std::string& source) {
  const std::string expected = msg->GetTypeName();
  CheckProtoSize(data, expected, source);
  msg->Clear();
  std::string why;
  if (!ParseText(data, msg, &why, source))
    HN_THROW(kInvalidArgument, "could not parse '", source, "' (", data.size(), " bytes) as ", expected,
             " in text format: ", why);
}

void ReadProtoFromFile(const std::string& path, google::protobuf::Message* msg) {
  EnforceNoNul(path, "file path");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))  // the cap before reading anything
    CheckLimit(Limit::kMaxProtoBytes, static_cast<int64_t>(st.st_size), "file '" + path + "'");
  ParseProtoFromString(ReadFileBytes(path), msg, path);
}

std::string SerializeProto(const google::protobuf::Message& msg, bool text) {
  std::string out;
  if (text) {
    HN_CHECK_KIND(kRuntime, google::protobuf::TextFormat::PrintToString(msg, &out), "cannot print ",
                  msg.GetTypeName(), " as text");
  } else {
    HN_CHECK_KIND(kInvalidArgument, msg.IsInitialized(), "cannot serialize ", msg.GetTypeName(),
                  ": missing required field(s) ", msg.InitializationErrorString());
    HN_CHECK_KIND(kRuntime, msg.SerializeToString(&out), "cannot serialize ", msg.GetTypeName(),
                  " (", msg.ByteSizeLong(), " bytes; protobuf messages are limited to 2 GiB)");
  }
  return out;
}

void WriteProtoToFile(const std::string& path, const google::protobuf::Message& msg, bool text) {
  WriteFileBytes(path, SerializeProto(msg, text));
}

caffe2::NetDef ReadNetDef(const std::string& path) {
  caffe2::NetDef m;
  ReadProtoFromFile(path, &m);
  return m;
}
caffe2::TensorProto ReadTensorProto(const std::string& path) {
  caffe2::TensorProto m;
  ReadProtoFromFile(path, &m);
  return m;
}
caffe2::TensorProtos ReadTensorProtos(const std::string& path) {
  caffe2::TensorProtos m;
  ReadProtoFromFile(path, &m);
  return m;
}
caffe2::BlobProto ReadBlobProto(const std::string& path) {
  caffe2::BlobProto m;
  ReadProtoFromFile(path, &m);
  return m;
}

}  // namespace hetnet
