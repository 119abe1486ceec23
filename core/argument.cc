#include "core/argument.h"

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/error.h"

namespace hetnet {

ArgumentHelper::ArgumentHelper(const caffe2::OperatorDef& def)
    : args_(&def.arg()), owner_("operator " + def.type()) {}
ArgumentHelper::ArgumentHelper(const caffe2::NetDef& def)
    : args_(&def.arg()), owner_("net '" + def.name() + "'") {}

const caffe2::Argument* ArgumentHelper::Find(const std::string& name) const {
  for (const auto& a : *args_)
    if (a.name() == name) return &a;
  return nullptr;
}

namespace {
[[noreturn]] void BadArg(const std::string& owner, const std::string& name, const char* want) {
  HN_THROW(kInvalidArgument, "argument '", name, "' of ", owner, " must be ", want);
}

// The int64 wire value range-checked into T: never truncated (stride=2^32+2 is an error, not 2).
// bool keeps Caffe2's reading (any nonzero value is true).
template <typename T>
T NarrowInt(int64_t v, const std::string& owner, const std::string& name, int index) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) {
    return static_cast<T>(v);
  } else {
    if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) || v > static_cast<int64_t>(std::numeric_limits<T>::max()))
      HN_THROW(kInvalidArgument, "argument '", name, "'", index >= 0 ? MakeString(" (value #", index, ")") : "",
               " of ", owner, " is ", v, ", outside the range of its ", sizeof(T) * 8, "-bit integer type [",
               static_cast<int64_t>(std::numeric_limits<T>::min()), ", ",
               static_cast<int64_t>(std::numeric_limits<T>::max()), "]");
    return static_cast<T>(v);
  }
}

template <typename T>
T IntArg(const caffe2::Argument& a, const std::string& owner) {
  if (!a.has_i()) BadArg(owner, a.name(), "an integer (field i)");
  return NarrowInt<T>(a.i(), owner, a.name(), -1);
}

template <typename T>
std::vector<T> IntsArg(const caffe2::Argument& a, const std::string& owner) {
  std::vector<T> out;
  out.reserve(static_cast<size_t>(a.ints_size()));
  for (int i = 0; i < a.ints_size(); ++i) out.push_back(NarrowInt<T>(a.ints(i), owner, a.name(), i));
  return out;
}
}  // namespace

#define HN_INT_ARG(T)                                                                       \
  template <>                                                                               \
  T ArgumentHelper::GetSingleArgument<T>(const std::string& name, const T& dflt) const {    \
    const auto* a = Find(name);                                                             \
    return a ? IntArg<T>(*a, owner_) : dflt;                                                \
  }                                                                                         \
  template <>                                                                               \
  std::vector<T> ArgumentHelper::GetRepeatedArgument<T>(const std::string& name,            \
                                                        const std::vector<T>& dflt) const { \
    const auto* a = Find(name);                                                             \
    if (!a) return dflt;                                                                    \
    if (a->floats_size() > 0) BadArg(owner_, name, "a list of integers (field ints)");      \
    return IntsArg<T>(*a, owner_);                                                          \
  }
HN_INT_ARG(int)
HN_INT_ARG(int64_t)
HN_INT_ARG(bool)
HN_INT_ARG(uint8_t)
HN_INT_ARG(int8_t)
HN_INT_ARG(int16_t)
HN_INT_ARG(uint16_t)
#undef HN_INT_ARG

#define HN_FLOAT_ARG(T)                                                                     \
  template <>                                                                               \
  T ArgumentHelper::GetSingleArgument<T>(const std::string& name, const T& dflt) const {    \
    const auto* a = Find(name);                                                             \
    if (!a) return dflt;                                                                    \
    if (a->has_f()) return static_cast<T>(a->f());                                          \
    if (a->has_i()) return static_cast<T>(a->i()); /* Python writes 1 for 1.0 */            \
    BadArg(owner_, name, "a number (field f)");                                             \
  }                                                                                         \
  template <>                                                                               \
  std::vector<T> ArgumentHelper::GetRepeatedArgument<T>(const std::string& name,            \
                                                        const std::vector<T>& dflt) const { \
    const auto* a = Find(name);                                                             \
    if (!a) return dflt;                                                                    \
    if (a->ints_size() > 0 && a->floats_size() == 0)                                        \
      return std::vector<T>(a->ints().begin(), a->ints().end());                            \
    return std::vector<T>(a->floats().begin(), a->floats().end());                          \
  }
HN_FLOAT_ARG(float)
HN_FLOAT_ARG(double)
#undef HN_FLOAT_ARG

template <>
std::string ArgumentHelper::GetSingleArgument<std::string>(const std::string& name,
                                                           const std::string& dflt) const {
  const auto* a = Find(name);
  if (!a) return dflt;
  if (!a->has_s()) BadArg(owner_, name, "a string (field s)");
  return a->s();
}

template <>
std::vector<std::string> ArgumentHelper::GetRepeatedArgument<std::string>(
    const std::string& name, const std::vector<std::string>& dflt) const {
  const auto* a = Find(name);
  if (!a) return dflt;
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

}  // namespace hetnet
