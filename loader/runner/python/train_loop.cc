// The loop is Python: it drives a Python model with AdamW written out. It runs in a module of its own,
// made before the submission's ops are installed, so that nothing the submission's code can name
// by import holds it.
#include <torch/csrc/python_headers.h>

#include "train_loop.h"

#include "convert.h"
#include "interpreter.h"
#include "kernelgate/weighted_grad.h"
#include "module.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/python_variable.h>

#include <stdexcept>
#include <string>

namespace kg::runner::python {
namespace {

constexpr const char* kLoop = R"PY(
import math
import time
import torch

def kg_train(model, problem, seed, steps, cuda):
    get_batch = problem.get('get_batch')
    get_inputs = problem.get('get_inputs')
    loss_of = problem.get('loss')
    lr = float(problem.get('TRAIN_LR', 1e-3))
    torch.manual_seed(seed)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError('the model has no parameters to train')
    # AdamW without weight decay, written out: torch.optim's constructor imports torch._dynamo on
    # PyTorch 2.x, which imports ctypes, which the runner's audit hook refuses once armed.
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    target = None
    losses, times = [], []
    for step in range(steps):
        if get_batch is not None:
            inputs = get_batch(step)
        else:
            torch.manual_seed(seed + 1 + step)
            inputs = get_inputs()
        inputs = [x.cuda() if cuda and isinstance(x, torch.Tensor) else x for x in inputs]
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        out = model(*inputs)
        if loss_of is not None:
            loss = loss_of(out, inputs)
        elif isinstance(out, torch.Tensor) and out.dim() == 0:
            loss = out
        else:
            first = out if isinstance(out, torch.Tensor) else out[0]
            if target is None:
                g = torch.Generator()
                g.manual_seed(seed + 7919)
                target = torch.randn(tuple(first.shape), generator=g, dtype=torch.float64).to(first.dtype).to(first.device)
            loss = torch.nn.functional.mse_loss(first, target)
        if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
            raise ValueError('the loss is not a 0-dim tensor')
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p, (m, v) in zip(params, moments):
                if p.grad is None:
                    continue
                m.mul_(beta1).add_(p.grad, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                m_hat = m / (1 - beta1 ** (step + 1))
                v_hat = v / (1 - beta2 ** (step + 1))
                p.sub_(lr * m_hat / (v_hat.sqrt() + eps))
        value = float(loss.detach())
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        losses.append(value)
        if not math.isfinite(value):
            break
    flat = torch.cat([p.detach().reshape(-1).to(torch.float64).cpu() for p in params])
    return (torch.tensor(losses, dtype=torch.float64), torch.tensor(times, dtype=torch.float64), flat)

def kg_gradients(model, inputs, weights):
    leaves = []
    args = []
    for x in inputs:
        if x.is_floating_point():
            x = x.detach().requires_grad_(True)
            leaves.append(x)
        args.append(x)
    out = model(*args)
    outs = [out] if isinstance(out, torch.Tensor) else list(out)
    outs = [o for o in outs if isinstance(o, torch.Tensor) and o.is_floating_point()]
    if len(outs) != len(weights):
        raise ValueError('%d floating outputs for %d weights' % (len(outs), len(weights)))
    loss = None
    for o, w in zip(outs, weights):
        if o.requires_grad:
            term = (o * w.to(o.dtype)).sum()
            loss = term if loss is None else loss + term
    if loss is None:
        raise ValueError('no output depends on the inputs or parameters through autograd')
    params = list(model.parameters())
    wrt = leaves + params
    grads = torch.autograd.grad(loss, wrt, allow_unused=True)
    return [torch.zeros_like(t) if g is None else g.detach() for g, t in zip(grads, wrt)]
)PY";

// kg_train or kg_gradients, from the module made once for the interpreter's life.
PyRef loop_function(const char* name) {
  static PyObject* globals = nullptr;
  if (!globals) {
    PyRef g = execute_module(kLoop, "<kernelgate train-check>", "kg_train_loop");
    Py_INCREF(g.get());
    globals = g.get();
  }
  PyObject* f = PyDict_GetItemString(globals, name);  // borrowed
  if (!f) throw std::runtime_error(std::string("kernelgate's training module defines no ") + name);
  return PyRef::borrow(f);
}

PyRef tensor_list(const std::vector<at::Tensor>& ts, const std::string& what) {
  PyRef l = PyRef::steal(PyList_New(static_cast<Py_ssize_t>(ts.size())));
  if (!l) throw std::runtime_error("out of memory");
  const c10::TypePtr tensor = c10::TensorType::get();
  for (size_t i = 0; i < ts.size(); ++i)
    PyList_SET_ITEM(l.get(), static_cast<Py_ssize_t>(i), to_python(c10::IValue(ts[i]), tensor, what + " " + std::to_string(i)).release());
  return l;
}

}  // namespace

std::vector<at::Tensor> train_model(PyObject* model, PyObject* problem_globals, uint64_t seed, int64_t steps, bool cuda) {
  if (steps < 1 || steps > 100000) throw std::runtime_error("kg-runner: train steps out of range: " + std::to_string(steps));
  protocol::AutogradOn on;
  PyRef fn = loop_function("kg_train");
  PyRef out = PyRef::steal(PyObject_CallFunction(fn.get(), "OOKLi", model, problem_globals, static_cast<unsigned long long>(seed),
                                                 static_cast<long long>(steps), cuda ? 1 : 0));
  if (!out) throw std::runtime_error("training the model raised:\n" + take_exception(kTracebackBytes));
  std::vector<at::Tensor> result;
  const c10::TypePtr tensor = c10::TensorType::get();
  for (Py_ssize_t i = 0; i < 3; ++i)
    result.push_back(from_python(PyTuple_GET_ITEM(out.get(), i), tensor, "the training loop's result").toTensor());
  return result;
}

std::vector<at::Tensor> model_gradients(PyObject* model, const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& weights,
                                        const std::string& who) {
  protocol::AutogradOn on;
  PyRef fn = loop_function("kg_gradients");
  PyRef in = tensor_list(inputs, "input"), w = tensor_list(weights, "weight");
  PyRef out = PyRef::steal(PyObject_CallFunctionObjArgs(fn.get(), model, in.get(), w.get(), nullptr));
  if (!out) throw std::runtime_error(who + "'s gradients raised:\n" + take_exception(kTracebackBytes));
  std::vector<at::Tensor> result;
  const c10::TypePtr tensor = c10::TensorType::get();
  const Py_ssize_t n = PyList_Size(out.get());
  for (Py_ssize_t i = 0; i < n; ++i) result.push_back(from_python(PyList_GET_ITEM(out.get(), i), tensor, who + "'s gradient").toTensor());
  return result;
}

}  // namespace kg::runner::python
