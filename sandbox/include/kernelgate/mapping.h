// The owner of one memory mapping (the protocol's shared call region on both sides).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <utility>

namespace kg {

// Owns [data, data + size) from mmap(); unmaps it on destruction. MAP_FAILED counts as none.
class Mapping {
 public:
  Mapping() = default;
  Mapping(void* p, size_t n) : p_(p == MAP_FAILED ? nullptr : p), n_(p == MAP_FAILED ? 0 : n) {}
  ~Mapping() { reset(); }
  Mapping(Mapping&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  Mapping& operator=(Mapping&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  unsigned char* data() const { return static_cast<unsigned char*>(p_); }
  size_t size() const { return n_; }
  explicit operator bool() const { return p_ != nullptr; }
  void reset() {
    if (p_) ::munmap(p_, n_);
    p_ = nullptr;
    n_ = 0;
  }

 private:
  void* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace kg
