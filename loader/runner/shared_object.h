// A dlopen()ed artifact, closed with its owner.
#pragma once

#include <dlfcn.h>

#include <optional>
#include <string>
#include <utility>

namespace kg::runner {

class SharedObject {
 public:
  // dlopen(RTLD_NOW | `scope`, RTLD_LOCAL unless said otherwise): the library's static
  // constructors run here. nullopt and dlerror()'s text in `*error` when it cannot be loaded.
  static std::optional<SharedObject> open(const std::string& path, std::string* error, int scope = RTLD_LOCAL) {
    void* h = ::dlopen(path.c_str(), RTLD_NOW | scope);
    if (!h) {
      const char* e = ::dlerror();
      *error = e ? e : "?";
      return std::nullopt;
    }
    return SharedObject(h);
  }
  SharedObject(SharedObject&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  SharedObject& operator=(SharedObject&& o) noexcept {
    if (this != &o) {
      close();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
  ~SharedObject() { close(); }
  // The address of `name` in this library, or nullptr.
  void* symbol(const char* name) const { return ::dlsym(h_, name); }

 private:
  explicit SharedObject(void* h) : h_(h) {}
  void close() {
    if (h_) ::dlclose(h_);
    h_ = nullptr;
  }
  void* h_ = nullptr;
};

}  // namespace kg::runner
