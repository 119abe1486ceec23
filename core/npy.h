// NumPy .npy files (format versions 1, 2 and 3; little-endian numeric and bool dtypes, C order).
// Every failure is a kInvalidArgument naming the file (or source) and what is wrong.
#pragma once

#include <string>

#include "core/tensor.h"

namespace hetnet {

// True when bytes start with the .npy magic ("\x93NUMPY").
bool LooksLikeNpy(const std::string& bytes);

// A CPU tensor from .npy bytes; `source` names them in errors.
Tensor ParseNpy(const std::string& bytes, const std::string& source = "<npy>");
Tensor ReadNpy(const std::string& path);

// .npy bytes (version 1.0, or 2.0 when the header needs it). GPU tensors are copied to host.
// kInvalidArgument for dtypes .npy cannot hold here (strings).
std::string SerializeNpy(const Tensor& t);
void WriteNpy(const std::string& path, const Tensor& t);

}  // namespace hetnet
