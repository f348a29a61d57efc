// Shard assignment (results.h): a stable subset of a run's (submission, op) pairs.
#include "kernelgate/results.h"
#include "kernelgate/sha256.h"

#include <cerrno>
#include <cstdlib>

namespace kg::results {
namespace {

bool parse_int(const std::string& s, long long* out) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  *out = std::atoll(s.c_str());
  return true;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

std::optional<Shard> parse_shard(const std::string& text, std::string* error) {
  const size_t slash = text.find('/');
  long long i = 0, n = 0;
  if (slash == std::string::npos || !parse_int(text.substr(0, slash), &i) || !parse_int(text.substr(slash + 1), &n) || n < 1 || i >= n) {
    *error = "a shard is I/N with 0 <= I < N (0-based), got '" + text + "'";
    return std::nullopt;
  }
  return Shard{static_cast<int>(i), static_cast<int>(n)};
}

std::optional<Shard> shard_from_environment(std::string* error) {
  const char* id = env("SLURM_ARRAY_TASK_ID");
  const char* count = env("SLURM_ARRAY_TASK_COUNT");
  if (!id && !count) return std::nullopt;
  long long i = 0, n = 0, min = 0;
  if (!id || !count || !parse_int(id, &i) || !parse_int(count, &n)) {
    *error = std::string("SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT must both be non-negative integers (got '") + (id ? id : "") +
             "' and '" + (count ? count : "") + "')";
    return std::nullopt;
  }
  if (const char* m = env("SLURM_ARRAY_TASK_MIN")) {
    if (!parse_int(m, &min) || min > i) {
      *error = std::string("SLURM_ARRAY_TASK_MIN must be an integer no larger than SLURM_ARRAY_TASK_ID, got '") + m + "'";
      return std::nullopt;
    }
  }
  return parse_shard(std::to_string(i - min) + "/" + std::to_string(n), error);
}

bool in_shard(const Shard& shard, const std::string& submission, const std::string& op) {
  if (shard.count <= 1) return true;
  digest::Sha256 h;
  h.field(submission);
  h.field(op);
  const std::string hex = h.hex();
  // The first 60 bits, so that the modulus is unbiased enough for any shard count in use.
  const unsigned long long v = std::strtoull(hex.substr(0, 15).c_str(), nullptr, 16);
  return static_cast<int>(v % static_cast<unsigned long long>(shard.count)) == shard.index;
}

}  // namespace kg::results
