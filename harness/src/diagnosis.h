// Telling an honest mistake from a cheat on one wrong call, on tensors and schemas alone (no
// runner): the op recomputed in float64 or in another dtype, and the classes of honest mistake a
// wrong answer is recognised by. Each class needs evidence that the answer was computed from
// these inputs (it matches a computation of the op), so a constant, an input copied back, zeros
// or a replayed output is never explained.
#pragma once

#include "kernelgate/harness.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <vector>

namespace kg::harness {

// Inputs (tensor elements over all arguments) above which nothing is recomputed: the diagnosis
// runs on wrong calls only, and must stay cheap there.
constexpr int64_t kMaxRecomputedNumel = int64_t{1} << 24;
// Multiply-adds of a contraction above which it is not recomputed (a 1600^3 matrix product takes
// about a quarter of a second in float64 on two cores, and the rounding bound needs three).
constexpr double kMaxRecomputedProducts = 4e9;

// The op on `inputs` on the CPU with every floating tensor (in lists too) upcast to f64 and every
// complex one to c128, floating dtype arguments set to f64 and device arguments to the CPU; the
// returns as the op gives them (f64 for floating ones). Nothing when no value was upcast (integer
// ops), the inputs are larger than kMaxRecomputedNumel (a contraction: kMaxRecomputedProducts), or
// the overload rejects them.
std::optional<std::vector<c10::IValue>> compute_f64(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs);

// Whether a schema argument is a dtype (`ScalarType`, `ScalarType?`).
bool is_dtype_argument(const c10::Argument& a);

// The op called on `args` (consumed) through the dispatcher; nothing when it throws.
std::optional<std::vector<c10::IValue>> try_call(const c10::FunctionSchema& schema, std::vector<c10::IValue> args);

// Every tensor of a list of values, in order, tuples and lists flattened; a number becomes a
// 0-d tensor, None an undefined tensor.
std::vector<at::Tensor> flat_tensors(const std::vector<c10::IValue>& values);
// The tensors of a call's arguments (tensor lists and lists of optional tensors flattened).
std::vector<at::Tensor> input_tensors(const std::vector<c10::IValue>& inputs);
// Elements over input_tensors(inputs).
int64_t input_elements(const std::vector<c10::IValue>& inputs);

// Whether `cand` is no more than `basis` would make it trivially: constant while `basis` is not,
// all zeros while `basis` is not, or equal in value to an input `basis` differs from. The guard
// every class applies to the computation it found the candidate equal to.
bool trivial_beside(const std::vector<c10::IValue>& inputs, const std::vector<at::Tensor>& basis, const std::vector<at::Tensor>& cand);

// One wrong call, as the classes read it (every value on the CPU).
struct WrongAnswer {
  const c10::FunctionSchema& schema;
  const std::string& op;  // the overload's name, for the policy's tolerance ("add.Tensor")
  const policy::Policy& policy;
  const std::vector<c10::IValue>& inputs;  // as drawn, before any call
  const std::vector<c10::IValue>& ref_returns;
  const std::vector<c10::IValue>& cand_returns;
  const Mismatch& mismatch;  // the first mismatch of the call
};

// "result has dtype f32, expected f64" (+ "the dtype= argument was ignored", "returned the
// input's dtype", a missing promotion), when the values are right for the dtype returned.
std::optional<std::string> explain_wrong_dtype(const WrongAnswer& w);
// "matches add computed in b8: missing type promotion (expected i64)": the right dtype, and the
// values of the op computed on the inputs cast to one of the inputs' narrower dtypes.
std::optional<std::string> explain_missing_promotion(const WrongAnswer& w);
// "error grows with K like f32 rounding (...)", "within f32 rounding of the exact result (...)":
// the error against the float64 truth is of the size the library's own error is, or (sums and
// contractions) within the rounding bound of a K-term sum in the result's dtype.
std::optional<std::string> explain_rounding(const WrongAnswer& w);
// "every element off by a relative ~1.0e-04: imprecise arithmetic": a small relative error of
// about the same size in every element, not a few bad ones.
std::optional<std::string> explain_uniform_relative_error(const WrongAnswer& w);
// The first class that explains the call, or nothing.
std::optional<std::string> diagnose_wrong_answer(const WrongAnswer& w);

}  // namespace kg::harness
