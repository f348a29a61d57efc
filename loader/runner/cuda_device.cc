// kg-runner's CUDA side: device set-up, exact copies to cuda:0, the timed call with CUDA events
// and its flush, and the nvrtc kind's module loading and launching. Compiled only when the
// linked libtorch has CUDA; every CUDA call is checked, every CUDA resource has an owner.
#include "runner.h"

#if KG_RUNNER_CUDA
#include "cudart/device_work.h"
#include "kernelgate/launch.h"
#include <ATen/Context.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

namespace kg::runner {
namespace launch = kg::protocol::launch;
namespace {

// The driver API (nvrtc kind), reached through the runtime's entry points: the runner does not
// link libcuda.so.1, so a cpu runner, whose sandbox has no driver, starts without it. Resolved in
// cuda_setup, before the filter tightens.
struct DriverApi {
  decltype(&::cuGetErrorName) GetErrorName = nullptr;
  decltype(&::cuGetErrorString) GetErrorString = nullptr;
  decltype(&::cuModuleLoadData) ModuleLoadData = nullptr;
  decltype(&::cuModuleUnload) ModuleUnload = nullptr;
  decltype(&::cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&::cuFuncSetAttribute) FuncSetAttribute = nullptr;
  decltype(&::cuFuncGetParamInfo) FuncGetParamInfo = nullptr;  // driver 12.4+; may stay null
  decltype(&::cuLaunchKernel) LaunchKernel = nullptr;
  decltype(&::cuCtxGetCurrent) CtxGetCurrent = nullptr;
};
DriverApi g_driver;

template <typename F>
bool resolve_driver(const char* name, F* out, bool required) {
  void* fp = nullptr;
  cudaDriverEntryPointQueryResult status{};
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fp, 12040, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || !fp) {
    if (required) throw DeviceError(std::string("the CUDA driver has no ") + name);
    return false;
  }
  *out = reinterpret_cast<F>(fp);
  return true;
}

void load_driver_api() {
  resolve_driver("cuGetErrorName", &g_driver.GetErrorName, true);
  resolve_driver("cuGetErrorString", &g_driver.GetErrorString, true);
  resolve_driver("cuModuleLoadData", &g_driver.ModuleLoadData, true);
  resolve_driver("cuModuleUnload", &g_driver.ModuleUnload, true);
  resolve_driver("cuModuleGetFunction", &g_driver.ModuleGetFunction, true);
  resolve_driver("cuFuncSetAttribute", &g_driver.FuncSetAttribute, true);
  resolve_driver("cuFuncGetParamInfo", &g_driver.FuncGetParamInfo, false);
  resolve_driver("cuLaunchKernel", &g_driver.LaunchKernel, true);
  resolve_driver("cuCtxGetCurrent", &g_driver.CtxGetCurrent, true);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw DeviceError(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

void check_cu(CUresult r, const std::string& what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  if (g_driver.GetErrorName) g_driver.GetErrorName(r, &name);
  if (g_driver.GetErrorString) g_driver.GetErrorString(r, &text);
  std::string msg = what + ": " + (name ? name : "?") + " (" + (text ? text : "?") + ")";
  // Launch-time faults leave the context unusable; argument errors do not.
  if (r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
      r == CUDA_ERROR_MISALIGNED_ADDRESS || r == CUDA_ERROR_HARDWARE_STACK_ERROR || r == CUDA_ERROR_LAUNCH_TIMEOUT ||
      r == CUDA_ERROR_ASSERT || r == CUDA_ERROR_INVALID_PC)
    throw DeviceError(msg);
  throw std::runtime_error(msg);
}

struct Event {
  cudaEvent_t e = nullptr;
  Event() { check(cudaEventCreate(&e), "cudaEventCreate"); }
  ~Event() {
    if (e) cudaEventDestroy(e);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

struct DeviceBuffer {
  void* p = nullptr;
  size_t n = 0;
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
};

struct State {
  std::unique_ptr<Event> start, stop;
  DeviceBuffer flush;
  size_t l2_bytes = 0;
  size_t persisting_limit = 0;  // as found at set-up
  unsigned counter = 0;
  size_t reserved = 0;  // the largest cuda_reserve so far
};
State* g_state = nullptr;

cudaStream_t stream() { return c10::cuda::getCurrentCUDAStream(0).stream(); }

// An exact copy on cuda:0 (from the CPU or from cuda:0): the whole storage span, then the same
// view onto it.
at::Tensor exact_copy_to_cuda(const at::Tensor& t) {
  if (!t.defined()) return t;
  const int64_t n = static_cast<int64_t>(t.storage().nbytes() / t.element_size());
  at::Tensor flat_src = at::empty({0}, t.options()).set_(t.storage(), 0, {n}, {1});
  at::Tensor flat = at::empty({n}, t.options().device(at::kCUDA, 0));
  flat.copy_(flat_src, /*non_blocking=*/t.is_cuda());
  return flat.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

// `value` with every tensor in it (alone, in a list, an optional list or a tuple) replaced by f's.
c10::IValue map_tensors(const c10::IValue& v, const std::function<at::Tensor(const at::Tensor&)>& f) {
  if (v.isTensor()) return f(v.toTensor());
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(f(t));
    return c10::IValue(out);
  }
  if (v.isList() && v.toList().elementType()->kind() == c10::TypeKind::OptionalType) {
    c10::List<c10::optional<at::Tensor>> out;
    auto l = v.toList();
    for (size_t i = 0; i < l.size(); ++i) {
      c10::IValue e = l.get(i);
      if (e.isNone()) out.push_back(c10::nullopt);
      else out.push_back(f(e.toTensor()));
    }
    return c10::IValue(out);
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> elems;
    for (const auto& e : v.toTupleRef().elements()) elems.push_back(map_tensors(e, f));
    return c10::ivalue::Tuple::create(std::move(elems));
  }
  return v;
}

}  // namespace

std::string cuda_setup() {
  try {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) return std::string("no CUDA device visible (") + cudaGetErrorString(e) + ")";
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaFree(nullptr), "context creation");
    load_driver_api();
    // kg-runner's own definitions of libcudart's launch entry points forward to libcudart's.
    if (!device_work::install()) return "the device work watch cannot find libcudart's launch entry points";
    if (!device_work::create_bracket_events()) return "cannot create the device work watch's events";
    auto s = std::make_unique<State>();
    s->start = std::make_unique<Event>();
    s->stop = std::make_unique<Event>();
    int l2 = 0;
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "cudaDeviceGetAttribute(L2)");
    s->l2_bytes = static_cast<size_t>(l2);
    check(cudaDeviceGetLimit(&s->persisting_limit, cudaLimitPersistingL2CacheSize), "cudaDeviceGetLimit(persisting L2)");
    s->flush.n = std::max<size_t>(2 * s->l2_bytes, 64u << 20);
    check(cudaMalloc(&s->flush.p, s->flush.n), "cudaMalloc(flush buffer)");
    // Eager in the runner computes what the supervisor's reference computes: IEEE float32
    // convolutions with cuDNN's deterministic algorithms (harness/src/reference.cc). On the H200
    // cuDNN's default choice for convolution_backward's weight gradient differed from the
    // deterministic one by 0.09 on 13.4, and between two identical calls.
    at::globalContext().setAllowTF32CuDNN(false);
    at::globalContext().setDeterministicCuDNN(true);
    at::globalContext().setBenchmarkCuDNN(false);
    // Touch torch's CUDA state (allocator, current stream) while the filter still allows set-up.
    at::empty({1}, at::TensorOptions().device(at::kCUDA, 0)).zero_();
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    g_state = s.release();
    return "";
  } catch (const std::exception& e) { return e.what(); }
}

bool cuda_ready() { return g_state != nullptr; }

void region_views_to_cuda(const uint8_t* first, size_t bytes, std::vector<std::vector<c10::IValue>>& sets) {
  at::Tensor copy = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA, 0));
  if (bytes) copy.copy_(at::from_blob(const_cast<uint8_t*>(first), {static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte)));
  auto* device_first = static_cast<uint8_t*>(copy.data_ptr());
  auto on_device = [&](const at::Tensor& t) {
    if (!t.defined()) return t;
    const size_t n = t.storage().nbytes();
    if (n == 0) return exact_copy_to_cuda(t);  // no bytes to point at (the one copy may be empty)
    const auto* host = static_cast<const uint8_t*>(t.storage().data());
    if (host < first || n > bytes || host - first > static_cast<ptrdiff_t>(bytes - n))
      throw std::runtime_error("an input tensor's bytes lie outside the call region's input sets");
    // The storage keeps the one copy alive; each tensor keeps its storage's size, strides and offset.
    at::Tensor storage = at::from_blob(
        device_first + (host - first), {static_cast<int64_t>(n / t.element_size())}, [copy](void*) {}, t.options().device(at::kCUDA, 0));
    return storage.as_strided(t.sizes(), t.strides(), t.storage_offset());
  };
  for (auto& set : sets)
    for (auto& v : set) v = map_tensors(v, on_device);
  check(cudaStreamSynchronize(stream()), "copying inputs to cuda:0");
}

std::vector<c10::IValue> cuda_fresh_copies(const std::vector<c10::IValue>& values) {
  std::vector<c10::IValue> out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(map_tensors(v, exact_copy_to_cuda));
  return out;
}

void cuda_reserve(size_t bytes) {
  State& s = *g_state;
  if (bytes <= s.reserved) return;
  try {
    at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA, 0));
    s.reserved = bytes;
  } catch (const c10::Error&) {
    cudaGetLastError();
    s.reserved = bytes;  // not tried again at this size
  }
}

uint32_t cuda_before_timed(int64_t bytes) {
  uint32_t ev = 0;
  State& s = *g_state;
  // Persisting L2: a call may have raised the limit or set an access-policy window on the
  // stream; both survive a plain flush. Report it, put it back, and reset the persisting lines.
  size_t limit = 0;
  check(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize), "cudaDeviceGetLimit(persisting L2)");
  if (limit != s.persisting_limit) {
    ev |= protocol::kEvidencePersistingL2Changed;
    check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, s.persisting_limit), "cudaDeviceSetLimit(persisting L2)");
  }
  cudaStreamAttrValue window{};
  check(cudaStreamGetAttribute(stream(), cudaStreamAttributeAccessPolicyWindow, &window), "cudaStreamGetAttribute");
  if (window.accessPolicyWindow.num_bytes != 0) {
    ev |= protocol::kEvidencePersistingL2Changed;
    cudaStreamAttrValue none{};
    check(cudaStreamSetAttribute(stream(), cudaStreamAttributeAccessPolicyWindow, &none), "cudaStreamSetAttribute");
  }
  check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
  if (bytes >= 0) {
    size_t n = bytes == 0 ? s.flush.n : std::min<size_t>(static_cast<size_t>(bytes), s.flush.n);
    // Writing a buffer larger than L2 evicts whatever the previous call left there.
    check(cudaMemsetAsync(s.flush.p, static_cast<int>(++s.counter & 0xff), n, stream()), "L2 flush");
  }
  return ev;
}

namespace {

// Runs `fn` between the start and stop events on `st`, with the work it queues on streams of its
// own bracketed by events and checked against the streams ordered after `st` (async_escape).
// Timed and untimed calls alike.
void between_events(State& s, cudaStream_t st, const std::function<void()>& fn) {
  struct Bracketing {
    explicit Bracketing(cudaStream_t call_stream) { device_work::arm_timed(call_stream); }
    ~Bracketing() { device_work::disarm_timed(); }
    Bracketing(const Bracketing&) = delete;
    Bracketing& operator=(const Bracketing&) = delete;
  };
  check(cudaEventRecord(s.start->e, st), "cudaEventRecord(start)");
  {
    Bracketing bracketing(st);
    fn();
  }
  check(cudaEventRecord(s.stop->e, st), "cudaEventRecord(stop)");
}

// After the device is idle: side-stream work that began before the call's start event completed
// (it overlapped the runner's own input copies and flush: it did not wait for the inputs, and
// timed events time none of it) or ended after the stop event (the call's stream did not wait
// for it). Joined work lies inside; the margin covers the events' timestamp resolution.
// Work on a stream never ordered after the call's stream is reported whether or not the race
// showed in the timestamps this time.
uint32_t bracketed_work_evidence(const State& s) {
  uint32_t ev = 0;
  if (device_work::outside_timed_region(s.start->e, s.stop->e) > 4e-6) ev |= protocol::kEvidenceWorkOutsideTimedRegion;
  if (device_work::queued_unordered_work()) ev |= protocol::kEvidenceSideStreamNotOrdered;
  return ev;
}

}  // namespace

CudaTimes cuda_timed(const std::function<void()>& fn) {
  State& s = *g_state;
  CudaTimes t;
  cudaStream_t st = stream();
  between_events(s, st, fn);
  check(cudaEventSynchronize(s.stop->e), "the timed call");
  // Anything still running now was not on the timed stream (side streams, daemon kernels).
  auto t0 = std::chrono::steady_clock::now();
  if (cudaStreamQuery(st) != cudaSuccess) t.evidence |= protocol::kEvidenceDeviceBusyAfterCall;
  check(cudaDeviceSynchronize(), "after the timed call");
  // The wait goes back raw: the supervisor compares its median with eager's. One call's wait is
  // no evidence by itself: on the H200, eight evaluations sharing the host made an honest
  // device-to-device copy wait over 1 ms once (a scheduling hiccup, not work).
  t.idle_wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.evidence |= bracketed_work_evidence(s);
  float ms = 0;
  check(cudaEventElapsedTime(&ms, s.start->e, s.stop->e), "cudaEventElapsedTime");
  t.call_s = ms * 1e-3;
  return t;
}

void cuda_check_idle(const char* where) {
  check(cudaDeviceSynchronize(), where);
  check(cudaGetLastError(), where);
}

uint32_t cuda_untimed(const std::function<void()>& fn) {
  State& s = *g_state;
  between_events(s, stream(), fn);
  cuda_check_idle("after the call");
  return bracketed_work_evidence(s);
}

// ---- the nvrtc kind ---------------------------------------------------------------------------

namespace {

struct Module {
  CUmodule m = nullptr;
  ~Module() {
    if (m) g_driver.ModuleUnload(m);
  }
};

struct CompiledLaunch {
  launch::Expr grid[3], block[3], shared;
  std::vector<launch::Expr> args;
  CUfunction fn = nullptr;                     // single kernel
  std::map<std::string, CUfunction> by_dtype;  // or by dtype name
  std::vector<std::string> arg_src;
};

class NvrtcOp : public Op {
 public:
  NvrtcOp(const std::string& cubin_path, const c10::FunctionSchema& schema) : schema_(schema) {
    std::ifstream f(cubin_path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string image = ss.str();
    if (!f || image.empty()) throw std::runtime_error("cannot read " + cubin_path);
    std::string launch_path = cubin_path.substr(0, cubin_path.rfind('/') + 1) + "launch.txt";
    std::ifstream lf(launch_path);
    std::stringstream ls;
    ls << lf.rdbuf();
    table_ = launch::from_text(ls.str());
    // The cubin is untrusted device code; loading it runs none of it.
    check_cu(g_driver.ModuleLoadData(&module_.m, image.data()), "cuModuleLoadData");
    for (const auto& l : table_.launches) {
      CompiledLaunch c;
      for (int i = 0; i < 3; ++i) {
        c.grid[i] = launch::parse_expr(l.grid[i].empty() ? "1" : l.grid[i], "grid");
        c.block[i] = launch::parse_expr(l.block[i].empty() ? "1" : l.block[i], "block");
      }
      c.shared = launch::parse_expr(l.shared_mem.empty() ? "0" : l.shared_mem, "shared_mem");
      for (const auto& a : l.args) c.args.push_back(launch::parse_expr(a, "args"));
      c.arg_src = l.args;
      auto resolve = [&](const std::string& name) {
        auto it = l.lowered.find(name);
        const std::string sym = it == l.lowered.end() ? name : it->second;
        CUfunction fn = nullptr;
        check_cu(g_driver.ModuleGetFunction(&fn, module_.m, sym.c_str()), "cuModuleGetFunction(" + name + ")");
        return fn;
      };
      if (!l.kernel.empty()) c.fn = resolve(l.kernel);
      for (const auto& [dt, n] : l.by_dtype) c.by_dtype[dt] = resolve(n);
      launches_.push_back(std::move(c));
    }
  }

  size_t n_returns() const override { return schema_.returns().size(); }

  void prepare(std::vector<c10::IValue>& args, const protocol::CallMsg& m) override {
    env_.clear();
    originals_.clear();
    outputs_.clear();
    first_dtype_.clear();
    const auto& params = schema_.arguments();
    if (args.size() != params.size()) throw std::runtime_error("argument count does not match the schema");
    for (size_t i = 0; i < params.size(); ++i) {
      c10::IValue& v = args[i];
      const std::string& name = params[i].name();
      if (v.isTensor() && v.toTensor().defined()) {
        at::Tensor t = v.toTensor();
        if (first_dtype_.empty()) first_dtype_ = launch::dtype_name(static_cast<int>(t.scalar_type()));
        if (table_.contiguous_inputs && !t.is_contiguous()) {
          originals_.push_back({i, t});
          t = t.contiguous();
          v = t;
        }
        env_[name] = tensor_value(t);
      } else if (v.isInt()) {
        env_[name] = launch::Value::of_int(v.toInt());
      } else if (v.isBool()) {
        env_[name] = launch::Value::of_int(v.toBool() ? 1 : 0);
      } else if (v.isDouble()) {
        env_[name] = launch::Value::of_float(v.toDouble());
      } else if (v.isScalar()) {
        at::Scalar s = v.toScalar();
        env_[name] = s.isIntegral(true) ? launch::Value::of_int(s.toLong()) : launch::Value::of_float(s.toDouble());
      }
    }
    // Outputs: an alias of a mutated argument (in-place, out=), else a fresh tensor shaped and
    // typed like the reference's, filled with a poison value so unwritten elements show.
    const auto& rets = schema_.returns();
    for (size_t k = 0; k < rets.size(); ++k) {
      at::Tensor o;
      if (rets[k].alias_info() && rets[k].alias_info()->isWrite()) {
        for (size_t i = 0; i < params.size(); ++i)
          if (params[i].alias_info() && params[i].alias_info()->isWrite() &&
              params[i].alias_info()->beforeSets() == rets[k].alias_info()->beforeSets() && args[i].isTensor())
            o = args[i].toTensor();
      }
      if (!o.defined()) {
        if (k >= m.n_outputs) throw std::runtime_error("the nvrtc kind needs the reference's output shapes (CallOptions::output_like)");
        const auto& spec = m.outputs[k];
        if (spec.ndim > 16) throw std::runtime_error("bad output spec");
        std::vector<int64_t> sizes(spec.sizes, spec.sizes + spec.ndim);
        auto st = static_cast<c10::ScalarType>(spec.dtype);
        o = at::empty(sizes, at::TensorOptions().dtype(st).device(at::kCUDA, 0));
        if (at::isFloatingType(st) || at::isComplexType(st)) o.fill_(std::numeric_limits<double>::quiet_NaN());
        else if (st == at::kBool) o.fill_(true);
        else o.fill_(at::isSignedType(st) ? -77 : 77);
      }
      outputs_.push_back(o);
      env_["out" + std::to_string(k)] = tensor_value(o);
    }
    // An op without tensor inputs (a factory) picks its kernel by its first output's dtype.
    if (first_dtype_.empty() && !outputs_.empty()) first_dtype_ = launch::dtype_name(static_cast<int>(outputs_[0].scalar_type()));
  }

  std::vector<c10::IValue> run(std::vector<c10::IValue>&) override {
    CUstream st = reinterpret_cast<CUstream>(c10::cuda::getCurrentCUDAStream(0).stream());
    for (auto& l : launches_) launch_one(l, st);
    return std::vector<c10::IValue>(outputs_.begin(), outputs_.end());
  }

  void finish(std::vector<c10::IValue>& args) override {
    // Mutated arguments that were made contiguous for the kernel are copied back into the caller's layout.
    for (auto& [i, orig] : originals_) {
      const auto& a = schema_.arguments()[i];
      if (a.alias_info() && a.alias_info()->isWrite()) {
        orig.copy_(args[i].toTensor());
        args[i] = orig;
      }
    }
  }

 private:
  static launch::Value tensor_value(const at::Tensor& t) {
    launch::Value v;
    v.type = launch::Value::Type::Tensor;
    v.ptr = reinterpret_cast<uint64_t>(t.data_ptr());
    v.sizes = t.sizes().vec();
    v.strides = t.strides().vec();
    return v;
  }

  // The kernel's parameter sizes from the cubin (driver 12.4+), or null when it cannot tell.
  const std::vector<size_t>* param_sizes(CUfunction fn) {
    auto it = params_.find(fn);
    if (it == params_.end()) {
      std::optional<std::vector<size_t>> sizes;
      size_t offset = 0, size = 0;
      if (g_driver.FuncGetParamInfo && g_driver.FuncGetParamInfo(fn, 0, &offset, &size) == CUDA_SUCCESS) {
        sizes.emplace();
        for (size_t i = 0; i < 256 && g_driver.FuncGetParamInfo(fn, i, &offset, &size) == CUDA_SUCCESS; ++i) sizes->push_back(size);
      }
      it = params_.emplace(fn, sizes).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  int64_t dim(const launch::Expr& e, const char* what, int64_t max) {
    launch::Value v = launch::eval(e, env_);
    if (v.type != launch::Value::Type::Int) throw std::runtime_error(std::string(what) + " must be an integer: " + launch::to_string(e));
    if (v.i < 0 || v.i > max) throw std::runtime_error(std::string(what) + " = " + std::to_string(v.i) + " out of range");
    return v.i;
  }

  void launch_one(CompiledLaunch& l, CUstream st) {
    CUfunction fn = l.fn;
    if (!l.by_dtype.empty()) {
      auto it = l.by_dtype.find(first_dtype_);
      if (it == l.by_dtype.end()) throw std::runtime_error("the launch table has no kernel for dtype " + first_dtype_);
      fn = it->second;
    }
    int64_t g[3], b[3];
    g[0] = dim(l.grid[0], "grid.x", 2147483647);
    g[1] = dim(l.grid[1], "grid.y", 65535);
    g[2] = dim(l.grid[2], "grid.z", 65535);
    for (int i = 0; i < 3; ++i) b[i] = dim(l.block[i], "block", 1024);
    if (g[0] * g[1] * g[2] == 0) return;  // nothing to do (empty input)
    if (b[0] * b[1] * b[2] == 0 || b[0] * b[1] * b[2] > 1024) throw std::runtime_error("block has 0 or more than 1024 threads");
    int64_t shared = dim(l.shared, "shared_mem", 1 << 30);
    if (shared > 48 * 1024)
      check_cu(g_driver.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shared)),
               "dynamic shared memory");
    std::vector<uint64_t> slots(l.args.size());
    std::vector<void*> ptrs(l.args.size());
    const std::vector<size_t>* sizes = param_sizes(fn);
    if (sizes && sizes->size() != l.args.size())
      throw std::runtime_error("the kernel takes " + std::to_string(sizes->size()) + " parameters, args lists " +
                               std::to_string(l.args.size()));
    for (size_t i = 0; i < l.args.size(); ++i) {
      launch::Value v = launch::eval(l.args[i], env_);
      const bool known = sizes != nullptr;
      const size_t size = known ? (*sizes)[i] : 0;
      int width = v.width ? v.width : (known ? static_cast<int>(size) : 8);
      uint8_t* slot = reinterpret_cast<uint8_t*>(&slots[i]);
      const std::string& src = l.arg_src[i];
      if (v.type == launch::Value::Type::Tensor) {
        if (width != 8)
          throw std::runtime_error("args " + src + ": a pointer, but the kernel's parameter has " + std::to_string(width) + " bytes");
        std::memcpy(slot, &v.ptr, 8);
      } else if (v.type == launch::Value::Type::Float) {
        if (width == 4) {
          float x = static_cast<float>(v.f);
          std::memcpy(slot, &x, 4);
        } else if (width == 8) {
          std::memcpy(slot, &v.f, 8);
        } else {
          throw std::runtime_error("args " + src + ": a float for a " + std::to_string(width) + "-byte parameter");
        }
      } else {
        if (width == 4) {
          if (v.i < (v.is_unsigned ? 0 : INT32_MIN) || v.i > (v.is_unsigned ? int64_t{UINT32_MAX} : int64_t{INT32_MAX}))
            throw std::runtime_error("args " + src + " = " + std::to_string(v.i) + " does not fit the kernel's 32-bit parameter");
          int32_t x = static_cast<int32_t>(v.i);
          std::memcpy(slot, &x, 4);
        } else if (width == 8) {
          std::memcpy(slot, &v.i, 8);
        } else {
          throw std::runtime_error("args " + src + ": an integer for a " + std::to_string(width) + "-byte parameter");
        }
      }
      ptrs[i] = slot;
    }
    check_cu(g_driver.LaunchKernel(fn, static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2]),
                                   static_cast<unsigned>(b[0]), static_cast<unsigned>(b[1]), static_cast<unsigned>(b[2]),
                                   static_cast<unsigned>(shared), st, ptrs.empty() ? nullptr : ptrs.data(), nullptr),
             "cuLaunchKernel");
  }

  c10::FunctionSchema schema_;
  launch::Table table_;
  Module module_;
  std::vector<CompiledLaunch> launches_;
  launch::Env env_;
  std::vector<std::pair<size_t, at::Tensor>> originals_;
  std::vector<at::Tensor> outputs_;
  std::string first_dtype_;
  std::map<CUfunction, std::optional<std::vector<size_t>>> params_;
};

}  // namespace

std::unique_ptr<Op> load_nvrtc(const std::string& cubin_path, const std::string& aten_name, const std::string& overload) {
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(aten_name.c_str(), overload.c_str());
  CUcontext ctx = nullptr;
  check_cu(g_driver.CtxGetCurrent(&ctx), "cuCtxGetCurrent");
  if (!ctx) throw std::runtime_error("no current CUDA context");
  return std::make_unique<NvrtcOp>(cubin_path, handle.schema());
}

}  // namespace kg::runner
#endif  // KG_RUNNER_CUDA
