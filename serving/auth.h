// Bearer-token check shared by the HTTP and gRPC front ends (--auth-token-file).
#pragma once

#include <string>
#include <string_view>

namespace hetnet::serving {

// Reads the token (first line, surrounding whitespace removed); throws kInvalidArgument if the file
// cannot be read or is empty.
std::string ReadAuthToken(const std::string& path);
// True when `authorization` is "Bearer <token>" for the expected token (compared in constant time).
// An empty expected token means auth is off.
bool AuthorizationMatches(const std::string& expected_token, std::string_view authorization);

}  // namespace hetnet::serving
