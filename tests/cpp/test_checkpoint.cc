// minidb (core/minidb.h) and the Save/Load operators: record format, Caffe2 chunk keys, round trips
// of every common dtype, chunked tensors, load_all into a fresh workspace, errors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include "core/minidb.h"
#include "core/proto_io.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hetnet_ckpt_" + std::to_string(::getpid()) + "_" + name)).string();
}
}  // namespace

TEST_CASE("minidb: records are int32 key_len, int32 value_len, key, value", "[checkpoint]") {
  const std::string path = TempPath("raw.minidb");
  {
    MiniDBWriter w(path);
    w.Put("a", "xyz");
    w.Put("bb", "");
    w.Close();
  }
  const std::string bytes = ReadFileBytes(path);
  REQUIRE(bytes.size() == 8 + 1 + 3 + 8 + 2);
  int32_t klen, vlen;
  std::memcpy(&klen, bytes.data(), 4);
  std::memcpy(&vlen, bytes.data() + 4, 4);
  CHECK(klen == 1);
  CHECK(vlen == 3);
  CHECK(bytes.substr(8, 4) == "axyz");
  auto recs = ReadMiniDB(path);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0] == std::make_pair(std::string("a"), std::string("xyz")));
  CHECK(recs[1] == std::make_pair(std::string("bb"), std::string("")));
  WriteFileBytes(path, bytes.substr(0, bytes.size() - 1));
  CHECK_THROWS_WITH(ReadMiniDB(path), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(ReadMiniDB(TempPath("missing")), Catch::Contains("cannot open"));
  CHECK(ParseMiniDBKey("w#%12") == std::make_pair(std::string("w"), int64_t{12}));
  CHECK(ParseMiniDBKey("plain") == std::make_pair(std::string("plain"), int64_t{-1}));
  std::remove(path.c_str());
}

TEST_CASE("Save/Load round trip: dtypes, chunks, overrides, load_all", "[checkpoint]") {
  const std::string path = TempPath("rt.minidb");
  Workspace ws;
  const auto big = RandomVec(1000, 9);
  Feed<float>(ws, "scope/big", {10, 100}, big);
  Feed<int64_t>(ws, "it", {1}, {42});
  Feed<int32_t>(ws, "ints", {2, 2}, {1, -2, 3, -4});
  Feed<double>(ws, "d", {}, {3.5});
  RunOp(ws, MakeOp("Save", {"scope/big", "it", "ints", "d"}, {},
                   {ArgS("db", path), ArgS("db_type", "minidb"), ArgI("chunk_size", 300), ArgS("strip_prefix", "scope/")}));
  std::vector<std::string> keys;
  for (auto& kv : ReadMiniDB(path)) keys.push_back(kv.first);
  CHECK(keys == std::vector<std::string>{"big#%0", "big#%1", "big#%2", "big#%3", "it#%0", "ints#%0", "d#%0"});

  Workspace fresh;
  RunOp(fresh, MakeOp("Load", {}, {}, {ArgS("db", path), ArgI("load_all", 1)}));
  CHECK(FetchVec<float>(fresh, "big") == big);
  CHECK(Fetch(fresh, "big").shape() == std::vector<int64_t>{10, 100});
  CHECK(FetchVec<int64_t>(fresh, "it") == std::vector<int64_t>{42});
  CHECK(FetchVec<int32_t>(fresh, "ints") == std::vector<int32_t>{1, -2, 3, -4});
  CHECK(Fetch(fresh, "d").ndim() == 0);
  CHECK(FetchVec<double>(fresh, "d") == std::vector<double>{3.5});

  Workspace named;
  RunOp(named, MakeOp("Load", {}, {"x", "y"}, {ArgS("db", path), ArgStrings("source_blob_names", {"it", "ints"})}));
  CHECK(FetchVec<int64_t>(named, "x") == std::vector<int64_t>{42});
  CHECK_THROWS_WITH(RunOp(named, MakeOp("Load", {}, {"nope"}, {ArgS("db", path)})), Catch::Contains("'nope'"));
  RunOp(named, MakeOp("Load", {}, {"nope", "it"}, {ArgS("db", path), ArgI("allow_incomplete", 1)}));
  CHECK(FetchVec<int64_t>(named, "it") == std::vector<int64_t>{42});

  RunOp(ws, MakeOp("Save", {"it", "ints"}, {}, {ArgS("db", path), ArgStrings("blob_name_overrides", {"a", "b"})}));
  Workspace over;
  RunOp(over, MakeOp("Load", {}, {"a", "b"}, {ArgS("db", path)}));
  CHECK(FetchVec<int64_t>(over, "a") == std::vector<int64_t>{42});
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Save", {"it"}, {}, {ArgS("db", path), ArgS("db_type", "lmdb")})),
                    Catch::Contains("db_type 'lmdb'"));
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Load", {}, {"x"}, {ArgS("db", path), ArgI("load_all", 1)})),
                    Catch::Contains("load_all"));
  std::remove(path.c_str());
}

TEST_CASE("GPU: Save reads GPU tensors, Load with keep_device restores them to the GPU", "[gpu][checkpoint]") {
  if (SkipWithoutGpu()) return;
  const std::string path = TempPath("gpu.minidb");
  Workspace ws;
  Feed<float>(ws, "w", {3}, {1, 2, 3}, Device::CUDA(0));
  RunOp(ws, MakeOp("Save", {"w"}, {}, {ArgS("db", path)}, Device::CUDA(0)));
  Workspace fresh;
  RunOp(fresh, MakeOp("Load", {}, {"w"}, {ArgS("db", path), ArgI("keep_device", 1)}));
  CHECK(fresh.GetBlob("w")->GetTensor().device() == Device::CUDA(0));
  CHECK(FetchVec<float>(fresh, "w") == std::vector<float>{1, 2, 3});
  std::remove(path.c_str());
}
