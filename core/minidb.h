// minidb: Caffe2's simplest database, a file of records, each
//   int32 key_len | int32 value_len | key bytes | value bytes      (native little-endian)
// written in order. Save/Load store one serialized BlobProto per record, keyed `<blob>#%<chunk id>`
// (Caffe2's chunk key). Files written here load in Caffe2's minidb and the other way round.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace hetnet {

class MiniDBWriter {
 public:
  // Truncates or creates `path`; kRuntime naming the file on failure.
  explicit MiniDBWriter(const std::string& path);
  ~MiniDBWriter();
  MiniDBWriter(const MiniDBWriter&) = delete;
  MiniDBWriter& operator=(const MiniDBWriter&) = delete;
  void Put(const std::string& key, const std::string& value);
  void Close();  // flushes; errors (a full disk) are thrown here

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

// All records of a minidb file in file order. kNotFound for a missing file, kInvalidArgument for a
// truncated or corrupt one (naming the file and the record).
std::vector<std::pair<std::string, std::string>> ReadMiniDB(const std::string& path);

// Chunk key helpers: "w#%3" -> ("w", 3); a key without "#%" is the whole blob ("w", -1).
std::string MiniDBChunkKey(const std::string& blob, int64_t chunk_id);
std::pair<std::string, int64_t> ParseMiniDBKey(const std::string& key);

}  // namespace hetnet
