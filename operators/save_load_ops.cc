#include "operators/save_load_ops.h"

#include <set>

#include "core/checked_size.h"
#include "core/gradient.h"
#include "core/minidb.h"
#include "core/tensor_proto.h"

namespace hetnet {

namespace {

std::string DbPath(const caffe2::OperatorDef& def) {
  ArgumentHelper a(def);
  const std::string db = a.GetSingleArgument<std::string>("db", "");
  HN_ENFORCE(!db.empty(), def.type(), ": argument db (the file) is required");
  EnforceNoNul(db, (def.type() + ": argument db (the file path)").c_str());
  const std::string type = a.GetSingleArgument<std::string>("db_type", "minidb");
  HN_CHECK_KIND(kUnsupported, type == "minidb", def.type(), ": db_type '", type, "' is not supported (only minidb)");
  return db;
}

std::string StripPrefix(const std::string& name, const std::string& prefix) {
  if (!prefix.empty() && name.compare(0, prefix.size(), prefix) == 0) return name.substr(prefix.size());
  return name;
}

}  // namespace

void SaveBlobs(const caffe2::OperatorDef& def, const std::vector<const Blob*>& blobs) {
  ArgumentHelper a(def);
  const std::string path = DbPath(def);
  const std::string strip = a.GetSingleArgument<std::string>("strip_prefix", "");
  const std::vector<std::string> overrides = a.GetRepeatedArgument<std::string>("blob_name_overrides");
  const int64_t chunk = a.GetSingleArgument<int64_t>("chunk_size", 1000000);
  HN_ENFORCE(overrides.empty() || overrides.size() == blobs.size(), "Save: blob_name_overrides has ", overrides.size(),
             " names for ", blobs.size(), " inputs");
  std::set<std::string> names;
  std::vector<std::string> keys;
  for (size_t i = 0; i < blobs.size(); ++i) {
    const std::string name = overrides.empty() ? StripPrefix(def.input(static_cast<int>(i)), strip) : overrides[i];
    EnforceNoNul(name, "Save: blob name");
    HN_ENFORCE(names.insert(name).second, "Save: two inputs are saved under the name '", name, "'");
    const Blob* b = blobs[i];
    HN_CHECK_KIND(kNotFound, !b->empty(), "Save: input ", i, " ('", def.input(static_cast<int>(i)), "') has no data");
    HN_ENFORCE(b->IsTensor(), "Save: input ", i, " ('", def.input(static_cast<int>(i)), "') holds ", b->TypeName(),
               "; only tensors can be saved");
    keys.push_back(name);
  }
  MiniDBWriter db(path);
  for (size_t i = 0; i < blobs.size(); ++i) {
    const Tensor& t = blobs[i]->GetTensor();
    HN_ENFORCE(t.initialized(), "Save: input ", i, " ('", def.input(static_cast<int>(i)), "') has no data");
    auto chunks = TensorToChunkedBlobProtos(t, keys[i], chunk);
    for (size_t c = 0; c < chunks.size(); ++c) {
      std::string bytes;
      chunks[c].SerializeToString(&bytes);
      db.Put(MiniDBChunkKey(keys[i], static_cast<int64_t>(c)), bytes);
    }
  }
  db.Close();
}

std::map<std::string, Tensor> LoadTensors(const caffe2::OperatorDef& def, const std::vector<std::string>& wanted,
                                          std::map<std::string, Device>* stored_devices) {
  ArgumentHelper a(def);
  const std::string path = DbPath(def);
  const std::string strip = a.GetSingleArgument<std::string>("strip_prefix", "");
  const std::string add = a.GetSingleArgument<std::string>("add_prefix", "");
  const std::set<std::string> want(wanted.begin(), wanted.end());
  std::map<std::string, std::vector<caffe2::BlobProto>> chunks;
  for (auto& [key, value] : ReadMiniDB(path)) {
    const std::string name = add + StripPrefix(ParseMiniDBKey(key).first, strip);
    if (HasNul(name)) HN_THROW(kInvalidArgument, "Load: record '", PrintableName(key), "' of '", path,
                               "' names a blob with a NUL byte (names may not contain NUL)");
    if (!want.empty() && !want.count(name)) continue;
    caffe2::BlobProto proto;
    HN_ENFORCE(proto.ParseFromString(value), "Load: record '", key, "' of '", path, "' is not a BlobProto");
    chunks[name].push_back(std::move(proto));
  }
  std::map<std::string, Tensor> out;
  for (auto& [name, list] : chunks) {
    try {
      out[name] = TensorFromBlobProtos(list);
    } catch (Error& e) {
      throw e.AddContext(MakeString("loading blob '", name, "' from '", path, "'"));
    }
    const auto& p = list[0].tensor();
    (*stored_devices)[name] = p.has_device_detail() ? DeviceFromOption(p.device_detail()) : Device::CPU();
  }
  return out;
}

OPERATOR_SCHEMA(Save).NumInputs(1, 1 << 30).NumOutputs(0)
    .DeviceInference([](const caffe2::OperatorDef& def, Device d) {
      return std::make_pair(std::vector<Device>(def.input_size(), d), std::vector<Device>());
    })
    .SetDoc("Saves the input blobs to a minidb file (args db, db_type, strip_prefix, blob_name_overrides, chunk_size).");
OPERATOR_SCHEMA(Load).NumInputs(0).NumOutputs(0, 1 << 30)
    .SetDoc("Loads blobs from a minidb file (args db, db_type, load_all, keep_device, source_blob_names, add_prefix, "
            "strip_prefix, allow_incomplete).");
REGISTER_CPU_OPERATOR(Save, SaveOp<CPUContext>);
REGISTER_CPU_OPERATOR(Load, LoadOp<CPUContext>);
NO_GRADIENT(Save);
NO_GRADIENT(Load);

}  // namespace hetnet
