// libFuzzer target for the supervisor's decoder of runner output regions (kg::wire::decode).
// The runner is untrusted: whatever bytes it leaves in the shared region, decode() must either
// return values or throw WireError, never crash, over-read or allocate without bound.
// A successful decode is re-encoded and decoded again: the round trip must be stable.
//
// Built by tests/fuzz/CMakeLists.txt; seeds: tests/fuzz/corpus_wire (regenerate with
// KG_WIRE_WRITE_SEEDS=DIR BUILD/wire_fuzz).
#include "kernelgate/wire.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void write_seed(const std::string& dir, const std::string& name, const std::vector<c10::IValue>& values) {
  std::vector<uint8_t> buf(kg::wire::encoded_size(values));
  size_t n = kg::wire::encode(values, buf.data(), buf.size());
  std::string path = dir + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  std::fwrite(buf.data(), 1, n, f);
  std::fclose(f);
}

void write_seeds(const std::string& dir) {
  at::Tensor a = at::arange(12, at::kFloat).reshape({3, 4});
  write_seed(dir, "scalars",
             {c10::IValue(), c10::IValue(true), c10::IValue(int64_t{-7}), c10::IValue(2.5), c10::IValue(std::string("mean"))});
  write_seed(dir, "tensor", {a});
  write_seed(dir, "view", {a.t(), a.slice(1, 1, 3)});
  write_seed(dir, "dtypes",
             {at::ones({2}, at::kHalf), at::ones({2}, at::kBool), at::ones({3}, at::kLong), at::ones({1}, at::kBFloat16),
              at::ones({2}, at::kComplexFloat)});
  write_seed(dir, "empty_0d", {at::empty({0, 3}), at::scalar_tensor(1.5), at::Tensor()});
  write_seed(dir, "lists",
             {c10::IValue(std::vector<int64_t>{1, 2, 3}), c10::IValue(std::vector<double>{0.5}),
              c10::IValue(c10::List<bool>({true, false})), c10::IValue(std::vector<at::Tensor>{a, a})});
  c10::List<c10::optional<at::Tensor>> opt;
  opt.push_back(a);
  opt.push_back(c10::nullopt);
  write_seed(dir, "opt_tensors", {c10::IValue(opt)});
  write_seed(dir, "tuple", {c10::ivalue::Tuple::create({c10::IValue(a), c10::IValue(int64_t{3})})});
  write_seed(dir, "device", {c10::IValue(c10::Device(c10::DeviceType::CPU))});
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* d = std::getenv("KG_WIRE_WRITE_SEEDS")) {
    write_seeds(d);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<c10::IValue> values;
  try {
    values = kg::wire::decode(data, size);
  } catch (const kg::wire::WireError&) { return 0; }
  // Whatever decoded must encode and decode again to the same number of values.
  std::vector<uint8_t> buf(kg::wire::encoded_size(values));
  size_t n = kg::wire::encode(values, buf.data(), buf.size());
  auto again = kg::wire::decode(buf.data(), n);
  if (again.size() != values.size()) std::abort();
  return 0;
}
