// A minidb file (what `Load` and hetnet.checkpoint read): the raw record reader, then the Load
// operator (load_all) in a fresh workspace, which parses each record as a BlobProto and reassembles
// chunked tensors. The file lives in /dev/shm (or $TMPDIR) and is rewritten for every input.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "core/minidb.h"
#include "core/proto_io.h"
#include "core/tensor_proto.h"
#include "core/workspace.h"
#include "fuzz/fuzz_common.h"

static const std::string& DbPath() {
  static const std::string path = [] {
    const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    std::string p = std::string(dir) + "/hetnet_fuzz_minidb_" + std::to_string(getpid()) + ".minidb";
    static std::string at_exit;
    at_exit = p;
    std::atexit([] { std::remove(at_exit.c_str()); });
    return p;
  }();
  return path;
}

static void Run(const uint8_t* data, size_t size) {
  const std::string& path = DbPath();
  hetnet::WriteFileBytes(path, hetnet_fuzz::Bytes(data, size));
  try {
    auto records = hetnet::ReadMiniDB(path);
    for (size_t i = 0; i < records.size() && i < 64; ++i) {
      (void)hetnet::ParseMiniDBKey(records[i].first);
      caffe2::BlobProto b;
      if (!b.ParseFromString(records[i].second)) continue;
      try {
        (void)hetnet::TensorFromBlobProto(b);
      } catch (const hetnet::Error&) {
      }
    }
  } catch (const hetnet::Error&) {
  }
  hetnet::Workspace ws;
  caffe2::OperatorDef load;
  load.set_type("Load");
  auto* a = load.add_arg();
  a->set_name("db");
  a->set_s(path);
  a = load.add_arg();
  a->set_name("db_type");
  a->set_s("minidb");
  a = load.add_arg();
  a->set_name("load_all");
  a->set_i(1);
  ws.RunOperatorOnce(load);
}

HETNET_FUZZ_ENTRY(Run)
