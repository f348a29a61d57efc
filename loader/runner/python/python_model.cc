// KernelBench's files as one dispatcher op each (protocol::kModelSchemaArguments): a problem file's
// Model, get_inputs and get_init_inputs in the reference's runner, a solution file's ModelNew in
// the candidate's. The two never share a process; the supervisor carries the constructor
// arguments, the inputs and the state between them. The runner calls the op boxed like any other,
// so timing, the dispatcher observer, poisoning and the snapshots around a call are unchanged.
#include <torch/csrc/python_headers.h>

#include "convert.h"
#include "dispatch_state.h"
#include "inline_extensions.h"
#include "interpreter.h"
#include "kernelgate/protocol.h"
#include "module.h"
#include "plugin_calls.h"
#include "py_ref.h"
#include "train_loop.h"

#include <ATen/Functions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/python_variable.h>
#include <c10/core/GradMode.h>
#include <torch/library.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kg::runner::python {
namespace {

using protocol::ModelAction;

[[noreturn]] void raise_python(const std::string& what) { throw std::runtime_error(what + ":\n" + take_exception(kTracebackBytes)); }

PyRef call_checked(PyObject* fn, PyObject* args, const std::string& what) {
  PyRef out = PyRef::steal(PyObject_Call(fn, args, nullptr));
  if (!out) raise_python(what + " raised");
  return out;
}

PyRef empty_tuple() {
  PyRef t = PyRef::steal(PyTuple_New(0));
  if (!t) raise_python("out of memory");
  return t;
}

// torch.manual_seed(seed), as KernelBench seeds before it builds a model or draws inputs.
void manual_seed(uint64_t seed) {
  PyRef torch = PyRef::steal(PyImport_ImportModule("torch"));
  if (!torch) raise_python("cannot import torch");
  PyRef out = PyRef::steal(PyObject_CallMethod(torch.get(), "manual_seed", "K", static_cast<unsigned long long>(seed)));
  if (!out) raise_python("torch.manual_seed raised");
}

// A callable the module defines, or an error naming the file and what KernelBench's format wants.
PyRef defined(PyObject* globals, const char* name, const std::string& file, const char* what) {
  PyObject* o = PyDict_GetItemString(globals, name);  // borrowed
  if (!o) throw std::runtime_error(file + " defines no " + name + " (" + what + ")");
  if (!PyCallable_Check(o)) throw std::runtime_error(file + ": " + name + " is a " + Py_TYPE(o)->tp_name + ", not callable");
  return PyRef::borrow(o);
}

// `o` (a tensor, or a tuple or list of them) as a list of plain tensors; anything else is an error
// naming `what`.
std::vector<at::Tensor> tensors_of(PyObject* o, const std::string& what) {
  std::vector<at::Tensor> out;
  const c10::TypePtr tensor = c10::TensorType::get();
  if (!PyTuple_Check(o) && !PyList_Check(o)) {
    out.push_back(from_python(o, tensor, what).toTensor());
    return out;
  }
  PyRef items = PyRef::steal(PySequence_Fast(o, "a sequence"));
  if (!items) raise_python(what);
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(items.get());
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(items.get(), i);
    if (!THPVariable_Check(item))
      throw std::runtime_error(what + " holds a " + Py_TYPE(item)->tp_name + " at position " + std::to_string(i) +
                               ": kernelgate judges tensors only");
    out.push_back(from_python(item, tensor, what + " " + std::to_string(i)).toTensor());
  }
  return out;
}

c10::IValue tensor_list(std::vector<at::Tensor> ts) {
  c10::List<at::Tensor> l;
  for (auto& t : ts) l.push_back(std::move(t));
  return c10::IValue(std::move(l));
}

// The state_dict's tensors, in its order.
std::vector<at::Tensor> state_of(PyObject* model, const std::string& who) {
  PyRef state = PyRef::steal(PyObject_CallMethod(model, "state_dict", nullptr));
  if (!state) raise_python(who + ".state_dict() raised");
  PyRef values = PyRef::steal(PyMapping_Values(state.get()));
  if (!values) raise_python(who + ".state_dict() is not a mapping");
  return tensors_of(values.get(), who + ".state_dict()");
}

class ModelKernel final : public c10::OperatorKernel {
 public:
  ModelKernel(PyRef model, PyRef get_inputs, PyRef globals, bool solution, bool cuda)
      : model_(std::move(model)),
        get_inputs_(std::move(get_inputs)),
        globals_(std::move(globals)),
        solution_(solution),
        cuda_(cuda),
        who_(solution ? "ModelNew" : "Model") {}

  // A python op source executed only to record its load_inline calls: no model, Extensions only.
  static std::unique_ptr<ModelKernel> requests_only(PyRef globals) {
    auto k = std::make_unique<ModelKernel>(PyRef(), PyRef(), std::move(globals), true, false);
    k->requests_only_ = true;
    k->who_ = "the op source";
    return k;
  }

  // Called with the GIL released (the runner's code never holds it).
  void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, c10::Stack* stack) {
    if (stack->size() < 3) throw std::runtime_error("kg-runner: a model call takes 3 arguments");
    const int64_t action = (*stack)[stack->size() - 3].toInt();
    if (requests_only_ && static_cast<ModelAction>(action) != ModelAction::Extensions)
      throw std::runtime_error("kg-runner: a source loaded to list its load_inline calls answers only that");
    const int64_t seed = (*stack)[stack->size() - 2].toInt();
    const c10::IValue inputs = (*stack)[stack->size() - 1];
    stack->resize(stack->size() - 3);
    Gil gil;
    DispatchStateKept kept;  // restored before the GIL is released
    std::vector<at::Tensor> out;
    switch (static_cast<ModelAction>(action)) {
      case ModelAction::Inputs: out = draw_inputs(static_cast<uint64_t>(seed)); break;
      case ModelAction::Forward: out = forward(inputs); break;
      case ModelAction::State: out = solution_ ? take_state(inputs) : state_of(model_.get(), who_); break;
      case ModelAction::Extensions: out = inline_extension_requests(); break;
      case ModelAction::Forward64: out = forward64(inputs); break;
      case ModelAction::Train: out = train(static_cast<uint64_t>(seed), inputs); break;
      case ModelAction::Backward: out = backward(seed, inputs); break;
      default: throw std::runtime_error("kg-runner: unknown model action " + std::to_string(action));
    }
    if (kept.mode_left_on())
      throw std::runtime_error(who_ +
                               " returned with a torch dispatch mode still on (kernelgate switched it off): a model may not "
                               "leave Python running inside the runner's own operators");
    stack->push_back(tensor_list(std::move(out)));
  }

 private:
  std::vector<at::Tensor> draw_inputs(uint64_t seed) {
    if (solution_) throw std::runtime_error("kg-runner: a solution draws no inputs");
    manual_seed(seed);
    PyRef args = empty_tuple();
    PyRef out = call_checked(get_inputs_.get(), args.get(), "get_inputs()");
    if (!PyTuple_Check(out.get()) && !PyList_Check(out.get()))
      throw std::runtime_error(std::string("get_inputs() returned a ") + Py_TYPE(out.get())->tp_name + ", expected a list of tensors");
    return tensors_of(out.get(), "get_inputs()'s list");
  }

  std::vector<at::Tensor> forward(const c10::IValue& inputs) {
    const c10::TypePtr tensor = c10::TensorType::get();
    const auto& items = inputs.toListRef();
    PyRef args = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(items.size())));
    if (!args) raise_python("out of memory");
    for (size_t i = 0; i < items.size(); ++i)
      PyTuple_SET_ITEM(args.get(), static_cast<Py_ssize_t>(i), to_python(items[i], tensor, "input " + std::to_string(i)).release());
    c10::AutoGradMode no_grad(false);  // KernelBench's evaluation runs both models under torch.no_grad()
    PyRef out = call_checked(model_.get(), args.get(), who_ + ".forward");
    return tensors_of(out.get(), who_ + ".forward's return");
  }

  // Model in float64: a deep copy made once (its parameters and buffers upcast), called on the
  // inputs with their floating tensors upcast.
  std::vector<at::Tensor> forward64(const c10::IValue& inputs) {
    if (solution_) throw std::runtime_error("kg-runner: a solution has no float64 forward");
    if (!model64_) {
      PyRef copy = PyRef::steal(PyImport_ImportModule("copy"));
      if (!copy) raise_python("cannot import copy");
      PyRef twin = PyRef::steal(PyObject_CallMethod(copy.get(), "deepcopy", "O", model_.get()));
      if (!twin) raise_python("copy.deepcopy(Model) raised");
      PyRef wide = PyRef::steal(PyObject_CallMethod(twin.get(), "double", nullptr));
      if (!wide) raise_python("Model.double() raised");
      model64_ = std::move(wide);
    }
    c10::List<at::Tensor> list;
    for (const c10::IValue& v : inputs.toListRef()) {
      const at::Tensor& t = v.toTensor();
      list.push_back(t.is_floating_point() ? t.to(at::kDouble) : t);
    }
    std::swap(model_, model64_);
    struct SwapBack {
      PyRef& a;
      PyRef& b;
      ~SwapBack() { std::swap(a, b); }
    } back{model_, model64_};
    return forward(c10::IValue(std::move(list)));
  }

  // train-check: [int64 {steps}] -> losses, seconds per step, final parameters (train_loop.h).
  std::vector<at::Tensor> train(uint64_t seed, const c10::IValue& inputs) {
    if (solution_) throw std::runtime_error("kg-runner: train-check trains a problem file's Model");
    const auto& items = inputs.toListRef();
    if (items.size() != 1 || items[0].toTensor().numel() != 1) throw std::runtime_error("kg-runner: a train call takes [steps]");
    return train_model(model_.get(), globals_.get(), seed, items[0].toTensor().item<int64_t>(), cuda_);
  }

  // [n inputs, weights...] -> the gradients (train_loop.h).
  std::vector<at::Tensor> backward(int64_t n_inputs, const c10::IValue& inputs) {
    const std::vector<at::Tensor> all = inputs.toTensorVector();
    if (n_inputs < 0 || static_cast<size_t>(n_inputs) > all.size())
      throw std::runtime_error("kg-runner: a backward call's input count is out of range");
    const std::vector<at::Tensor> in(all.begin(), all.begin() + n_inputs), weights(all.begin() + n_inputs, all.end());
    return model_gradients(model_.get(), in, weights, who_);
  }

  // The reference's state copied over the solution's own, when every tensor lines up.
  std::vector<at::Tensor> take_state(const c10::IValue& given) {
    const std::vector<at::Tensor> mine = state_of(model_.get(), who_);
    const auto& theirs = given.toListRef();
    bool same = mine.size() == theirs.size();
    for (size_t i = 0; same && i < mine.size(); ++i) {
      const at::Tensor& t = theirs[i].toTensor();
      same = t.sizes() == mine[i].sizes() && t.scalar_type() == mine[i].scalar_type();
    }
    if (same) {
      c10::AutoGradMode no_grad(false);
      for (size_t i = 0; i < mine.size(); ++i) const_cast<at::Tensor&>(mine[i]).copy_(theirs[i].toTensor());
    }
    return {at::full({1}, same ? 1 : 0, at::kLong)};
  }

  PyRef model_, get_inputs_, globals_, model64_;
  bool solution_, cuda_;
  bool requests_only_ = false;
  std::string who_;
};

// The constructor's arguments as a Python literal that ast.literal_eval gives back equal (KernelBench's
// get_init_inputs() returns numbers, strings, tuples, lists); anything else is refused by name.
std::string literal_of(PyObject* init, const std::string& file) {
  PyRef text = PyRef::steal(PyObject_Repr(init));
  if (!text) raise_python(file + ": repr(get_init_inputs()) raised");
  PyRef ast = PyRef::steal(PyImport_ImportModule("ast"));
  if (!ast) raise_python("cannot import ast");
  PyRef back = PyRef::steal(PyObject_CallMethod(ast.get(), "literal_eval", "O", text.get()));
  const int equal = back ? PyObject_RichCompareBool(back.get(), init, Py_EQ) : -1;
  if (equal != 1) {
    PyErr_Clear();
    throw std::runtime_error(file +
                             ": get_init_inputs() returned something other than Python literals (numbers, strings, tuples, "
                             "lists): the constructor's arguments cannot be given to the solution's process");
  }
  const char* s = PyUnicode_AsUTF8(text.get());
  if (!s) raise_python("the constructor's arguments are not text");
  return s;
}

PyRef literal_from(const std::string& init) {
  PyRef ast = PyRef::steal(PyImport_ImportModule("ast"));
  if (!ast) raise_python("cannot import ast");
  PyRef out = PyRef::steal(PyObject_CallMethod(ast.get(), "literal_eval", "s", init.c_str()));
  if (!out) raise_python("the constructor's arguments do not parse");
  if (!PyList_Check(out.get())) throw std::runtime_error("the constructor's arguments are not a list");
  return out;
}

// The model moved to cuda:0 when the pair is judged there (KernelBench's `.cuda()`), else as built.
PyRef on_device(PyRef model, bool cuda, const std::string& who) {
  if (!cuda) return model;
  PyRef moved = PyRef::steal(PyObject_CallMethod(model.get(), "cuda", nullptr));
  if (!moved) raise_python(who + ".cuda() raised");
  return moved;
}

void register_model(std::unique_ptr<ModelKernel> kernel, const std::string& registered) {
  const size_t sep = registered.find("::");
  if (sep == std::string::npos) throw std::runtime_error("bad registered name " + registered);
  c10::FunctionSchema schema = torch::schema((registered + protocol::kModelSchemaArguments).c_str(), c10::AliasAnalysisKind::FROM_SCHEMA);
  auto lib = std::make_unique<torch::Library>(torch::Library::FRAGMENT, registered.substr(0, sep), c10::nullopt, __FILE__, __LINE__);
  lib->def(std::move(schema), torch::CppFunction::makeFromBoxedFunctor(std::move(kernel)));
  libraries().push_back(std::move(lib));
}

// The problem: Model(*get_init_inputs()) under `seed`; its arguments' literal into `init_out`.
std::unique_ptr<ModelKernel> load_problem(const std::string& source, const std::string& file, uint64_t seed, std::string* init_out,
                                          bool cuda) {
  PyRef globals = execute_module(source, file, "kg_problem");
  PyRef model_class = defined(globals.get(), "Model", file, "the reference, a torch.nn.Module");
  PyRef get_inputs = defined(globals.get(), "get_inputs", file, "the function that makes the inputs");
  PyRef get_init_inputs = defined(globals.get(), "get_init_inputs", file, "the function that makes the constructor's arguments");
  manual_seed(seed);
  PyRef none = empty_tuple();
  PyRef init = call_checked(get_init_inputs.get(), none.get(), "get_init_inputs()");
  PyRef init_list = PyRef::steal(PySequence_List(init.get()));
  if (!init_list) raise_python("get_init_inputs() did not return a list");
  *init_out = literal_of(init_list.get(), file);
  PyRef args = PyRef::steal(PySequence_Tuple(init_list.get()));
  if (!args) raise_python("out of memory");
  manual_seed(seed);
  PyRef model = on_device(call_checked(model_class.get(), args.get(), "Model(*get_init_inputs())"), cuda, "Model");
  return std::make_unique<ModelKernel>(std::move(model), std::move(get_inputs), std::move(globals), false, cuda);
}

// The solution: ModelNew(*init) under `seed`. The arguments are parsed before the solution's own
// code runs, so nothing it patches can change them. Its load_inline calls find the libraries
// staged beside it, or are recorded for ModelAction::Extensions.
std::unique_ptr<ModelKernel> load_solution(const std::string& source_path, const std::string& source, const std::string& file,
                                           uint64_t seed, const std::string& init, bool cuda) {
  PyRef init_list = literal_from(init);
  PyRef args = PyRef::steal(PySequence_Tuple(init_list.get()));
  if (!args) raise_python("out of memory");
  set_inline_extension_source(source_path, true);
  PyRef globals = execute_module(source, file, "kg_solution");
  PyRef model_class = defined(globals.get(), "ModelNew", file, "the solution, a torch.nn.Module with Model's constructor arguments");
  manual_seed(seed);
  PyRef model = on_device(call_checked(model_class.get(), args.get(), "ModelNew(*get_init_inputs())"), cuda, "ModelNew");
  return std::make_unique<ModelKernel>(std::move(model), PyRef(), std::move(globals), true, cuda);
}

}  // namespace

int plugin_load_requests(const char* source_path, const char* registered, char* error, size_t error_size) {
  if (!Py_IsInitialized()) {
    copy_error("the interpreter was not started", error, error_size);
    return 1;
  }
  try {
    const std::string source = read_source(source_path);
    Gil gil;
    set_inline_extension_source(source_path, true);
    PyRef globals = execute_module(source, shown_name(source_path), "kg_submission");
    register_model(ModelKernel::requests_only(std::move(globals)), registered);
    return 0;
  } catch (const std::exception& e) { copy_error(e.what(), error, error_size); }
  return 1;
}

int plugin_load_model(const char* source_path, const char* registered, int solution, unsigned long long seed, const char* init, int cuda,
                      char* init_out, size_t init_out_size, char* error, size_t error_size) {
  if (!Py_IsInitialized()) {
    copy_error("the interpreter was not started", error, error_size);
    return 1;
  }
  try {
    const std::string source = read_source(source_path);
    const std::string file = shown_name(source_path);
    std::string said;
    Gil gil;
    std::unique_ptr<ModelKernel> kernel =
        solution ? load_solution(source_path, source, file, seed, init, cuda != 0) : load_problem(source, file, seed, &said, cuda != 0);
    if (said.size() >= init_out_size)
      throw std::runtime_error(file + ": get_init_inputs()'s arguments take " + std::to_string(said.size()) + " bytes written out, over " +
                               std::to_string(init_out_size - 1));
    register_model(std::move(kernel), registered);
    std::memcpy(init_out, said.c_str(), said.size() + 1);
    return 0;
  } catch (const std::exception& e) { copy_error(e.what(), error, error_size); }
  return 1;
}

}  // namespace kg::runner::python
