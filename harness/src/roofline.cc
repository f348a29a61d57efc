// The roofline bound on a claimed time: a call cannot be faster than writing its outputs at
// the device's peak bandwidth, nor (for the matmul family) than its flops at peak rate. A time
// under that floor is `impossible_speed`, not a speedup. The peaks are measured here, by the
// supervisor, and then generously rounded up so honest kernels never come near the floor.
#include "kernelgate/harness.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kg::harness {
namespace {

int64_t tensor_bytes(const c10::IValue& v) {
  int64_t n = 0;
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.defined()) n += t.numel() * static_cast<int64_t>(t.element_size());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList()) n += t.numel() * static_cast<int64_t>(t.element_size());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) n += tensor_bytes(e);
  }
  return n;
}

// 2*M*N*K (times the batch) for the ops whose flops are not in doubt.
double matmul_flops(const std::string& name, const std::vector<c10::IValue>& in) {
  auto dims = [&](size_t i) -> std::vector<int64_t> {
    if (i >= in.size() || !in[i].isTensor() || !in[i].toTensor().defined()) return {};
    auto s = in[i].toTensor().sizes();
    return {s.begin(), s.end()};
  };
  if (name == "aten::mm") {
    auto a = dims(0), b = dims(1);
    if (a.size() == 2 && b.size() == 2) return 2.0 * a[0] * a[1] * b[1];
  } else if (name == "aten::addmm") {
    auto a = dims(1), b = dims(2);
    if (a.size() == 2 && b.size() == 2) return 2.0 * a[0] * a[1] * b[1];
  } else if (name == "aten::bmm") {
    auto a = dims(0), b = dims(1);
    if (a.size() == 3 && b.size() == 3) return 2.0 * a[0] * a[1] * a[2] * b[2];
  } else if (name == "aten::baddbmm") {
    auto a = dims(1), b = dims(2);
    if (a.size() == 3 && b.size() == 3) return 2.0 * a[0] * a[1] * a[2] * b[2];
  }
  return 0;
}

}  // namespace

DevicePeaks measure_peaks(names::Device device) {
  DevicePeaks p;
  if (device == names::Device::Cuda) {
    // H200: 4.8 TB/s HBM3e, ~990 TFLOP/s dense bf16; the bound only needs to be an upper bound.
    p.bytes_per_s = 4.8e12 * 2;
    p.flops_per_s = 2.0e15 * 2;
    return p;
  }
  // CPU: the best of a few 64 MiB copies (read + write), per core, times the cores.
  const size_t n = 64u << 20;
  std::vector<char> a(n, 1), b(n, 0);
  double best = 0;
  for (int i = 0; i < 4; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), n);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) best = std::max(best, 2.0 * n / s);
    a[static_cast<size_t>(i)] = b[static_cast<size_t>(n - 1 - i)];
  }
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  // Margins: caches can beat DRAM bandwidth by several times on small working sets.
  p.bytes_per_s = best * cores * 16;
  // 64 f32 flops per cycle per core (two AVX-512 FMA units) at 5 GHz, doubled for margin.
  p.flops_per_s = cores * 64 * 5e9 * 2;
  return p;
}

DevicePeaks process_peaks(names::Device device) {
  static std::mutex mu;
  static std::map<names::Device, DevicePeaks> measured;
  std::lock_guard<std::mutex> lock(mu);
  auto it = measured.find(device);
  if (it == measured.end()) it = measured.emplace(device, measure_peaks(device)).first;
  return it->second;
}

double roofline_floor_s(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& returns,
                        const DevicePeaks& peaks) {
  double floor = 0;
  if (peaks.bytes_per_s > 0) {
    int64_t out = 0;
    for (const auto& r : returns) out += tensor_bytes(r);
    floor = std::max(floor, static_cast<double>(out) / peaks.bytes_per_s);
  }
  if (peaks.flops_per_s > 0) floor = std::max(floor, matmul_flops(schema.name(), inputs) / peaks.flops_per_s);
  return floor;
}

}  // namespace kg::harness
