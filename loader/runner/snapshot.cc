// Snapshots of a call's tensors, to see work that goes on after the call returned: see instrument.h.
#include "instrument.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <thread>

namespace kg::runner {
namespace {

void collect_tensors(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    if (v.toTensor().defined()) out.push_back(v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList())
      if (t.defined()) out.push_back(t);
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) collect_tensors(e, out);
  } else if (v.isList()) {
    auto l = v.toList();
    for (size_t i = 0; i < l.size(); ++i) collect_tensors(l.get(i), out);
  }
}

std::vector<at::Tensor> defined_tensors(const std::vector<c10::IValue>& values) {
  std::vector<at::Tensor> out;
  for (const auto& v : values) collect_tensors(v, out);
  return out;
}

}  // namespace

std::vector<at::Tensor> cpu_tensors(const std::vector<c10::IValue>& values) {
  std::vector<at::Tensor> out = defined_tensors(values);
  out.erase(std::remove_if(out.begin(), out.end(), [](const at::Tensor& t) { return !t.device().is_cpu(); }), out.end());
  return out;
}

size_t device_storage_bytes(const std::vector<c10::IValue>& values) {
  std::set<const void*> seen;
  size_t n = 0;
  for (const at::Tensor& t : defined_tensors(values)) {
    if (t.device().is_cpu() || !t.has_storage()) continue;
    const c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
    if (s && seen.insert(s).second) n += s->nbytes();
  }
  return n;
}

bool holds_elements(const std::vector<c10::IValue>& values) {
  const std::vector<at::Tensor> ts = defined_tensors(values);
  return std::any_of(ts.begin(), ts.end(), [](const at::Tensor& t) { return t.numel() > 0; });
}

Snapshot::Snapshot(const std::vector<c10::IValue>& values) {
  const std::vector<at::Tensor> ts = cpu_tensors(values);
  std::set<const void*> seen;  // one copy per storage: views share it
  for (const at::Tensor& t : ts) {
    if (!t.has_storage()) continue;
    const c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
    if (!s || s->nbytes() == 0 || !seen.insert(s).second) continue;
    const auto* p = static_cast<const uint8_t*>(s->data_ptr().get());
    if (!p) continue;
    parts_.push_back({t, std::vector<uint8_t>(p, p + s->nbytes())});
  }
}

bool Snapshot::differs() const {
  for (const Part& part : parts_) {
    const c10::StorageImpl* s = part.tensor.storage().unsafeGetStorageImpl();
    if (s->nbytes() != part.bytes.size() || std::memcmp(s->data_ptr().get(), part.bytes.data(), part.bytes.size()) != 0) return true;
  }
  return false;
}

bool Snapshot::changes_within(std::chrono::microseconds window) const {
  if (parts_.empty()) return false;
  std::this_thread::sleep_for(window / 4);
  if (differs()) return true;
  std::this_thread::sleep_for(window - window / 4);
  return differs();
}

}  // namespace kg::runner
