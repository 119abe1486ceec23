// Helpers for the [io] tests: a hand encoder for the protobuf wire format (so tests prove the
// field numbers byte by byte instead of trusting generated code), temporary directories, and
// running the hetnet command line.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "proto/caffe2.pb.h"

namespace hetnet_test {

namespace wire {
inline std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
inline std::string Tag(int field, int wire_type) { return Varint((static_cast<uint64_t>(field) << 3) | wire_type); }
// Varint field (wire type 0). Negative int32/int64 are sign-extended to 64 bits as protobuf does.
inline std::string VarintField(int field, int64_t v) { return Tag(field, 0) + Varint(static_cast<uint64_t>(v)); }
inline std::string Bytes(int field, const std::string& payload) {
  return Tag(field, 2) + Varint(payload.size()) + payload;
}
inline std::string Fixed32Raw(float f) {
  char b[4];
  std::memcpy(b, &f, 4);  // this machine is little-endian, as the wire format is
  return std::string(b, 4);
}
inline std::string Fixed64Raw(double d) {
  char b[8];
  std::memcpy(b, &d, 8);
  return std::string(b, 8);
}
inline std::string FloatField(int field, float f) { return Tag(field, 5) + Fixed32Raw(f); }
inline std::string PackedFloats(int field, const std::vector<float>& v) {
  std::string p;
  for (float f : v) p += Fixed32Raw(f);
  return Bytes(field, p);
}
inline std::string PackedDoubles(int field, const std::vector<double>& v) {
  std::string p;
  for (double d : v) p += Fixed64Raw(d);
  return Bytes(field, p);
}
inline std::string PackedVarints(int field, const std::vector<int64_t>& v) {
  std::string p;
  for (int64_t x : v) p += Varint(static_cast<uint64_t>(x));
  return Bytes(field, p);
}
}  // namespace wire

// A fresh directory under /tmp, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/hetnet_io_test_XXXXXX";
    const char* p = mkdtemp(tmpl);
    path_ = p ? p : "/tmp";
  }
  ~TempDir() {
    std::error_code ec;
    if (path_ != "/tmp") std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  std::string Write(const std::string& name, const std::string& bytes) const {
    std::ofstream(File(name), std::ios::binary) << bytes;
    return File(name);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a shell command line, capturing stdout and stderr separately (stderr through a file).
inline CommandResult RunCommand(const std::string& cmd, const TempDir& dir) {
  CommandResult r;
  const std::string err_file = dir.File("stderr.txt");
  FILE* pipe = popen((cmd + " 2>" + err_file).c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = Slurp(err_file);
  return r;
}

// ---- small NetDef builders ----
inline caffe2::OperatorDef* AddOp(caffe2::NetDef* net, const std::string& type, std::vector<std::string> ins,
                                  std::vector<std::string> outs) {
  auto* op = net->add_op();
  op->set_type(type);
  for (auto& i : ins) op->add_input(i);
  for (auto& o : outs) op->add_output(o);
  return op;
}
inline void AddFill(caffe2::NetDef* net, const std::string& out, std::vector<int64_t> shape,
                    std::vector<float> values) {
  auto* op = AddOp(net, "GivenTensorFill", {}, {out});
  auto* s = op->add_arg();
  s->set_name("shape");
  for (auto d : shape) s->add_ints(d);
  auto* v = op->add_arg();
  v->set_name("values");
  for (auto x : values) v->add_floats(x);
}
// Init net with FC weights w [3, 4] and bias b [3]; predict net data -> FC -> Relu -> Softmax -> prob.
inline void MakeMlp(caffe2::NetDef* init, caffe2::NetDef* predict) {
  init->set_name("mlp_init");
  AddFill(init, "w", {3, 4}, {0.5f, -1, 0.25f, 2, -0.5f, 1, 1, -1, 0.1f, 0.2f, -0.3f, 0.4f});
  AddFill(init, "b", {3}, {0.1f, -0.2f, 0.3f});
  predict->set_name("mlp");
  for (const char* n : {"data", "w", "b"}) predict->add_external_input(n);
  predict->add_external_output("prob");
  AddOp(predict, "FC", {"data", "w", "b"}, {"fc"});
  AddOp(predict, "Relu", {"fc"}, {"relu"});
  AddOp(predict, "Softmax", {"relu"}, {"prob"});
}
inline hetnet::Tensor FloatTensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  hetnet::Tensor t(std::move(shape), hetnet::DataType::Float);
  std::copy(values.begin(), values.end(), t.mutable_data<float>());
  return t;
}
inline std::vector<float> Values(const hetnet::Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

}  // namespace hetnet_test
