#include "serving/auth.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace hetnet::serving {

std::string ReadAuthToken(const std::string& path) {
  std::ifstream f(path);
  if (!f) HN_THROW(kInvalidArgument, "cannot read --auth-token-file '", path, "'");
  std::string line;
  std::getline(f, line);
  const char* ws = " \t\r\n";
  size_t b = line.find_first_not_of(ws), e = line.find_last_not_of(ws);
  if (b == std::string::npos) HN_THROW(kInvalidArgument, "--auth-token-file '", path, "' holds no token");
  return line.substr(b, e - b + 1);
}

bool AuthorizationMatches(const std::string& expected_token, std::string_view authorization) {
  if (expected_token.empty()) return true;
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() != kBearer.size() + expected_token.size() ||
      authorization.substr(0, kBearer.size()) != kBearer)
    return false;
  unsigned char diff = 0;  // constant time in the token's length
  for (size_t i = 0; i < expected_token.size(); ++i)
    diff |= static_cast<unsigned char>(authorization[kBearer.size() + i] ^ expected_token[i]);
  return diff == 0;
}

}  // namespace hetnet::serving
