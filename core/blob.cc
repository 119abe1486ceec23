#include "core/blob.h"

#include <cxxabi.h>

#include <cstdlib>

namespace hetnet {

std::string DemangleTypeName(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : mangled;
  std::free(d);
  // Caffe2's name for string blobs (BlobProto.type "std::string"), not libstdc++'s spelling.
  if (out == "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >" ||
      out == "std::basic_string<char, std::char_traits<char>, std::allocator<char> >")
    return "std::string";
  return out;
}

}  // namespace hetnet
