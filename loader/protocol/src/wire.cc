#include "kernelgate/wire.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cstring>
#include <limits>
#include <string>

namespace kg::wire {
namespace {

enum Tag : uint8_t {
  kNone = 0,
  kBool = 1,
  kInt = 2,
  kDouble = 3,
  kString = 4,
  kTensor = 5,
  kUndefinedTensor = 6,
  kDevice = 7,
  kIntList = 8,
  kDoubleList = 9,
  kBoolList = 10,
  kTensorList = 11,
  kOptTensorList = 12,
  kTuple = 13,
  kGenericList = 14,
};

struct RegionHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t n_values;
  uint32_t reserved;
  uint64_t stream_bytes;
  uint64_t data_offset;
  uint64_t data_bytes;
};

constexpr size_t kAlign = 64;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool dtype_supported(int code) {
  switch (static_cast<c10::ScalarType>(code)) {
    case at::kByte:
    case at::kChar:
    case at::kShort:
    case at::kInt:
    case at::kLong:
    case at::kHalf:
    case at::kFloat:
    case at::kDouble:
    case at::kBool:
    case at::kBFloat16:
    case at::kComplexFloat:
    case at::kComplexDouble: return true;
    default: return false;
  }
}

// The element span [first, last] of a strided tensor, in elements of its storage.
struct Span {
  int64_t first = 0;
  int64_t count = 0;  // elements from first; 0 for an empty tensor
};

Span span_of(const at::Tensor& t) {
  Span s;
  if (t.numel() == 0) return s;
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  s.first = t.storage_offset();
  s.count = last - s.first + 1;
  return s;
}

// ---- encoding --------------------------------------------------------------------------

// A tensor whose storage bytes are not its values as they lie (on a device; a lazily conjugated
// or negated view, whose flag the wire does not carry) is shipped as a copy with its values. A
// dense one keeps its sizes and strides and is copied straight into the region; any other is
// shipped as a contiguous copy: numel elements, where its span may be more or fewer.
bool needs_copy(const at::Tensor& t) { return !t.device().is_cpu() || t.is_conj() || t.is_neg(); }
bool shipped_as_contiguous_copy(const at::Tensor& t) { return needs_copy(t) && !t.is_non_overlapping_and_dense(); }

int64_t shipped_elements(const at::Tensor& t) { return shipped_as_contiguous_copy(t) ? t.numel() : span_of(t).count; }

class Writer {
 public:
  Writer(uint8_t* stream, size_t stream_cap, uint8_t* base, size_t data_start, size_t capacity)
      : stream_(stream), stream_cap_(stream_cap), base_(base), data_pos_(data_start), capacity_(capacity) {}

  void value(const c10::IValue& v, int depth) {
    if (depth > static_cast<int>(kMaxDepth)) throw WireError("value nesting too deep");
    if (v.isNone()) return tag(kNone);
    if (v.isBool()) {
      tag(kBool);
      return u8(v.toBool() ? 1 : 0);
    }
    if (v.isInt()) {
      tag(kInt);
      return i64(v.toInt());
    }
    if (v.isDouble()) {
      tag(kDouble);
      return f64(v.toDouble());
    }
    if (v.isString()) {
      tag(kString);
      const std::string& s = v.toStringRef();
      u64(s.size());
      return bytes(s.data(), s.size());
    }
    if (v.isTensor()) return tensor(v.toTensor());
    if (v.isDevice()) {
      tag(kDevice);
      i64(static_cast<int64_t>(v.toDevice().type()));
      return i64(v.toDevice().index());
    }
    if (v.isIntList()) {
      tag(kIntList);
      auto l = v.toIntList();
      u64(l.size());
      for (int64_t x : l) i64(x);
      return;
    }
    if (v.isDoubleList()) {
      tag(kDoubleList);
      auto l = v.toDoubleList();
      u64(l.size());
      for (double x : l) f64(x);
      return;
    }
    if (v.isBoolList()) {
      tag(kBoolList);
      auto l = v.toBoolList();
      u64(l.size());
      for (bool x : l) u8(x ? 1 : 0);
      return;
    }
    if (v.isTensorList()) {
      tag(kTensorList);
      auto l = v.toTensorList();
      u64(l.size());
      for (const at::Tensor& t : l) tensor(t);
      return;
    }
    if (v.isTuple()) {
      tag(kTuple);
      const auto& elems = v.toTupleRef().elements();
      u64(elems.size());
      for (const auto& e : elems) value(e, depth + 1);
      return;
    }
    if (v.isList()) {
      auto l = v.toList();
      bool opt_tensors = l.elementType()->kind() == c10::TypeKind::OptionalType;
      tag(opt_tensors ? kOptTensorList : kGenericList);
      u64(l.size());
      for (size_t i = 0; i < l.size(); ++i) value(l.get(i), depth + 1);
      return;
    }
    throw WireError(std::string("value kind not supported on the wire: ") + v.tagKind());
  }

  size_t stream_used() const { return pos_; }
  size_t data_end() const { return data_pos_; }

 private:
  void tag(Tag t) { u8(t); }
  void u8(uint8_t x) { bytes(&x, 1); }
  void u32(uint32_t x) { bytes(&x, 4); }
  void u64(uint64_t x) { bytes(&x, 8); }
  void i64(int64_t x) { bytes(&x, 8); }
  void f64(double x) { bytes(&x, 8); }
  void bytes(const void* p, size_t n) {
    if (n > stream_cap_ - pos_) throw WireError("value stream does not fit in the region");
    std::memcpy(stream_ + pos_, p, n);
    pos_ += n;
  }

  void tensor(const at::Tensor& t_in) {
    if (!t_in.defined()) return tag(kUndefinedTensor);
    c10::AutoGradMode no_grad(false);
    const bool contiguous_copy = shipped_as_contiguous_copy(t_in);
    const bool direct = needs_copy(t_in) && !contiguous_copy;
    const at::Tensor t = contiguous_copy ? at::empty(t_in.sizes(), t_in.options().device(at::kCPU)).copy_(t_in) : t_in;
    if (!dtype_supported(static_cast<int>(t.scalar_type())))
      throw WireError(std::string("dtype not supported on the wire: ") + c10::toString(t.scalar_type()));
    if (t.dim() > static_cast<int64_t>(kMaxDims)) throw WireError("tensor has too many dimensions");
    tag(kTensor);
    u32(static_cast<uint32_t>(t.scalar_type()));
    u32(static_cast<uint32_t>(t.dim()));
    for (int64_t d = 0; d < t.dim(); ++d) i64(t.size(d));
    for (int64_t d = 0; d < t.dim(); ++d) i64(t.stride(d));
    Span s = span_of(t);
    const size_t item = t.element_size();
    const size_t nbytes = static_cast<size_t>(s.count) * item;
    i64(0);  // storage offset: only the span is shipped, so it starts at the tensor's first element
    data_pos_ = align_up(data_pos_);
    if (nbytes > capacity_ || data_pos_ > capacity_ - nbytes) throw WireError("tensor data does not fit in the region");
    u64(data_pos_);
    u64(nbytes);
    if (nbytes && direct) {
      at::from_blob(base_ + data_pos_, t.sizes(), t.strides(), t.options().device(at::kCPU)).copy_(t);
    } else if (nbytes) {
      // data_ptr() is the tensor's first element, which is where its span starts.
      const auto* src = static_cast<const uint8_t*>(t.data_ptr());
      std::memcpy(base_ + data_pos_, src, nbytes);
    }
    data_pos_ += nbytes;
  }

  uint8_t* stream_;
  size_t stream_cap_;
  size_t pos_ = 0;
  uint8_t* base_;
  size_t data_pos_;
  size_t capacity_;
};

size_t stream_size(const c10::IValue& v, size_t* data) {
  if (v.isNone()) return 1;
  if (v.isBool()) return 2;
  if (v.isInt() || v.isDouble()) return 9;
  if (v.isString()) return 9 + v.toStringRef().size();
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return 1;
    *data += align_up(static_cast<size_t>(shipped_elements(t)) * t.element_size());
    return 1 + 8 + 16 * static_cast<size_t>(t.dim()) + 24;
  }
  if (v.isDevice()) return 17;
  if (v.isIntList()) return 9 + 8 * v.toIntList().size();
  if (v.isDoubleList()) return 9 + 8 * v.toDoubleList().size();
  if (v.isBoolList()) return 9 + v.toBoolList().size();
  if (v.isTensorList()) {
    size_t n = 9;
    for (const at::Tensor& t : v.toTensorList()) n += stream_size(c10::IValue(t), data);
    return n;
  }
  if (v.isTuple()) {
    size_t n = 9;
    for (const auto& e : v.toTupleRef().elements()) n += stream_size(e, data);
    return n;
  }
  if (v.isList()) {
    size_t n = 9;
    auto l = v.toList();
    for (size_t i = 0; i < l.size(); ++i) n += stream_size(l.get(i), data);
    return n;
  }
  return 1;  // encode() reports unsupported kinds
}

// ---- decoding --------------------------------------------------------------------------

class Reader {
 public:
  Reader(const uint8_t* base, size_t len, size_t stream_start, size_t stream_len, size_t data_start, bool views)
      : base_(base), len_(len), pos_(stream_start), end_(stream_start + stream_len), data_start_(data_start), views_(views) {}

  c10::IValue value(int depth) {
    if (depth > static_cast<int>(kMaxDepth)) throw WireError("value nesting deeper than " + std::to_string(kMaxDepth));
    uint8_t t = u8();
    switch (t) {
      case kNone: return c10::IValue();
      case kBool: {
        uint8_t b = u8();
        if (b > 1) throw WireError("bool byte is neither 0 nor 1");
        return c10::IValue(b == 1);
      }
      case kInt: return c10::IValue(i64());
      case kDouble: return c10::IValue(f64());
      case kString: {
        uint64_t n = count(1);
        std::string s(reinterpret_cast<const char*>(take(n)), n);
        return c10::IValue(s);
      }
      case kTensor: return c10::IValue(tensor());
      case kUndefinedTensor: return c10::IValue(at::Tensor());
      case kDevice: {
        int64_t type = i64();
        int64_t index = i64();
        if (type != static_cast<int64_t>(c10::DeviceType::CPU) && type != static_cast<int64_t>(c10::DeviceType::CUDA))
          throw WireError("device type " + std::to_string(type) + " is not cpu or cuda");
        if (index < -1 || index > 127) throw WireError("device index out of range");
        // c10::Device asserts (throws c10::Error) on a CPU index other than -1 or 0 (found by fuzzing).
        if (type == static_cast<int64_t>(c10::DeviceType::CPU) && index > 0) throw WireError("cpu device index must be -1 or 0");
        return c10::IValue(c10::Device(static_cast<c10::DeviceType>(type), static_cast<c10::DeviceIndex>(index)));
      }
      case kIntList: {
        uint64_t n = count(8);
        std::vector<int64_t> v(n);
        for (auto& x : v) x = i64();
        return c10::IValue(v);
      }
      case kDoubleList: {
        uint64_t n = count(8);
        std::vector<double> v(n);
        for (auto& x : v) x = f64();
        return c10::IValue(v);
      }
      case kBoolList: {
        uint64_t n = count(1);
        c10::List<bool> l;
        for (uint64_t i = 0; i < n; ++i) {
          uint8_t b = u8();
          if (b > 1) throw WireError("bool byte is neither 0 nor 1");
          l.push_back(b == 1);
        }
        return c10::IValue(l);
      }
      case kTensorList: {
        uint64_t n = count(1);
        std::vector<at::Tensor> v;
        for (uint64_t i = 0; i < n; ++i) {
          c10::IValue e = value(depth + 1);
          if (!e.isTensor()) throw WireError("tensor list element is not a tensor");
          v.push_back(e.toTensor());
        }
        return c10::IValue(v);
      }
      case kOptTensorList: {
        uint64_t n = count(1);
        c10::List<c10::optional<at::Tensor>> l;
        for (uint64_t i = 0; i < n; ++i) {
          c10::IValue e = value(depth + 1);
          if (e.isNone()) l.push_back(c10::nullopt);
          else if (e.isTensor()) l.push_back(e.toTensor());
          else throw WireError("optional-tensor list element is neither None nor a tensor");
        }
        return c10::IValue(l);
      }
      case kTuple: {
        uint64_t n = count(1);
        std::vector<c10::IValue> elems;
        for (uint64_t i = 0; i < n; ++i) elems.push_back(value(depth + 1));
        return c10::IValue(c10::ivalue::Tuple::create(std::move(elems)));
      }
      case kGenericList: {
        uint64_t n = count(1);
        c10::impl::GenericList l(c10::AnyType::get());
        for (uint64_t i = 0; i < n; ++i) l.push_back(value(depth + 1));
        return c10::IValue(l);
      }
      default: throw WireError("unknown value tag " + std::to_string(t) + " at byte " + std::to_string(pos_ - 1));
    }
  }

  size_t pos() const { return pos_; }
  size_t end() const { return end_; }

 private:
  const uint8_t* take(size_t n) {
    if (n > end_ - pos_) throw WireError("value stream ends early (need " + std::to_string(n) + " bytes at " + std::to_string(pos_) + ")");
    const uint8_t* p = base_ + pos_;
    pos_ += n;
    return p;
  }
  uint8_t u8() { return *take(1); }
  template <typename T>
  T scalar() {
    T x;
    std::memcpy(&x, take(sizeof(T)), sizeof(T));
    return x;
  }
  uint32_t u32() { return scalar<uint32_t>(); }
  uint64_t u64() { return scalar<uint64_t>(); }
  int64_t i64() { return scalar<int64_t>(); }
  double f64() { return scalar<double>(); }
  // An element count, checked against what the rest of the stream could hold.
  uint64_t count(size_t min_elem_bytes) {
    uint64_t n = u64();
    if (n > kMaxValues || n * min_elem_bytes > end_ - pos_) throw WireError("element count " + std::to_string(n) + " exceeds the stream");
    return n;
  }

  at::Tensor tensor() {
    uint32_t dtype = u32();
    uint32_t ndim = u32();
    if (!dtype_supported(static_cast<int>(dtype))) throw WireError("tensor dtype code " + std::to_string(dtype) + " is not supported");
    if (ndim > kMaxDims) throw WireError("tensor has " + std::to_string(ndim) + " dims (max " + std::to_string(kMaxDims) + ")");
    std::vector<int64_t> sizes(ndim), strides(ndim);
    for (auto& s : sizes) s = i64();
    for (auto& s : strides) s = i64();
    int64_t storage_offset = i64();
    uint64_t data_offset = u64();
    uint64_t nbytes = u64();
    const auto st = static_cast<c10::ScalarType>(dtype);
    const uint64_t item = c10::elementSize(st);
    if (storage_offset < 0) throw WireError("negative storage offset");
    // numel and the last element index, with overflow checks.
    constexpr int64_t kLimit = std::numeric_limits<int64_t>::max() / 16;
    int64_t numel = 1;
    int64_t last = storage_offset;
    for (uint32_t d = 0; d < ndim; ++d) {
      if (sizes[d] < 0 || sizes[d] > kLimit) throw WireError("tensor size out of range in dim " + std::to_string(d));
      if (strides[d] < 0 || strides[d] > kLimit) throw WireError("tensor stride out of range in dim " + std::to_string(d));
      if (sizes[d] != 0 && numel > kLimit / sizes[d]) throw WireError("tensor numel overflows");
      numel *= sizes[d];
      if (sizes[d] > 0 && strides[d] > 0 && (sizes[d] - 1) > (kLimit - last) / strides[d]) throw WireError("tensor extent overflows");
      if (sizes[d] > 0) last += (sizes[d] - 1) * strides[d];
    }
    uint64_t need = numel == 0 ? 0 : static_cast<uint64_t>(last + 1) * item;
    if (numel != 0 && static_cast<uint64_t>(last + 1) > std::numeric_limits<uint64_t>::max() / item)
      throw WireError("tensor extent overflows");
    if (nbytes % item != 0) throw WireError("tensor storage length is not a multiple of its element size");
    if (nbytes < need)
      throw WireError("tensor storage of " + std::to_string(nbytes) + " bytes is smaller than its extent of " + std::to_string(need));
    if (data_offset < data_start_ || data_offset > len_ || nbytes > len_ - data_offset)
      throw WireError("tensor data [" + std::to_string(data_offset) + ", +" + std::to_string(nbytes) + ") lies outside the region");
    const auto n = static_cast<int64_t>(nbytes / item);
    const at::TensorOptions options = at::TensorOptions().dtype(st);
    at::Tensor storage;
    if (views_) {
      storage = at::from_blob(const_cast<uint8_t*>(base_ + data_offset), {n}, options);
    } else {
      storage = at::empty({n}, options);
      if (nbytes) std::memcpy(storage.data_ptr(), base_ + data_offset, nbytes);
    }
    if (st == at::kBool && nbytes) {
      // A bool byte other than 0/1 is undefined behaviour in C++; reject it here. (A view's bytes
      // are the region's: decode_views is only for a trusted writer.)
      const uint8_t* p = static_cast<const uint8_t*>(storage.data_ptr());
      for (uint64_t i = 0; i < nbytes; ++i)
        if (p[i] > 1) throw WireError("bool tensor byte is neither 0 nor 1");
    }
    return storage.as_strided(sizes, strides, storage_offset);
  }

  const uint8_t* base_;
  size_t len_;
  size_t pos_;
  size_t end_;
  size_t data_start_;
  bool views_;
};

}  // namespace

size_t encoded_size(const std::vector<c10::IValue>& values) {
  size_t data = 0;
  size_t stream = 0;
  for (const auto& v : values) stream += stream_size(v, &data);
  return align_up(sizeof(RegionHeader) + stream) + data + kAlign;
}

size_t encode(const std::vector<c10::IValue>& values, uint8_t* dst, size_t capacity) {
  if (values.size() > kMaxValues) throw WireError("too many values");
  size_t data = 0;
  size_t stream = 0;
  for (const auto& v : values) stream += stream_size(v, &data);
  const size_t stream_start = sizeof(RegionHeader);
  if (capacity < stream_start || stream > capacity - stream_start) throw WireError("region too small for the value stream");
  const size_t data_start = align_up(stream_start + stream);
  Writer w(dst + stream_start, stream, dst, data_start, capacity);
  for (const auto& v : values) w.value(v, 0);
  RegionHeader h{};
  h.magic = kWireMagic;
  h.version = kWireVersion;
  h.n_values = static_cast<uint32_t>(values.size());
  h.stream_bytes = w.stream_used();
  h.data_offset = data_start;
  h.data_bytes = w.data_end() > data_start ? w.data_end() - data_start : 0;
  std::memcpy(dst, &h, sizeof h);
  return std::max(w.data_end(), data_start);
}

namespace {

std::vector<c10::IValue> decode_region(const uint8_t* src, size_t len, bool views) {
  RegionHeader h;
  if (len < sizeof h) throw WireError("region of " + std::to_string(len) + " bytes is shorter than its header");
  std::memcpy(&h, src, sizeof h);
  if (h.magic != kWireMagic) throw WireError("bad region magic");
  if (h.version != kWireVersion)
    throw WireError("region version " + std::to_string(h.version) + ", expected " + std::to_string(kWireVersion));
  if (h.n_values > kMaxValues) throw WireError("too many values: " + std::to_string(h.n_values));
  const size_t stream_start = sizeof h;
  if (h.stream_bytes > len - stream_start) throw WireError("value stream runs past the region");
  if (h.data_offset < stream_start + h.stream_bytes || h.data_offset > len)
    throw WireError("data section overlaps the stream or lies outside the region");
  Reader r(src, len, stream_start, h.stream_bytes, h.data_offset, views);
  std::vector<c10::IValue> out;
  out.reserve(h.n_values);
  try {
    for (uint32_t i = 0; i < h.n_values; ++i) out.push_back(r.value(0));
  } catch (const c10::Error& e) {
    // Defence in depth: whatever libtorch itself rejects while building values is still a lie
    // of the runner's, never an internal error of the supervisor.
    std::string what = e.what_without_backtrace();
    throw WireError("libtorch rejected a decoded value: " + what.substr(0, 300));
  }
  if (r.pos() != r.end()) throw WireError("trailing bytes after the last value");
  return out;
}

}  // namespace

std::vector<c10::IValue> decode(const uint8_t* src, size_t len) { return decode_region(src, len, false); }

std::vector<c10::IValue> decode_views(const uint8_t* src, size_t len) { return decode_region(src, len, true); }

}  // namespace kg::wire
