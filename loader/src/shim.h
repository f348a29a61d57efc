// kernelgate's stand-in for PyTorch's <torch/extension.h>, written into the cache and put first
// on the cuda kind's include path. Private to the loader.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kg::loader::shim {

// (path relative to the shim directory, text) for each file of the shim.
const std::vector<std::pair<std::string, std::string>>& files();

// A digest of all the files: names the shim directory and goes into the build identity.
std::string digest();

}  // namespace kg::loader::shim
