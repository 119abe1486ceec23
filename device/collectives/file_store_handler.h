// A store in a shared directory (Caffe2's FileStoreHandler, distributed-facts §1.5): for tests and
// prototypes on one host or a shared file system (NFS). Layout as Caffe2's: base = realpath(path),
// plus a subdirectory named by the hash of `prefix` when one is given; each key is a file named by
// the hash of the key, written to a ".<hash>" temp file and renamed into place, so readers see a
// key whole or not at all.
//
// Beyond Caffe2 (which aborted the process in add/getNumKeys/deleteKey): Set (set-once check), Add
// and DeleteKey run under an flock(2) on "<base>/.lock", so they are atomic across processes.
#pragma once

#include <string>

#include "device/collectives/store_handler.h"

namespace hetnet {

class FileStoreHandler final : public StoreHandler {
 public:
  // `path` must be an existing directory (kNotFound otherwise).
  FileStoreHandler(const std::string& path, const std::string& prefix = "");

  void Set(const std::string& name, const std::string& data) override;
  std::string Get(const std::string& name, std::chrono::milliseconds timeout = kDefaultTimeout) override;
  int64_t Add(const std::string& name, int64_t value) override;
  int64_t GetNumKeys() override;
  bool DeleteKey(const std::string& name) override;
  bool Check(const std::vector<std::string>& names) override;
  void Wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout = kDefaultTimeout) override;
  std::string Describe() const override;

  const std::string& base_path() const { return base_; }

 private:
  std::string ObjectPath(const std::string& name) const;
  std::string TempPath(const std::string& name) const;
  void WriteAtomically(const std::string& name, const std::string& data) const;

  std::string base_;
  std::string prefix_;
};

// Caffe2's file name for a key: hex of MurmurHash3_x64_128(key, seed 0xcafef00d).
std::string FileStoreEncodeName(const std::string& name);

}  // namespace hetnet
