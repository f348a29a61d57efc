// Triton's driver functions without gcc: see triton_driver.h.
#include "triton_driver.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace kg::runner::python {
namespace {

constexpr const char* kUnsupported = "kernelgate: this Triton feature is not supported in the runner:";

// The driver API as far as used here, declared by value (the plugin is built without cuda.h; the
// values are the driver's ABI, fixed since CUDA 4-9).
using CuResult = int;
using CuDevice = int;
struct CuModuleSt;
struct CuFunctionSt;
struct CuStreamSt;
struct CuContextSt;
using CuModule = CuModuleSt*;
using CuFunction = CuFunctionSt*;
using CuStream = CuStreamSt*;
using CuContext = CuContextSt*;
constexpr CuResult kSuccess = 0;
constexpr int kFuncMaxThreadsPerBlock = 0, kFuncSharedSizeBytes = 1, kFuncLocalSizeBytes = 3, kFuncNumRegs = 4,
              kFuncMaxDynamicSharedSizeBytes = 8;
constexpr int kDevWarpSize = 10, kDevMaxRegistersPerBlock = 12, kDevClockRate = 13, kDevMultiprocessorCount = 16, kDevMemoryClockRate = 36,
              kDevGlobalMemoryBusWidth = 37, kDevMaxSharedMemoryPerMultiprocessor = 81, kDevMaxSharedMemoryPerBlockOptin = 97;
constexpr int kPointerDevicePointer = 3;
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSizeBytes = 6;
constexpr int kFuncCachePreferShared = 1;

struct Driver {
  CuResult (*GetErrorString)(CuResult, const char**) = nullptr;
  CuResult (*DriverGetVersion)(int*) = nullptr;
  CuResult (*DeviceGet)(CuDevice*, int) = nullptr;
  CuResult (*DeviceGetAttribute)(int*, int, CuDevice) = nullptr;
  CuResult (*CtxGetCurrent)(CuContext*) = nullptr;
  CuResult (*ModuleLoadDataEx)(CuModule*, const void*, unsigned, int*, void**) = nullptr;
  CuResult (*ModuleGetFunction)(CuFunction*, CuModule, const char*) = nullptr;
  CuResult (*FuncGetAttribute)(int*, int, CuFunction) = nullptr;
  CuResult (*FuncSetAttribute)(CuFunction, int, int) = nullptr;
  CuResult (*FuncSetCacheConfig)(CuFunction, int) = nullptr;
  CuResult (*PointerGetAttribute)(void*, int, std::uint64_t) = nullptr;
  CuResult (*LaunchKernel)(CuFunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CuStream, void**,
                           void**) = nullptr;
  // kg-runner's device work watch around a driver-API launch (cudart/device_work.cc).
  int (*WatchedLaunch)(CuStream, int (*)(void*), void*) = nullptr;
};
Driver g_driver;

template <typename F>
bool resolve(void* lib, const char* name, F* out, std::string* why) {
  *out = reinterpret_cast<F>(::dlsym(lib, name));
  if (!*out && why->empty()) *why = std::string("the CUDA driver has no ") + name;
  return *out != nullptr;
}

std::string load_driver() {
  // torch.cuda.init() has loaded libcuda.so.1 by now; nothing new is mapped.
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return "libcuda.so.1 is not loaded in this runner";
  std::string why;
  resolve(lib, "cuGetErrorString", &g_driver.GetErrorString, &why);
  resolve(lib, "cuDriverGetVersion", &g_driver.DriverGetVersion, &why);
  resolve(lib, "cuDeviceGet", &g_driver.DeviceGet, &why);
  resolve(lib, "cuDeviceGetAttribute", &g_driver.DeviceGetAttribute, &why);
  resolve(lib, "cuCtxGetCurrent", &g_driver.CtxGetCurrent, &why);
  resolve(lib, "cuModuleLoadDataEx", &g_driver.ModuleLoadDataEx, &why);
  resolve(lib, "cuModuleGetFunction", &g_driver.ModuleGetFunction, &why);
  resolve(lib, "cuFuncGetAttribute", &g_driver.FuncGetAttribute, &why);
  resolve(lib, "cuFuncSetAttribute", &g_driver.FuncSetAttribute, &why);
  resolve(lib, "cuFuncSetCacheConfig", &g_driver.FuncSetCacheConfig, &why);
  resolve(lib, "cuPointerGetAttribute", &g_driver.PointerGetAttribute, &why);
  resolve(lib, "cuLaunchKernel", &g_driver.LaunchKernel, &why);
  ::dlclose(lib);  // a reference of our own, dropped; torch's keeps the library mapped
  if (!why.empty()) return why;
  g_driver.WatchedLaunch = reinterpret_cast<decltype(g_driver.WatchedLaunch)>(::dlsym(RTLD_DEFAULT, "kg_runner_watched_driver_launch"));
  if (!g_driver.WatchedLaunch) return "kg-runner has no device work watch for driver launches (a runner built without CUDA)";
  return "";
}

std::string cu_error(CuResult r, const char* what) {
  const char* text = nullptr;
  if (g_driver.GetErrorString) g_driver.GetErrorString(r, &text);
  return std::string(what) + " failed: " + (text ? text : "CUDA error " + std::to_string(r));
}

PyObject* raise(const std::string& message) {
  PyErr_SetString(PyExc_RuntimeError, message.c_str());
  return nullptr;
}

PyObject* driver_version(PyObject*, PyObject*) {
  int v = 0;
  if (CuResult r = g_driver.DriverGetVersion(&v); r != kSuccess) return raise(cu_error(r, "cuDriverGetVersion"));
  return PyLong_FromLong(v);
}

PyObject* get_device_properties(PyObject*, PyObject* args) {
  int ordinal = 0;
  if (!PyArg_ParseTuple(args, "i", &ordinal)) return nullptr;
  CuDevice device = 0;
  if (CuResult r = g_driver.DeviceGet(&device, ordinal); r != kSuccess) return raise(cu_error(r, "cuDeviceGet"));
  const std::pair<const char*, int> fields[] = {{"max_shared_mem", kDevMaxSharedMemoryPerBlockOptin},
                                                {"max_num_regs", kDevMaxRegistersPerBlock},
                                                {"multiprocessor_count", kDevMultiprocessorCount},
                                                {"warpSize", kDevWarpSize},
                                                {"sm_clock_rate", kDevClockRate},
                                                {"mem_clock_rate", kDevMemoryClockRate},
                                                {"mem_bus_width", kDevGlobalMemoryBusWidth}};
  PyRef out = PyRef::steal(PyDict_New());
  if (!out) return nullptr;
  for (const auto& [name, attribute] : fields) {
    int value = 0;
    if (CuResult r = g_driver.DeviceGetAttribute(&value, attribute, device); r != kSuccess)
      return raise(cu_error(r, "cuDeviceGetAttribute"));
    PyRef v = PyRef::steal(PyLong_FromLong(value));
    if (!v || PyDict_SetItemString(out.get(), name, v.get()) != 0) return nullptr;
  }
  return out.release();
}

PyObject* load_binary(PyObject*, PyObject* args) {
  const char* name = nullptr;
  const char* image = nullptr;
  Py_ssize_t size = 0;
  int shared = 0, ordinal = 0;
  if (!PyArg_ParseTuple(args, "sy#ii", &name, &image, &size, &shared, &ordinal)) return nullptr;
  if (size == 0) return raise("load_binary: an empty image");
  // A PTX image must end in its terminating zero; a cubin carries its own length.
  std::vector<char> copy(image, image + size);
  copy.push_back(0);
  CuModule module = nullptr;
  CuFunction function = nullptr;
  int n_regs = 0, local_bytes = 0, max_threads = 0;
  std::string error;
  std::vector<char> log(8192, 0);
  Py_BEGIN_ALLOW_THREADS;
  [&] {
    int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes};
    void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(log.size() - 1))};
    if (CuResult r = g_driver.ModuleLoadDataEx(&module, copy.data(), 2, options, values); r != kSuccess) {
      error = cu_error(r, "cuModuleLoadDataEx (the driver's PTX JIT)") + (log[0] ? std::string(":\n") + log.data() : std::string());
      return;
    }
    if (CuResult r = g_driver.ModuleGetFunction(&function, module, name); r != kSuccess) {
      error = cu_error(r, "cuModuleGetFunction");
      return;
    }
    for (auto [out, attribute] :
         {std::pair{&n_regs, kFuncNumRegs}, {&local_bytes, kFuncLocalSizeBytes}, {&max_threads, kFuncMaxThreadsPerBlock}})
      if (CuResult r = g_driver.FuncGetAttribute(out, attribute, function); r != kSuccess) {
        error = cu_error(r, "cuFuncGetAttribute");
        return;
      }
    CuDevice device = 0;
    int optin = 0;
    if (CuResult r = g_driver.DeviceGet(&device, ordinal); r != kSuccess) {
      error = cu_error(r, "cuDeviceGet");
      return;
    }
    if (CuResult r = g_driver.DeviceGetAttribute(&optin, kDevMaxSharedMemoryPerBlockOptin, device); r != kSuccess) {
      error = cu_error(r, "cuDeviceGetAttribute");
      return;
    }
    // More than 48 KiB of dynamic shared memory has to be opted into, as Triton's own driver does.
    if (shared > 49152 && optin > 49152) {
      int static_bytes = 0, per_sm = 0;
      CuResult r = g_driver.FuncSetCacheConfig(function, kFuncCachePreferShared);
      if (r == kSuccess) r = g_driver.DeviceGetAttribute(&per_sm, kDevMaxSharedMemoryPerMultiprocessor, device);
      if (r == kSuccess) r = g_driver.FuncGetAttribute(&static_bytes, kFuncSharedSizeBytes, function);
      if (r == kSuccess) r = g_driver.FuncSetAttribute(function, kFuncMaxDynamicSharedSizeBytes, optin - static_bytes);
      if (r != kSuccess) error = cu_error(r, "setting the kernel's shared memory size");
    }
  }();
  Py_END_ALLOW_THREADS;
  if (!error.empty()) return raise(error);
  return Py_BuildValue("(KKiii)", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(module)),
                       static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(function)), n_regs, local_bytes / 4, max_threads);
}

// fp16 as IEEE binary16, rounded to nearest even (Python's own packing, as Triton's launcher uses).
bool pack_half(double value, std::uint16_t* out) {
  char bytes[2];
  if (PyFloat_Pack2(value, bytes, 1) != 0) return false;
  std::memcpy(out, bytes, 2);
  return true;
}

// One kernel argument in a slot of its own; the driver reads each parameter's size from the kernel.
bool pack(char kind, PyObject* value, std::uint64_t* slot, int index) {
  *slot = 0;
  if (kind == 'e' || kind == 'r' || kind == 'f' || kind == 'd') {
    const double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred()) return false;
    if (kind == 'd') {
      std::memcpy(slot, &v, sizeof v);
    } else if (kind == 'f') {
      const float f = static_cast<float>(v);
      std::memcpy(slot, &f, sizeof f);
    } else if (kind == 'r') {
      const float f = static_cast<float>(v);
      std::uint32_t bits = 0;
      std::memcpy(&bits, &f, sizeof bits);
      const std::uint16_t top = static_cast<std::uint16_t>(bits >> 16);  // truncated, as Triton's launcher does
      std::memcpy(slot, &top, sizeof top);
    } else {
      std::uint16_t h = 0;
      if (!pack_half(v, &h)) return false;
      std::memcpy(slot, &h, sizeof h);
    }
    return true;
  }
  if (kind == 'p') {
    const unsigned long long address = value == Py_None ? 0ull : PyLong_AsUnsignedLongLong(value);
    if (address == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return false;
    if (address != 0) {
      std::uint64_t device_address = 0;
      if (g_driver.PointerGetAttribute(&device_address, kPointerDevicePointer, address) != kSuccess) {
        PyErr_Format(PyExc_ValueError, "Pointer argument (at %d) cannot be accessed from Triton (cpu tensor?)", index);
        return false;
      }
      *slot = device_address;
    }
    return true;
  }
  const bool is_signed = kind == 'b' || kind == 'h' || kind == 'i' || kind == 'l';
  std::uint64_t bits = 0;
  if (is_signed) {
    const long long v = PyLong_AsLongLong(value);
    if (v == -1 && PyErr_Occurred()) return false;
    bits = static_cast<std::uint64_t>(v);
  } else {
    const unsigned long long v = PyLong_AsUnsignedLongLongMask(value);
    if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return false;
    bits = v;
  }
  // Little-endian: the low bytes of `bits` are the narrower type's value.
  std::size_t size = 0;
  switch (kind) {
    case 'b':
    case 'B': size = 1; break;
    case 'h':
    case 'H': size = 2; break;
    case 'i':
    case 'I': size = 4; break;
    case 'l':
    case 'K': size = 8; break;
    default: break;
  }
  if (size != 0) {
    std::memcpy(slot, &bits, size);
    return true;
  }
  PyErr_Format(PyExc_TypeError, "launch: unknown argument kind '%c'", kind);
  return false;
}

struct Launch {
  CuFunction function;
  unsigned grid[3];
  unsigned block;
  unsigned shared;
  CuStream stream;
  void** params;
};

int launch_now(void* p) {
  const Launch& l = *static_cast<const Launch*>(p);
  return g_driver.LaunchKernel(l.function, l.grid[0], l.grid[1], l.grid[2], l.block, 1, 1, l.shared, l.stream, l.params, nullptr);
}

PyObject* launch(PyObject*, PyObject* args) {
  int gx = 0, gy = 0, gz = 0, num_warps = 0, num_ctas = 0, shared = 0;
  unsigned long long stream = 0, function = 0, global_scratch = 0, profile_scratch = 0;
  const char* kinds = nullptr;
  PyObject* values = nullptr;
  if (!PyArg_ParseTuple(args, "iiiKKiiisO!KK", &gx, &gy, &gz, &stream, &function, &num_warps, &num_ctas, &shared, &kinds, &PyTuple_Type,
                        &values, &global_scratch, &profile_scratch))
    return nullptr;
  if (num_ctas != 1) return raise(std::string(kUnsupported) + " thread-block clusters (num_ctas=" + std::to_string(num_ctas) + ")");
  const size_t n = std::strlen(kinds);
  if (static_cast<Py_ssize_t>(n) != PyTuple_GET_SIZE(values)) return raise("launch: as many kinds as arguments");
  if (gx < 0 || gy < 0 || gz < 0 || num_warps <= 0 || shared < 0) return raise("launch: a negative grid, warp count or shared size");
  std::vector<std::uint64_t> slots(n + 2, 0);
  std::vector<void*> params(n + 2, nullptr);
  for (size_t i = 0; i < n; ++i) {
    if (!pack(kinds[i], PyTuple_GET_ITEM(values, static_cast<Py_ssize_t>(i)), &slots[i], static_cast<int>(i))) return nullptr;
    params[i] = &slots[i];
  }
  // Every Triton kernel takes its global and profile scratch pointers last.
  slots[n] = global_scratch;
  slots[n + 1] = profile_scratch;
  params[n] = &slots[n];
  params[n + 1] = &slots[n + 1];
  if (static_cast<long long>(gx) * gy * gz == 0) Py_RETURN_NONE;
  Launch l{reinterpret_cast<CuFunction>(static_cast<std::uintptr_t>(function)),
           {static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz)},
           static_cast<unsigned>(32 * num_warps),
           static_cast<unsigned>(shared),
           reinterpret_cast<CuStream>(static_cast<std::uintptr_t>(stream)),
           params.data()};
  CuResult r = kSuccess;
  Py_BEGIN_ALLOW_THREADS;
  r = g_driver.WatchedLaunch(l.stream, launch_now, &l);
  Py_END_ALLOW_THREADS;
  if (r != kSuccess) return raise(cu_error(r, "cuLaunchKernel (a Triton kernel)"));
  Py_RETURN_NONE;
}

PyObject* unsupported(PyObject* self, PyObject*) { return raise(std::string(kUnsupported) + " " + PyUnicode_AsUTF8(self)); }

PyMethodDef kMethods[] = {
    {"driver_version", driver_version, METH_NOARGS, nullptr},
    {"get_device_properties", get_device_properties, METH_VARARGS, nullptr},
    {"load_binary", load_binary, METH_VARARGS, nullptr},
    {"launch", launch, METH_VARARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef kUnsupportedMethod = {"unsupported", unsupported, METH_VARARGS, nullptr};

}  // namespace

PyRef triton_driver_module(std::string* why) {
  if (std::string err = load_driver(); !err.empty()) {
    *why = err;
    return PyRef();
  }
  PyRef module = PyRef::steal(PyModule_New("kernelgate_triton_driver"));
  if (!module || PyModule_AddFunctions(module.get(), kMethods) != 0) {
    *why = "cannot create the Triton driver module";
    return PyRef();
  }
  // Triton's other utilities, each refusing with its own name.
  for (const char* name : {"cuOccupancyMaxActiveClusters", "set_printf_fifo_size", "fill_tma_descriptor"}) {
    PyRef self = PyRef::steal(PyUnicode_FromString(name));
    PyRef f = self ? PyRef::steal(PyCFunction_New(&kUnsupportedMethod, self.get())) : PyRef();
    if (!f || PyModule_AddObject(module.get(), name, f.release()) != 0) {
      *why = "cannot create the Triton driver module";
      return PyRef();
    }
  }
  return module;
}

}  // namespace kg::runner::python
