// Typed access to an OperatorDef's (or NetDef's) arguments with errors naming the argument.
#pragma once

#include <string>
#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet {

class ArgumentHelper {
 public:
  explicit ArgumentHelper(const caffe2::OperatorDef& def);
  explicit ArgumentHelper(const caffe2::NetDef& def);

  bool HasArgument(const std::string& name) const { return Find(name) != nullptr; }
  // Accepted T: float, double, bool, int, int64_t, std::string (and others convertible by rule).
  template <typename T>
  T GetSingleArgument(const std::string& name, const T& default_value) const;
  template <typename T>
  std::vector<T> GetRepeatedArgument(const std::string& name, const std::vector<T>& default_value = {}) const;
  const caffe2::Argument* Find(const std::string& name) const;

 private:
  const google::protobuf::RepeatedPtrField<caffe2::Argument>* args_;
  std::string owner_;  // "operator FC" / "net 'x'" for messages
};

}  // namespace hetnet
