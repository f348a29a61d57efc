// The in-place call (protocol::kCallSecondSetInPlace): new values written into the very buffers
// of the previous call's arguments, so that every tensor argument is at its old address at once.
#include "call_run.h"

#include <ATen/ATen.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace kg::runner {
namespace {

// A tensor's whole storage as bytes on its device (a view, no copy).
at::Tensor storage_bytes(const at::Tensor& t) {
  // libtorch 2.x hands out the storage's data as const void*; the in-place call writes through it.
  return at::from_blob(const_cast<void*>(t.storage().data()), {static_cast<int64_t>(t.storage().nbytes())},
                       at::TensorOptions().dtype(at::kByte).device(t.device()));
}

bool same_layout(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.storage_offset() == b.storage_offset() && a.storage().nbytes() == b.storage().nbytes();
}

[[noreturn]] void mismatch(size_t i, const std::string& what) {
  throw std::runtime_error("in-place call: argument " + std::to_string(i) + " " + what);
}

}  // namespace

std::vector<c10::IValue> exact_copies(const std::vector<c10::IValue>& values) {
  std::vector<c10::IValue> out;
  out.reserve(values.size());
  for (const c10::IValue& v : values) {
    if (v.isTensorList()) {
      c10::List<at::Tensor> list;
      for (const c10::IValue& t : exact_copies(std::vector<c10::IValue>(v.toTensorList().begin(), v.toTensorList().end())))
        list.push_back(t.toTensor());
      out.emplace_back(std::move(list));
      continue;
    }
    if (!v.isTensor() || !v.toTensor().defined()) {
      out.push_back(v);
      continue;
    }
    const at::Tensor& t = v.toTensor();
    at::Tensor storage = at::empty({static_cast<int64_t>(t.storage().nbytes())}, t.options().dtype(at::kByte));
    storage.copy_(storage_bytes(t));
    out.emplace_back(at::empty({0}, t.options()).set_(storage.storage(), t.storage_offset(), t.sizes(), t.strides()));
  }
  return out;
}

void write_into(std::vector<c10::IValue>& buffers, const std::vector<c10::IValue>& values) {
  if (buffers.size() != values.size()) mismatch(buffers.size(), "count differs from the first call's");
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].isTensorList() && values[i].isTensorList()) {
      std::vector<c10::IValue> inner(buffers[i].toTensorList().begin(), buffers[i].toTensorList().end());
      write_into(inner, std::vector<c10::IValue>(values[i].toTensorList().begin(), values[i].toTensorList().end()));
      continue;
    }
    const bool tensor = buffers[i].isTensor() && buffers[i].toTensor().defined();
    if (tensor != (values[i].isTensor() && values[i].toTensor().defined())) mismatch(i, "is a tensor in one call only");
    if (!tensor) {
      buffers[i] = values[i];  // numbers, lists, options: passed by value, nothing has an address
      continue;
    }
    at::Tensor buffer = buffers[i].toTensor();
    const at::Tensor& fresh = values[i].toTensor();
    // A buffer whose layout the first call changed (an out= argument it resized) cannot hold the
    // new values as they are: that argument is passed as decoded, at an address of its own.
    if (!same_layout(buffer, fresh)) {
      buffers[i] = values[i];
      continue;
    }
    storage_bytes(buffer).copy_(storage_bytes(fresh));
  }
}

}  // namespace kg::runner
