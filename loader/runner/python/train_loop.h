// train-check's training loop (protocol::ModelAction::Train), run in the problem's runner.
#pragma once

#include "py_ref.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kg::runner::python {

// Trains `model` (a problem file's Model, built by the load) for `steps` steps from `seed` with
// AdamW, with autograd on (the runner calls ops below it), and returns [float64 losses, float64
// seconds per step, float64 parameters flattened in model.parameters() order]. The problem file
// may define get_batch(step) (the inputs of a step; else get_inputs() under a per-step seed),
// loss(output, inputs) (else a 0-dim output is the loss, any other the mean squared error to a
// fixed random target) and TRAIN_LR (default 1e-3). A loss that is not finite ends the run there.
// The GIL must be held. Throws std::runtime_error with the traceback.
std::vector<at::Tensor> train_model(PyObject* model, PyObject* problem_globals, uint64_t seed, int64_t steps, bool cuda);

// ModelAction::Backward: `model` called on `inputs` with autograd on (each floating input a fresh
// leaf), and the gradients of sum_k (output_k * weights[k]).sum() with respect to the floating
// inputs, then to model.parameters(), zeros where the loss does not reach one. The GIL must be held.
std::vector<at::Tensor> model_gradients(PyObject* model, const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& weights,
                                        const std::string& who);

}  // namespace kg::runner::python
