#include "core/blob.h"

#include <cxxabi.h>

#include <cstdlib>

namespace hetnet {

std::string DemangleTypeName(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : mangled;
  std::free(d);
  return out;
}

}  // namespace hetnet
