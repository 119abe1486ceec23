#include "serving/status_map.h"

namespace hetnet::serving {

std::string ClientMessage(const Error& e) {
  std::string text = e.message();
  for (const auto& c : e.context()) text += "; " + c;
  return text;
}

}  // namespace hetnet::serving
