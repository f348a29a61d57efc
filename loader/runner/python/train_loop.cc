// The loop is Python: it drives a Python model with torch.optim. It runs in a module of its own,
// made before the submission's ops are installed, so that nothing the submission's code can name
// by import holds it.
#include <torch/csrc/python_headers.h>

#include "train_loop.h"

#include "convert.h"
#include "interpreter.h"
#include "module.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
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
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0, foreach=False)
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
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        value = float(loss.detach())
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        losses.append(value)
        if not math.isfinite(value):
            break
    flat = torch.cat([p.detach().reshape(-1).to(torch.float64).cpu() for p in params])
    return (torch.tensor(losses, dtype=torch.float64), torch.tensor(times, dtype=torch.float64), flat)
)PY";

PyRef loop_function() {
  static PyObject* fn = nullptr;  // kept for the interpreter's life
  if (!fn) {
    PyRef globals = execute_module(kLoop, "<kernelgate train-check>", "kg_train_loop");
    PyObject* f = PyDict_GetItemString(globals.get(), "kg_train");  // borrowed
    if (!f) throw std::runtime_error("kernelgate's training loop defines no kg_train");
    Py_INCREF(f);
    fn = f;
  }
  return PyRef::borrow(fn);
}

}  // namespace

std::vector<at::Tensor> train_model(PyObject* model, PyObject* problem_globals, uint64_t seed, int64_t steps, bool cuda) {
  if (steps < 1 || steps > 100000) throw std::runtime_error("kg-runner: train steps out of range: " + std::to_string(steps));
  // The runner calls every op below autograd; a training step needs it back. The caller's
  // DispatchStateKept puts the thread's state back afterwards.
  c10::impl::LocalDispatchKeySet keys = c10::impl::tls_local_dispatch_key_set();
  keys.excluded_ = keys.excluded_ - c10::autograd_dispatch_keyset_with_ADInplaceOrView;
  c10::impl::ForceDispatchKeyGuard with_autograd(keys);
  c10::AutoGradMode grad(true);
  PyRef fn = loop_function();
  PyRef out = PyRef::steal(PyObject_CallFunction(fn.get(), "OOKLi", model, problem_globals, static_cast<unsigned long long>(seed),
                                                 static_cast<long long>(steps), cuda ? 1 : 0));
  if (!out) throw std::runtime_error("training the model raised:\n" + take_exception(kTracebackBytes));
  std::vector<at::Tensor> result;
  const c10::TypePtr tensor = c10::TensorType::get();
  for (Py_ssize_t i = 0; i < 3; ++i)
    result.push_back(from_python(PyTuple_GET_ITEM(out.get(), i), tensor, "the training loop's result").toTensor());
  return result;
}

}  // namespace kg::runner::python
