#include "kernelgate/cache_flush.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace kg::protocol {

size_t cpu_flush_default_bytes() {
  size_t llc = 0;
  for (int idx = 3; idx >= 2 && !llc; --idx) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/size");
    std::string s;
    if (f >> s && !s.empty()) {
      size_t v = std::strtoull(s.c_str(), nullptr, 10);
      if (s.back() == 'K') v <<= 10;
      if (s.back() == 'M') v <<= 20;
      llc = v;
    }
  }
  return std::max<size_t>(2 * llc, size_t{64} << 20);
}

}  // namespace kg::protocol
