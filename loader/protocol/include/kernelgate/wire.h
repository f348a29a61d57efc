// Encoding of argument and return value lists into a shared-memory region.
//
// Layout (little-endian, version kWireVersion):
//   RegionHeader, then a stream of tagged values, then tensor storage bytes (64-byte aligned).
// Tensors carry dtype, sizes, strides, storage offset and the byte length of their storage.
// decode() treats the bytes as hostile: every count, length, offset and dtype is checked and
// a lie is a WireError (the supervisor turns it into `protocol_violation`), never an over-read.
#pragma once

#include <ATen/core/ivalue.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace kg::wire {

constexpr uint32_t kWireMagic = 0x5254474B;  // "KGTR"
constexpr uint32_t kWireVersion = 1;
constexpr uint32_t kMaxDims = 16;
constexpr uint32_t kMaxValues = 1 << 16;
constexpr uint32_t kMaxDepth = 8;

struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bytes encode() needs for `values`.
size_t encoded_size(const std::vector<c10::IValue>& values);
// Writes `values` at dst (capacity bytes). Returns bytes written; throws WireError when it does
// not fit or a value kind is not supported.
size_t encode(const std::vector<c10::IValue>& values, uint8_t* dst, size_t capacity);
// Decodes a region. Tensors are copied out into fresh CPU tensors (never views of `src`).
std::vector<c10::IValue> decode(const uint8_t* src, size_t len);
// As decode(), with the same checks, but each tensor is a view of its bytes in `src`: nothing is
// copied, and the values are valid only while `src` stays mapped and unchanged. For a region
// whose writer is trusted and whose tensors are about to be copied elsewhere anyway (kg-runner's
// inputs on their way to the device).
std::vector<c10::IValue> decode_views(const uint8_t* src, size_t len);

}  // namespace kg::wire
