// Edge generators for reductions (dims, keepdim, dtype=), softmax and log_softmax, cumulative ops
// and sorting / top-k. Samples stay under 32768 elements per reduction, the grain below which
// ATen reduces serially, unless the label says otherwise (the runner runs one thread, the
// supervisor's reference may run more).
#include "suites.h"

#include <algorithm>
#include <limits>

namespace kg::harness::edge {
namespace {

constexpr ValueFamily N = ValueFamily::Normal;
constexpr ValueFamily SP = ValueFamily::Special;
using L = Layout;
using KW = std::vector<std::pair<std::string, Arg>>;

// A reduction over a dim list: op(self, dim, keepdim, ...extra kwargs).
// `dim_value` renders a dim list in the overload's form (int[] or int).
void dim_reduction(Builder& b, const std::string& op, bool int_dim, const KW& extra = {}, bool keepdim_kw = false,
                   const std::vector<std::string>& dtypes = kAllReal) {
  auto dims = [&](std::vector<int64_t> d) -> Value { return int_dim ? I(d.at(0)) : Ints(d); };
  auto call = [&](TensorArg t, std::vector<int64_t> d, bool keep, const std::string& label, ValueFamily f = N) {
    KW kw = extra;
    std::vector<Arg> args = {std::move(t)};
    if (keepdim_kw) {
      kw.insert(kw.begin(), {"keepdim", B(keep)});
      kw.insert(kw.begin(), {"dim", dims(d)});
    } else {
      args.push_back(dims(d));
      if (op.rfind("count_nonzero", 0) != 0) args.push_back(B(keep));  // count_nonzero has no keepdim
    }
    b.add(op, std::move(args), kw, label, f);
  };
  for (const auto& dt : dtypes) call(tensor({33, 17}, dt), {1}, false, dt + ", dim 1");
  call(tensor({33, 17}, "f32"), {0}, false, "dim 0");
  call(tensor({33, 17}, "f32"), {-1}, true, "dim -1, keepdim");
  if (!int_dim) {
    call(tensor({4, 8, 16}, "f32"), {0, 2}, false, "dims 0 and 2");
    call(tensor({4, 8, 16}, "f64"), {1, -1}, true, "dims 1 and -1, keepdim");
  }
  call(tensor({4, 8, 16}, "f32"), {1}, true, "3-d, middle dim, keepdim");
  call(tensor({}, "f32"), {0}, false, "0-d");
  call(tensor({0, 5}, "f32"), {1}, false, "empty, keep the empty dim");
  call(tensor({0, 5}, "f32"), {0}, true, "empty, reduce the empty dim");
  call(tensor({24, 40}, "f32", L::Transposed), {1}, false, "transposed view");
  call(tensor({10, 12}, "f32", L::Strided), {0}, false, "strided view");
  call(tensor({30}, "f32", L::Offset), {0}, false, "offset view");
  // An expanded dim reduced is all ties: skip it where the index of a tie is unspecified.
  if (op.find("median") == std::string::npos) call(tensor({6, 1, 9}, "f32", L::Expanded), {0}, false, "expanded view (stride 0)");
  call(tensor({16, 50}, "f32"), {1}, false, "special f32", SP);
  call(tensor({16, 50}, "f64"), {0}, true, "special f64", SP);
  call(tensor({8, 40}, "bf16"), {1}, false, "special bf16", SP);
  call(tensor({8, 40}, "f16"), {1}, false, "special f16", SP);
  if (std::find(dtypes.begin(), dtypes.end(), "i64") != dtypes.end()) call(tensor({8, 40}, "i64"), {1}, false, "integer extremes", SP);
  call(tensor({3, 10000}, "f32"), {1}, false, "rows of 10000");
}

// A whole-tensor reduction op(self, ...extra).
void full_reduction(Builder& b, const std::string& op, const KW& extra = {}, const std::vector<std::string>& dtypes = kAllReal) {
  for (const auto& dt : dtypes) b.add(op, {tensor({33, 17}, dt)}, extra, dt);
  b.add(op, {tensor({}, "f32")}, extra, "0-d");
  b.add(op, {tensor({0, 4}, "f32")}, extra, "empty");
  b.add(op, {tensor({20, 30}, "f32", L::Transposed)}, extra, "transposed view");
  b.add(op, {tensor({40}, "f32", L::Offset)}, extra, "offset view");
  b.add(op, {tensor({7, 9}, "f32", L::Expanded)}, extra, "expanded view (stride 0)");
  b.add(op, {tensor({500}, "f32")}, extra, "special f32", SP);
  b.add(op, {tensor({300}, "bf16")}, extra, "special bf16", SP);
  b.add(op, {tensor({300}, "i32")}, extra, "integer extremes", SP);
  b.add(op, {tensor({16000}, "f32")}, extra, "16000 elements");
}

void softmax_like(Builder& b, const std::string& op, bool half_to_float_arg) {
  auto call = [&](TensorArg t, int64_t dim, const std::string& label, ValueFamily f = N, bool half_to_float = false) {
    std::vector<Arg> args = {std::move(t), I(dim)};
    if (half_to_float_arg) args.push_back(B(half_to_float));
    b.add(op, std::move(args), {}, label, f);
  };
  for (const auto& dt : kFloat) call(tensor({32, 100}, dt), -1, dt + ", last dim");
  call(tensor({8, 16, 64}, "f32"), 1, "middle dim");
  call(tensor({4, 1000}, "f32"), 0, "first dim");
  call(tensor({}, "f32"), 0, "0-d");
  call(tensor({0, 7}, "f32"), 1, "empty");
  call(tensor({5, 0}, "f32"), 1, "empty softmax dim");
  call(tensor({64, 32}, "f32", L::Transposed), 1, "transposed view");
  call(tensor({16, 20}, "f32", L::Strided), -1, "strided view");
  call(tensor({50}, "f32", L::Offset), 0, "offset view");
  call(tensor({16, 50}, "f32"), -1, "special f32", SP);
  call(tensor({16, 50}, "f64"), 0, "special f64", SP);
  call(tensor({16, 50}, "bf16"), -1, "special bf16", SP);
  call(tensor({2, 4097}, "f32"), -1, "rows of 4097 (past a vector width multiple)");
  if (half_to_float_arg) {
    call(tensor({32, 100}, "f16"), -1, "f16 to f32 output", N, true);
    call(tensor({32, 100}, "bf16"), -1, "bf16 to f32 output", N, true);
  }
}

void softmax_backward(Builder& b, const std::string& op) {
  // (grad_output, output, dim, input_dtype)
  for (const auto& dt : kFloat) b.add(op, {tensor({32, 100}, dt), tensor({32, 100}, dt), I(-1), Dtype(dt)}, {}, dt);
  b.add(op, {tensor({8, 16, 64}, "f32"), tensor({8, 16, 64}, "f32"), I(1), Dtype("f32")}, {}, "middle dim");
  b.add(op, {tensor({64, 32}, "f32", L::Transposed), tensor({64, 32}, "f32"), I(1), Dtype("f32")}, {}, "transposed grad");
  b.add(op, {tensor({16, 50}, "f32"), tensor({16, 50}, "f32"), I(-1), Dtype("f32")}, {}, "special", SP);
  b.add(op, {tensor({0, 5}, "f32"), tensor({0, 5}, "f32"), I(1), Dtype("f32")}, {}, "empty");
}

// Scans along a dim: op(self, dim[, dtype]).
void cumulative(Builder& b, const std::string& op, bool dtype_kw) {
  for (const auto& dt : kAllReal) b.add(op, {tensor({20, 30}, dt), I(1)}, {}, dt + ", dim 1");
  b.add(op, {tensor({20, 30}, "f32"), I(0)}, {}, "dim 0");
  b.add(op, {tensor({4, 6, 8}, "f32"), I(-2)}, {}, "dim -2");
  b.add(op, {tensor({}, "f32"), I(0)}, {}, "0-d");
  b.add(op, {tensor({0, 3}, "f32"), I(0)}, {}, "empty");
  b.add(op, {tensor({24, 16}, "f32", L::Transposed), I(1)}, {}, "transposed view");
  b.add(op, {tensor({10, 10}, "f32", L::Strided), I(1)}, {}, "strided view");
  b.add(op, {tensor({40}, "f32", L::Offset), I(0)}, {}, "offset view");
  b.add(op, {tensor({8, 60}, "f32"), I(1)}, {}, "special f32", SP);
  b.add(op, {tensor({8, 60}, "bf16"), I(1)}, {}, "special bf16", SP);
  b.add(op, {tensor({8, 60}, "i64"), I(1)}, {}, "integer extremes", SP);
  b.add(op, {tensor({2, 3000}, "f32"), I(1)}, {}, "rows of 3000");
  if (dtype_kw) {
    b.add(op, {tensor({20, 30}, "i32"), I(1)}, {{"dtype", Dtype("f64")}}, "i32 with dtype=f64");
    b.add(op, {tensor({20, 30}, "f16"), I(1)}, {{"dtype", Dtype("f32")}}, "f16 with dtype=f32");
  }
}

// edge-large: just past 2^31 elements, and rows of 2^30+5.
void large_samples(Builder& b) {
  const int64_t n = (int64_t{1} << 31) + 37;
  b.add("sum.default", {tensor({n}, "u8")}, {}, "2^31+37 elements u8", N, kLarge);
  b.add("any.default", {tensor({n}, "b8")}, {}, "2^31+37 elements b8", N, kLarge);
  b.add("sum.dim_IntList", {tensor({2, (int64_t{1} << 30) + 5}, "i8"), Ints({1}), B(false)}, {}, "rows of 2^30+5 i8", N, kLarge);
  b.add("amax.default", {tensor({(int64_t{1} << 30) + 5, 2}, "i8"), Ints({0}), B(false)}, {}, "2^31+10 elements i8, dim 0", N, kLarge);
}

// Reductions over a dim list or one dim.
void dim_reduction_samples(Builder& b) {
  dim_reduction(b, "sum.dim_IntList", false);
  dim_reduction(b, "sum.dim_IntList", false, {{"dtype", Dtype("f64")}}, false, {"f32", "i32", "b8"});
  dim_reduction(b, "mean.dim", false, {}, false, kFloat);
  dim_reduction(b, "nansum.default", false, {}, false, kFloat);
  dim_reduction(b, "amax.default", false);
  dim_reduction(b, "amin.default", false);
  dim_reduction(b, "logsumexp.default", false, {}, false, kFloat);
  dim_reduction(b, "count_nonzero.dim_IntList", false, {}, false);
  dim_reduction(b, "prod.dim_int", true);
  dim_reduction(b, "max.dim", true);
  dim_reduction(b, "min.dim", true);
  dim_reduction(b, "all.dim", true);
  dim_reduction(b, "any.dim", true);
  dim_reduction(b, "argmax.default", true);
  dim_reduction(b, "argmin.default", true);
  dim_reduction(b, "median.dim", true, {}, false, kFloat);  // its indices of ties are unspecified
  dim_reduction(b, "nanmedian.dim", true, {}, false, kFloat);
  dim_reduction(b, "var.correction", false, {{"correction", I(1)}}, true, kFloat);
  dim_reduction(b, "std.correction", false, {{"correction", I(0)}}, true, kFloat);
  dim_reduction(b, "var_mean.correction", false, {{"correction", I(1)}}, true, kFloat);
  dim_reduction(b, "std_mean.correction", false, {{"correction", I(1)}}, true, kFloat);
  dim_reduction(b, "aminmax.default", true, {}, true);
  dim_reduction(b, "linalg_vector_norm.default", false, {{"ord", F(2.0)}}, true, kFloat);
  dim_reduction(b, "linalg_vector_norm.default", false, {{"ord", F(std::numeric_limits<double>::infinity())}}, true, kFloat);
  dim_reduction(b, "linalg_vector_norm.default", false, {{"ord", F(1.0)}}, true, {"f32"});
  dim_reduction(b, "sum.IntList_out", false, {{"out", tensor({0}, "f32")}}, false, {"f32"});
}

// Whole-tensor reductions, and norm over dims.
void full_reduction_samples(Builder& b) {
  full_reduction(b, "sum.default");
  full_reduction(b, "sum.default", {{"dtype", Dtype("f64")}}, {"f32", "i64", "b8"});
  full_reduction(b, "mean.default", {}, kFloat);
  full_reduction(b, "prod.default");
  full_reduction(b, "max.default");
  full_reduction(b, "min.default");
  full_reduction(b, "all.default");
  full_reduction(b, "any.default");
  full_reduction(b, "median.default");
  full_reduction(b, "nanmedian.default", {}, kFloat);
  full_reduction(b, "count_nonzero.default");
  full_reduction(b, "norm.Scalar", {{"p", F(2.0)}}, kFloat);
  full_reduction(b, "norm.Scalar", {{"p", F(3.0)}}, {"f32"});
  full_reduction(b, "var.default", {}, kFloat);
  full_reduction(b, "std.default", {}, kFloat);
  for (const auto& dt : kFloat) {
    b.add("norm.ScalarOpt_dim", {tensor({12, 30}, dt), F(2.0), Ints({1}), B(false)}, {}, dt + ", p=2 dim 1");
    b.add("norm.ScalarOpt_dim", {tensor({12, 30}, dt), F(1.0), Ints({0}), B(true)}, {}, dt + ", p=1 dim 0 keepdim");
  }
  b.add("norm.ScalarOpt_dim", {tensor({12, 30}, "f32"), F(2.0), Ints({1}), B(false)}, {}, "special", SP);
  b.add("norm.ScalarOpt_dim", {tensor({12, 30}, "f32", L::Transposed), F(2.0), Ints({0, 1}), B(false)}, {}, "transposed, both dims");
}

// softmax and log_softmax, forward and backward.
void softmax_samples(Builder& b) {
  softmax_like(b, "_softmax.default", true);
  softmax_like(b, "_log_softmax.default", true);
  softmax_like(b, "softmax.int", false);
  softmax_like(b, "log_softmax.int", false);
  softmax_backward(b, "_softmax_backward_data.default");
  softmax_backward(b, "_log_softmax_backward_data.default");
}

// Scans.
void cumulative_samples(Builder& b) {
  cumulative(b, "cumsum.default", true);
  cumulative(b, "cumprod.default", true);
  cumulative(b, "cummax.default", false);
  cumulative(b, "cummin.default", false);
  cumulative(b, "logcumsumexp.default", false);
  cumulative(b, "cumsum_.default", false);
}

// Sorting and top-k. Integers give ties; a stable sort must keep their order.
// Integer inputs have ties, where only a stable sort's indices are defined: the unstable ops
// get floating dtypes only.
void sort_samples(Builder& b) {
  for (const auto& dt : kAllReal) {
    b.add("sort.stable", {tensor({16, 40}, dt)}, {{"stable", B(true)}, {"dim", I(1)}, {"descending", B(true)}}, dt + " stable descending");
    b.add("sort.stable", {tensor({16, 40}, dt)}, {{"stable", B(true)}}, dt + " stable ascending");
    if (!is_float(dt)) continue;
    b.add("sort.default", {tensor({16, 40}, dt), I(-1), B(false)}, {}, dt);
    b.add("topk.default", {tensor({16, 40}, dt), I(5)}, {}, dt + " k=5");
    b.add("argsort.default", {tensor({16, 40}, dt), I(1), B(true)}, {}, dt + " descending");
    b.add("kthvalue.default", {tensor({16, 40}, dt), I(7), I(1), B(false)}, {}, dt + " k=7");
  }
  for (const char* op : {"sort.default", "topk.default", "argsort.default", "kthvalue.default", "msort.default"}) {
    const std::string o = op;
    auto extra = [&](int64_t dim) -> std::vector<Arg> {
      if (o == "sort.default") return {I(dim), B(false)};
      if (o == "topk.default") return {I(3), I(dim), B(true), B(true)};
      if (o == "argsort.default") return {I(dim), B(false)};
      if (o == "kthvalue.default") return {I(1), I(dim), B(true)};
      return {};
    };
    auto add = [&](TensorArg t, int64_t dim, const std::string& label, ValueFamily f = N) {
      std::vector<Arg> args = {std::move(t)};
      for (auto& a : extra(dim)) args.push_back(a);
      b.add(op, std::move(args), {}, label, f);
    };
    if (o == "msort.default")
      for (const std::string dt : {"f32", "f64", "i64", "bf16"}) add(tensor({30, 8}, dt), 0, dt);
    add(tensor({8, 30}, "f32"), 0, "dim 0");
    add(tensor({4, 6, 10}, "f32"), 1, "3-d, middle dim");
    if (o != "topk.default" && o != "kthvalue.default") add(tensor({}, "f32"), 0, "0-d");
    add(tensor({0, 10}, "f32"), -1, "empty");
    add(tensor({20, 12}, "f32", L::Transposed), -1, "transposed view");
    add(tensor({6, 16}, "f32", L::Strided), -1, "strided view");
    add(tensor({40}, "f32", L::Offset), 0, "offset view");
    add(tensor({5, 8}, "f32", L::Expanded), -1, "expanded view (stride 0)");
    add(tensor({10, 64}, "f32"), -1, "special f32 (NaN sorts last)", SP);
    add(tensor({10, 64}, "bf16"), -1, "special bf16", SP);
    if (o == "msort.default") add(tensor({10, 64}, "i64"), -1, "integer extremes", SP);
    add(tensor({2, 5000}, "f32"), -1, "rows of 5000");
  }
  b.add("topk.default", {tensor({3, 1000}, "f32"), I(1000), I(-1)}, {}, "k = size");
  b.add("topk.default", {tensor({3, 1000}, "f32"), I(0), I(-1)}, {}, "k = 0");
  b.add("topk.default", {tensor({3, 1000}, "f32"), I(100), I(-1), B(false), B(true)}, {}, "smallest 100");
}

}  // namespace

void reduction_samples(Builder& b, bool large) {
  if (large) {
    large_samples(b);
    return;
  }
  dim_reduction_samples(b);
  full_reduction_samples(b);
  softmax_samples(b);
  cumulative_samples(b);
  sort_samples(b);
}

}  // namespace kg::harness::edge
