// Starting the python kind's interpreter: see interpreter.h.
#include "interpreter.h"

#include "inline_extensions.h"
#include "triton_driver.h"

#include "kernelgate/protocol.h"
#include "py_ref.h"

#include <Python.h>

#include <string>
#include <vector>

#if !defined(KG_PYTHON_PATH) || !defined(KG_PYTHON_HOME)
#error "KG_PYTHON_PATH (the module path, ':'-separated) and KG_PYTHON_HOME come from loader/runner/python/CMakeLists.txt"
#endif

namespace kg::runner::python {
namespace {

// Run once the interpreter is up, before any submission code: print() sent to stderr, the
// modules kernels commonly use (imported now, while files may still be opened freely), then every
// reference a loaded module holds to the functions that switch the dispatcher observer off
// replaced by one that refuses.
// torch._C._autograd's own module object is edited in place, so re-importing torch._C finds the
// refusing ones too.
constexpr const char* kPrelude = R"PY(
import linecache, math, sys, traceback, types
# print() goes to stderr: whatever reaches the runner's stdout counts as an attempt at the result
# channel (protocol_violation), and a kernel's debugging output is not one.
sys.stdout = sys.stderr

# A pip wheel's vendored libraries (numpy.libs: OpenBLAS, gfortran) are found through
# RPATH=$ORIGIN/..., which the dynamic loader ignores in the runner's secure-execution mode: they
# are loaded here by absolute path first, so that their sonames are already resolved.
def _kg_preload_vendored():
    import ctypes, os
    pending = []
    for root in sys.path:
        d = os.path.join(root, "numpy.libs")
        if os.path.isdir(d):
            pending += [os.path.join(d, f) for f in sorted(os.listdir(d)) if ".so" in f]
    while pending:
        left = []
        for path in pending:
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                left.append(path)  # needs another one of them first
        if len(left) == len(pending):
            break
        pending = left

_kg_preload_vendored()
del _kg_preload_vendored
import torch
import torch.nn.functional
try:
    import numpy
except ImportError:
    pass

def _kg_take_out_of_reach():
    import sys
    autograd = torch._C._autograd
    names = ("_enable_record_function", "_clear_callbacks")
    originals = [(n, getattr(autograd, n)) for n in names if hasattr(autograd, n)]
    def refusing(name):
        def refused(*args, **kwargs):
            raise PermissionError("kernelgate: torch's " + name + " is not available to a python kernel "
                                  "(it would switch off the runner's dispatcher observer)")
        return refused
    for module in list(sys.modules.values()):
        d = getattr(module, "__dict__", None)
        if not isinstance(d, dict):
            continue
        for key, value in list(d.items()):
            for name, original in originals:
                if value is original:
                    d[key] = refusing(name)

_kg_take_out_of_reach()
del _kg_take_out_of_reach

# torch.utils.cpp_extension would compile in the run box (ninja, a compiler, setuptools): in its
# place a module whose load_inline finds the library kernelgate built for the call, staged beside
# the source (KG_LOAD_EXTENSION), or records the call for the supervisor to build
# (KG_REQUEST_EXTENSION, a KernelBench solution's first run) and returns functions that are not
# there yet; load (source files) and anything kernelgate cannot build refuse with the marker.
def _kg_cpp_extension():
    import hashlib
    import re
    m = types.ModuleType("torch.utils.cpp_extension")
    marker = KG_CPP_EXTENSION_REFUSED
    load_built, request = KG_LOAD_EXTENSION, KG_REQUEST_EXTENSION
    loaded = {}
    def refuse(what):
        raise RuntimeError(marker + " " + what + " (docs/kernelbench.md, \"load_inline\")")
    def text(value, field):
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return "\n".join(value)
        raise TypeError("load_inline: " + field + " must be a string or a list of strings")
    def flags(value, field):
        return text([value] if isinstance(value, str) else (list(value) if value is not None else None), field)
    # functions=None: the source's own PYBIND11_MODULE binds each Python name to a C++ function
    # (m.def("forward", &my_forward, ...)); kernelgate registers those C++ functions and gives
    # them the bound names. A binding by lambda or by a qualified name cannot be registered.
    binding = re.compile(r'\.def\s*\(\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*,\s*&?\s*([A-Za-z_][A-Za-z0-9_:]*)\s*([,)])')
    def bound_functions(cpp):
        if "PYBIND11_MODULE" not in cpp:
            refuse("an extension with neither functions= nor a PYBIND11_MODULE in its cpp_sources")
        body = cpp[cpp.index("PYBIND11_MODULE"):]
        names = {}
        for py_name, cpp_name, _ in binding.findall(body):
            if "::" in cpp_name:
                refuse("a PYBIND11_MODULE binding of the qualified name " + cpp_name + ": kernelgate registers unqualified functions")
            names[py_name] = cpp_name
        if not names or body.count(".def(") != len(binding.findall(body)):
            refuse("a PYBIND11_MODULE that binds lambdas or expressions: kernelgate registers functions bound by name (m.def(\"f\", &f))")
        return names
    class Extension:
        def __init__(self, name, ns, functions, aliases):
            self.__name__ = name
            self._kg_ops = getattr(torch.ops, ns)
            self._kg_functions = tuple(functions)
            self._kg_aliases = dict(aliases)
        def __getattr__(self, attr):
            aliases = self.__dict__.get("_kg_aliases", {})
            if attr in aliases:
                return getattr(self.__dict__["_kg_ops"], aliases[attr])
            if attr in self.__dict__.get("_kg_functions", ()) and not aliases:
                return getattr(self.__dict__["_kg_ops"], attr)
            raise AttributeError("load_inline extension " + repr(self.__dict__.get("__name__")) + " has no function " + repr(attr))
    class Pending:
        def __init__(self, name):
            self.__name__ = name
        def __getattr__(self, attr):
            name = self.__dict__.get("__name__")
            def not_built(*args, **kwargs):
                refuse("load_inline extension " + repr(name) + " for its function " + repr(attr) +
                       " now: kernelgate builds the extensions a source asks for while it is imported and its model built")
            return not_built
    def load_inline(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None, extra_cuda_cflags=None,
                    extra_ldflags=None, extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None,
                    is_python_module=True, with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False, **kwargs):
        if not is_python_module:
            refuse("an extension with is_python_module=False")
        aliases = {}
        if functions is None:
            aliases = bound_functions(text(cpp_sources, "cpp_sources"))
            functions = list(dict.fromkeys(aliases.values()))
        if isinstance(functions, str):
            functions = [functions]
        functions = list(functions)
        if not all(isinstance(f, str) for f in functions):
            raise TypeError("load_inline: functions must be names (strings)")
        cuda = text(cuda_sources, "cuda_sources")
        fields = (str(name), text(cpp_sources, "cpp_sources"), cuda,
                  "1" if (bool(cuda) if with_cuda is None else with_cuda) else "0", "\n".join(functions),
                  flags(extra_cflags, "extra_cflags"), flags(extra_cuda_cflags, "extra_cuda_cflags"),
                  flags(extra_ldflags, "extra_ldflags"))
        h = hashlib.sha256(b"kgext1\n")
        for f in fields:
            b = f.encode("utf-8")
            h.update(str(len(b)).encode("ascii") + b":" + b)
        key = h.hexdigest()
        if key in loaded:
            return loaded[key]
        if load_built(key):
            loaded[key] = Extension(fields[0], "kgext_" + key[:16], functions, aliases)
            return loaded[key]
        if not request(fields):
            refuse("load_inline's sources for a BackendBench-layout python kernel yet")
        return Pending(fields[0])
    def load(*args, **kwargs):
        refuse("load()'s source files: it builds load_inline's sources only")
    m.load_inline = load_inline
    m.load = load
    m.CUDA_HOME = None
    m.ROCM_HOME = None
    sys.modules[m.__name__] = m
    import torch.utils
    torch.utils.cpp_extension = m

_kg_cpp_extension()
del _kg_cpp_extension, KG_CPP_EXTENSION_REFUSED, KG_LOAD_EXTENSION, KG_REQUEST_EXTENSION
)PY";

// Triton, run after torch.cuda's initialisation and before any submission code. With
// KG_TRITON_DRIVER (triton_driver.cc; a cuda runner whose source names Triton) Triton is imported
// now, while the audit hook is not yet armed (it imports subprocess), and the three things its JIT
// would do at a kernel's first launch that the box refuses are replaced:
//   - ptxas (a process): the PTX is handed on as the "cubin" and the driver's JIT compiles it
//     in-process when it is loaded; Triton is told the CUDA release of its bundled ptxas (read
//     from that binary) or the driver's, whichever is older, so its PTX is one the driver takes;
//   - gcc building cuda_utils and a launcher per signature (processes, files written): the
//     functions of KG_TRITON_DRIVER, written once in C++ (its launches go through the device work
//     watch);
//   - its cache on disk (files written): a cache in this process's memory, read back through
//     triton.compiler.compiler's Path.
// Otherwise (a cpu runner, a source that does not name Triton, Triton missing or changed) `import
// triton` fails with the marker: kernelgate's limit, not the kernel's failure. torch's own probes
// (`has_triton()`) catch the ImportError and carry on without it.
constexpr const char* kTritonPrelude = R"PY(
def _kg_triton_setup(drv):
    import os, re
    import triton
    import triton.language
    from triton import knobs
    from triton.runtime import _allocation
    import triton.runtime.cache as tcache
    import triton.runtime.driver as tdriver
    import triton.compiler.compiler as tcompiler
    import triton.backends.nvidia.driver as nvdriver
    import triton.backends.nvidia.compiler as nvcompiler
    unsupported = "kernelgate: this Triton feature is not supported in the runner:"

    def release(text):
        m = re.search(rb"Cuda compilation tools, release (\d+)\.(\d+)", text)
        return (int(m.group(1)), int(m.group(2))) if m else None
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    bundled = None
    if os.path.isfile(ptxas):
        with open(ptxas, "rb") as f:
            bundled = release(f.read())
    v = drv.driver_version()
    driver = (v // 1000, (v % 1000) // 10)
    cuda = "%d.%d" % (min(driver, bundled) if bundled else driver)
    tool = knobs.NvidiaTool("kernelgate: no ptxas, the CUDA driver's PTX JIT", cuda)
    nvcompiler.get_ptxas = lambda arch: tool
    nvcompiler.get_ptxas_version = lambda arch=80: "kernelgate-driver-jit-" + cuda
    def make_cubin(self, src, metadata, opt, capability):
        return src.encode("utf-8")  # PTX; load_binary adds the terminating zero and the driver JITs it
    nvcompiler.CUDABackend.make_cubin = make_cubin

    files, groups = {}, {}
    prefix = "kernelgate-memory:"
    class MemoryFile:
        def __init__(self, name, data):
            self.name, self.suffix, self._data = name, os.path.splitext(name)[1], data
        def read_bytes(self):
            return self._data
        def read_text(self):
            return self._data.decode("utf-8")
    class MemoryCache(tcache.CacheManager):
        def __init__(self, key, override=False, dump=False):
            self.key = key
            self.files = files.setdefault(key, {})
            self.groups = groups.setdefault(key, {})
        def _path(self, filename):
            return prefix + self.key + "/" + filename
        def get_file(self, filename):
            return self._path(filename) if filename in self.files else None
        def put(self, data, filename, binary=True):
            self.files[filename] = data if isinstance(data, bytes) else str(data).encode("utf-8")
            return self._path(filename)
        def get_group(self, filename):
            group = self.groups.get(filename)
            return dict(group) if group is not None else None
        def put_group(self, filename, group):
            self.groups[filename] = dict(group)
    knobs.cache.manager_class = MemoryCache
    disk_path = tcompiler.Path
    def path(p, *more):
        if not more and isinstance(p, str) and p.startswith(prefix):
            key, _, name = p[len(prefix):].partition("/")
            return MemoryFile(name, files[key][name])
        return disk_path(p, *more)
    tcompiler.Path = path

    class Utils:
        def __init__(self):
            self.load_binary = drv.load_binary
            self.get_device_properties = drv.get_device_properties
            self.cuOccupancyMaxActiveClusters = drv.cuOccupancyMaxActiveClusters
            self.set_printf_fifo_size = drv.set_printf_fifo_size
            self.fill_tma_descriptor = drv.fill_tma_descriptor
    kinds = {"i1": "b", "i8": "b", "i16": "h", "i32": "i", "i64": "l", "u1": "B", "u8": "B", "u16": "H", "u32": "I",
             "u64": "K", "fp16": "e", "bf16": "r", "fp32": "f", "f32": "f", "fp64": "d"}
    def kind_of(ty):
        if ty == "constexpr":
            return None
        if ty.startswith("*"):
            return "p"
        if ty not in kinds:
            raise RuntimeError(unsupported + " a kernel argument of type " + ty)
        return kinds[ty]
    class Launcher:
        def __init__(self, src, metadata):
            self.signature = list(src.signature.values())
            for ty in self.signature:
                if isinstance(ty, str) and ty.startswith("tensordesc"):
                    raise RuntimeError(unsupported + " tensor descriptors (TMA)")
            if getattr(metadata, "launch_cooperative_grid", False):
                raise RuntimeError(unsupported + " cooperative launches")
            if getattr(metadata, "launch_pdl", False):
                raise RuntimeError(unsupported + " programmatic dependent launches")
            self.num_ctas = getattr(metadata, "num_ctas", 1)
            self.scratch = [(metadata.global_scratch_size, metadata.global_scratch_align, _allocation._allocator),
                            (metadata.profile_scratch_size, metadata.profile_scratch_align, _allocation._profile_allocator)]
        def __call__(self, gridX, gridY, gridZ, stream, function, *args):
            kernel_metadata, launch_metadata, enter_hook, exit_hook = args[:4]
            letters, values = [], []
            def add(ty, value):
                if isinstance(ty, tuple):
                    for t, v in zip(ty, value):
                        add(t, v)
                    return
                k = kind_of(ty)
                if k is None:
                    return
                if k == "p" and value is not None and not isinstance(value, int):
                    value = value.data_ptr()
                letters.append(k)
                values.append(value)
            for ty, value in zip(self.signature, args[4:]):
                add(ty, value)
            buffers = []
            def scratch(size, align, allocator):
                if size <= 0:
                    return 0
                buf = allocator.get()(gridX * gridY * gridZ * self.num_ctas * size, align, stream)
                buffers.append(buf)
                return buf if isinstance(buf, int) else buf.data_ptr()
            global_scratch, profile_scratch = (scratch(*s) for s in self.scratch)
            num_warps, num_ctas, shared = kernel_metadata
            if enter_hook is not None:
                enter_hook(launch_metadata)
            drv.launch(gridX, gridY, gridZ, stream, function, num_warps, num_ctas, shared, "".join(letters), tuple(values),
                       global_scratch, profile_scratch)
            if exit_hook is not None:
                exit_hook(launch_metadata)
    nvdriver.CudaUtils = Utils
    nvdriver.CudaLauncher = Launcher
    # triton.runtime.driver is the DriverConfig object; its driver is made now, with kernelgate's functions.
    tdriver._default = None
    tdriver.reset_active()

    # One kernel compiled, loaded and launched now, before the audit hook is armed: what Triton
    # imports and initialises lazily at a first launch (LLVM, the driver's JIT, modules the hook
    # would refuse to a kernel) happens here, and a Triton this set-up does not fit is found here.
    import linecache, torch
    name = "<kernelgate-triton-warm-up>"
    source = ("import triton\nimport triton.language as tl\n@triton.jit\n"
              "def warm_up(x_ptr, n, BLOCK: tl.constexpr):\n"
              "    offs = tl.arange(0, BLOCK)\n"
              "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)\n")
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    scope = {}
    exec(compile(source, name, "exec"), scope)
    x = torch.zeros(16, device="cuda")
    scope["warm_up"][(1,)](x, 16, BLOCK=16)
    torch.cuda.synchronize()
    if not bool((x == 1).all()):
        raise RuntimeError("the warm-up kernel computed a wrong answer")

def _kg_triton(drv, why):
    import sys
    reason = why
    if drv is not None:
        try:
            _kg_triton_setup(drv)
            return
        except Exception as e:  # Triton missing, or not the Triton this was written for
            reason = "Triton could not be set up: %s: %s" % (type(e).__name__, e)
    for name in [n for n in sys.modules if n == "triton" or n.startswith("triton.")]:
        del sys.modules[name]
    message = KG_TRITON_REFUSED + (" (" + reason + ")" if reason else "") + " (docs/submissions.md, \"Python kernels\")"
    class Refused:
        def find_spec(self, name, path=None, target=None):
            if name == "triton" or name.startswith("triton."):
                raise ImportError(message, name=name)
            return None
    sys.meta_path.insert(0, Refused())

_kg_triton(KG_TRITON_DRIVER, KG_TRITON_WHY)
del _kg_triton, _kg_triton_setup, KG_TRITON_DRIVER, KG_TRITON_WHY
)PY";

std::vector<std::wstring> split_path(const char* path) {
  std::vector<std::wstring> out;
  std::string part;
  for (const char* p = path;; ++p) {
    if (*p == ':' || *p == 0) {
      if (!part.empty()) out.emplace_back(part.begin(), part.end());
      part.clear();
      if (*p == 0) break;
    } else {
      part += *p;
    }
  }
  return out;
}

// "" or why the configuration was refused.
std::string status_text(const PyStatus& s, const char* what) {
  return std::string(what) + ": " + (s.func ? std::string(s.func) + ": " : "") + (s.err_msg ? s.err_msg : "failed");
}

std::string initialise() {
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  struct Clear {
    PyConfig* c;
    ~Clear() { PyConfig_Clear(c); }
  } clear{&config};
  config.site_import = 0;
  config.write_bytecode = 0;
  config.install_signal_handlers = 0;
  config.user_site_directory = 0;
  config.pathconfig_warnings = 0;
  config.parse_argv = 0;
  config.module_search_paths_set = 1;
  for (const std::wstring& p : split_path(KG_PYTHON_PATH)) {
    PyStatus s = PyWideStringList_Append(&config.module_search_paths, p.c_str());
    if (PyStatus_Exception(s)) return status_text(s, "module path");
  }
  // The home (sys.base_prefix) given, Python looks for no pyvenv.cfg beside or above kg-runner:
  // that open would fall outside the box's system trees and be refused as a violation.
  const std::string home = KG_PYTHON_HOME;
  const std::wstring whome(home.begin(), home.end());
  PyStatus s = PyConfig_SetString(&config, &config.home, whome.c_str());
  if (PyStatus_Exception(s)) return status_text(s, "home");
  s = PyConfig_SetString(&config, &config.program_name, L"kg-runner");
  if (PyStatus_Exception(s)) return status_text(s, "program name");
  s = Py_InitializeFromConfig(&config);
  if (PyStatus_Exception(s)) return status_text(s, "cannot start the interpreter");
  return "";
}

// Runs kTritonPrelude: Triton set up (a cuda runner asked for it) or refused. "" or why not.
std::string set_up_triton(PyObject* globals, bool cuda, bool triton) {
  std::string why = triton ? "" : cuda ? "the source does not name triton" : "Triton kernels run on cuda:0 only";
  PyRef driver;
  if (triton) driver = triton_driver_module(&why);
  PyRef why_text = PyRef::steal(PyUnicode_FromString(why.c_str()));
  if (!why_text || PyDict_SetItemString(globals, "KG_TRITON_WHY", why_text.get()) != 0 ||
      PyDict_SetItemString(globals, "KG_TRITON_DRIVER", driver ? driver.get() : Py_None) != 0)
    return "cannot pass the Triton driver to the interpreter";
  PyRef code = PyRef::steal(Py_CompileString(kTritonPrelude, "<kernelgate-triton>", Py_file_input));
  PyRef done = code ? PyRef::steal(PyEval_EvalCode(code.get(), globals, globals)) : PyRef();
  if (!done) return "setting up Triton in the runner failed:\n" + take_exception(3000);
  return "";
}

}  // namespace

std::string start_interpreter(bool cuda) {
  if (Py_IsInitialized()) return "";
  install_audit_hook();
  if (std::string err = initialise(); !err.empty()) return err;
  std::string error;
  {
    PyRef main = PyRef::borrow(PyImport_AddModule("__main__"));
    PyObject* globals = main ? PyModule_GetDict(main.get()) : nullptr;
    // Named so that a refusal's traceback says whose code refused.
    PyRef marker = PyRef::steal(PyUnicode_FromString(protocol::kCppExtensionRefused));
    if (globals && marker) PyDict_SetItemString(globals, "KG_CPP_EXTENSION_REFUSED", marker.get());
    PyRef refused = PyRef::steal(PyUnicode_FromString(protocol::kTritonRefused));
    if (globals && refused) PyDict_SetItemString(globals, "KG_TRITON_REFUSED", refused.get());
    PyRef load = inline_extension_load_function(), request = inline_extension_request_function();
    if (globals && load && request) {
      PyDict_SetItemString(globals, "KG_LOAD_EXTENSION", load.get());
      PyDict_SetItemString(globals, "KG_REQUEST_EXTENSION", request.get());
    }
    PyRef code = PyRef::steal(Py_CompileString(kPrelude, "<kernelgate>", Py_file_input));
    PyRef done = code && globals ? PyRef::steal(PyEval_EvalCode(code.get(), globals, globals)) : PyRef();
    if (!done) error = "importing torch in the runner failed:\n" + take_exception(3000);
    if (done && cuda) {
      PyRef init = PyRef::steal(PyRun_String("torch.cuda.init()\n", Py_file_input, globals, globals));
      if (!init) error = "torch.cuda.init() failed in the runner:\n" + take_exception(3000);
    }
  }
  PyEval_SaveThread();  // the GIL is taken again per call (py_ref.h's Gil)
  return error;
}

std::string ready_for_sources(bool cuda, bool triton) {
  std::string error;
  {
    Gil gil;
    PyRef main = PyRef::borrow(PyImport_AddModule("__main__"));
    PyObject* globals = main ? PyModule_GetDict(main.get()) : nullptr;
    error = globals ? set_up_triton(globals, cuda, triton) : "the interpreter has no __main__";
  }
  arm_audit_hook();
  return error;
}

std::string sanitise(const std::string& text, size_t cap) {
  std::string out = text;
  for (char& c : out)
    if (c != '\n' && c != '\t' && (c < 32 || c >= 127)) c = '?';
  if (out.size() <= cap) return out;
  const std::string marker = "[... " + std::to_string(out.size() - cap) + " bytes cut]\n";
  const size_t keep = cap > marker.size() ? cap - marker.size() : 0;
  return marker + out.substr(out.size() - keep);
}

std::string take_exception(size_t cap) {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  if (!type) return "(no Python exception was set)";
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  PyRef t = PyRef::steal(type), v = PyRef::steal(value), b = PyRef::steal(tb);
  std::string text;
  PyRef module = PyRef::steal(PyImport_ImportModule("traceback"));
  PyRef lines = module ? PyRef::steal(PyObject_CallMethod(module.get(), "format_exception", "OOO", t.get(), v ? v.get() : Py_None,
                                                          b ? b.get() : Py_None))
                       : PyRef();
  PyRef joined = lines ? PyRef::steal(PyUnicode_Join(PyRef::steal(PyUnicode_FromString("")).get(), lines.get())) : PyRef();
  const char* utf8 = joined ? PyUnicode_AsUTF8(joined.get()) : nullptr;
  if (utf8) {
    text = utf8;
  } else {
    // The formatting itself failed (a hostile __str__): the exception's type name is all we say.
    PyErr_Clear();
    text = std::string(reinterpret_cast<PyTypeObject*>(t.get())->tp_name) + " (its traceback could not be formatted)";
  }
  return sanitise(text, cap);
}

}  // namespace kg::runner::python
