// What CallMsg::flush_bytes = 0 means: the CPU cache flush's default buffer before each timed
// call, twice the last-level cache (sysfs), at least 64 MiB. A sandboxed runner has no /sys and
// gets the 64 MiB (docs/verdicts.md says what that leaves cached).
#pragma once

#include <cstddef>

namespace kg::protocol {

size_t cpu_flush_default_bytes();

}  // namespace kg::protocol
