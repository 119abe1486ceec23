#include "operators/print_op.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <type_traits>

#include "core/gradient.h"
#include "core/half.h"

namespace hetnet {

namespace {
template <typename T>
void AppendValues(std::ostringstream& os, const Tensor& t, int64_t n) {
  const T* p = t.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    if (i) os << ", ";
    if constexpr (std::is_same<T, Half>::value) os << HalfToFloat(p[i]);
    else if constexpr (std::is_same<T, BFloat16>::value) os << BFloat16ToFloat(p[i]);
    else if constexpr (sizeof(T) == 1 && !std::is_same<T, bool>::value) os << static_cast<int>(p[i]);
    else os << p[i];
  }
}
}  // namespace

std::string TensorSummary(const std::string& name, const Tensor& host, int64_t limit) {
  std::ostringstream os;
  os.precision(7);
  os << name << " (" << DataTypeName(host.dtype()) << " " << host.ShapeString() << "): ";
  const int64_t n = std::min<int64_t>(host.numel(), limit);
  switch (host.dtype()) {
#define HN_PRINT_CASE(T, V)       \
  case DataType::V:               \
    AppendValues<T>(os, host, n); \
    break;
    HN_FOR_EACH_POD_TYPE(HN_PRINT_CASE)
#undef HN_PRINT_CASE
    case DataType::String: {
      const std::string* p = host.data<std::string>();
      for (int64_t i = 0; i < n; ++i) os << (i ? ", " : "") << '"' << p[i] << '"';
      break;
    }
    case DataType::Byte:
      AppendValues<uint8_t>(os, host, n);
      break;
    default:
      os << "(values of this dtype are not shown)";
  }
  if (n < host.numel()) os << ", ... (" << host.numel() - n << " more)";
  return os.str();
}

void EmitPrintLine(const caffe2::OperatorDef& def, const std::string& line, bool to_file) {
  if (!to_file) {
    std::cout << line << std::endl;
    return;
  }
  std::string file = def.input(0);
  for (char& c : file)
    if (c == '/' || c == '\\') c = '_';
  file += ".log";
  std::ofstream out(file, std::ios::app);
  HN_CHECK_KIND(kRuntime, out.good(), "Print: cannot open '", file, "' for blob '", def.input(0), "' (to_file=1)");
  out << line << "\n";
  HN_CHECK_KIND(kRuntime, out.good(), "Print: writing '", file, "' for blob '", def.input(0), "' failed");
}

OPERATOR_SCHEMA(Print)
    .NumInputs(1)
    .NumOutputs(0)
    .SetDoc("Print(tensor): prints blob name, dtype, shape and the first `limit` values (0 = 1000) to stdout every "
            "`every_n` runs (default 1); to_file=1 appends to '<blob>.log' in the current directory instead "
            "(refused in served nets: it touches files). No gradient.");
NO_GRADIENT(Print);
REGISTER_CPU_OPERATOR(Print, PrintOp<CPUContext>);

}  // namespace hetnet
