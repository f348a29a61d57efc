// Edge generators for indexing (gather/scatter, index_*, index.Tensor, index_put, take), masked
// ops, cat/stack/split and views/copies. Index arguments get valid values from builtin_rules
// (gather: [0, self.size(dim)); overwriting scatters: distinct per fiber).
#include "suites.h"

#include <limits>

namespace kg::harness::edge {
namespace {

constexpr ValueFamily N = ValueFamily::Normal;
constexpr ValueFamily SP = ValueFamily::Special;
using L = Layout;

void gather_scatter(Builder& b) {
  for (const auto& dt : kAllReal) {
    b.add("gather.default", {tensor({10, 8}, dt), I(0), tensor({6, 8}, "i64")}, {}, dt + " dim 0");
    b.add("scatter.src", {tensor({10, 8}, dt), I(0), tensor({4, 8}, "i64"), tensor({4, 8}, dt)}, {}, dt + " dim 0");
    b.add("scatter_add.default", {tensor({10, 8}, dt), I(1), tensor({10, 12}, "i64"), tensor({10, 12}, dt)}, {},
          dt + " repeated targets add up");
    b.add("index_select.default", {tensor({10, 8}, dt), I(0), tensor({15}, "i64")}, {}, dt + " dim 0, repeats");
  }
  // Shapes and layouts every gather/scatter-like op should survive.
  b.add("gather.default", {tensor({10, 8}, "f32"), I(1), tensor({10, 3}, "i64")}, {}, "dim 1");
  b.add("gather.default", {tensor({10, 8}, "f32"), I(1), tensor({4, 5}, "i64")}, {}, "index smaller than self in both dims");
  b.add("gather.default", {tensor({4, 5, 6}, "f32"), I(-1), tensor({4, 5, 2}, "i64")}, {}, "3-d, dim -1");
  b.add("gather.default", {tensor({}, "f32"), I(0), tensor({}, "i64")}, {}, "0-d");
  b.add("gather.default", {tensor({10, 8}, "f32"), I(0), tensor({0, 8}, "i64")}, {}, "empty index");
  b.add("gather.default", {tensor({12, 10}, "f32", L::Transposed), I(0), tensor({5, 10}, "i64", L::Strided)}, {},
        "transposed self, strided index");
  b.add("gather.default", {tensor({20}, "f32", L::Offset), I(0), tensor({7}, "i64", L::Offset)}, {}, "offset views");
  b.add("gather.default", {tensor({10, 8}, "f32"), I(1), tensor({10, 8}, "i32")}, {}, "i32 index (2.x accepts it)");
  b.add("gather.default", {tensor({10, 8}, "f32"), I(1), tensor({10, 8}, "i64")}, {}, "special", SP);
  for (const char* op : {"scatter.src", "scatter_add.default", "scatter.reduce"}) {
    const std::string o = op;
    std::vector<std::pair<std::string, Arg>> kw;
    if (o == "scatter.reduce") kw = {{"reduce", S("add")}};
    b.add(op, {tensor({10, 8}, "f32"), I(1), tensor({10, 3}, "i64"), tensor({10, 8}, "f32")}, kw, "src larger than index");
    b.add(op, {tensor({4, 5, 6}, "f32"), I(-1), tensor({4, 5, 2}, "i64"), tensor({4, 5, 2}, "f32")}, kw, "3-d, dim -1");
    b.add(op, {tensor({}, "f32"), I(0), tensor({}, "i64"), tensor({}, "f32")}, kw, "0-d");
    b.add(op, {tensor({10, 8}, "f32"), I(0), tensor({0, 8}, "i64"), tensor({0, 8}, "f32")}, kw, "empty index");
    b.add(op, {tensor({12, 10}, "f32", L::Transposed), I(0), tensor({5, 10}, "i64"), tensor({5, 10}, "f32", L::Strided)}, kw,
          "transposed self, strided src");
    b.add(op, {tensor({10, 8}, "f32"), I(0), tensor({6, 8}, "i64"), tensor({6, 8}, "f32")}, kw, "special", SP);
  }
  b.add("scatter.reduce", {tensor({10, 8}, "f32"), I(0), tensor({4, 8}, "i64"), tensor({4, 8}, "f32")}, {{"reduce", S("multiply")}},
        "multiply");
  for (const std::string dt : {"f32", "f64", "i64"})
    b.add("scatter.value", {tensor({10, 8}, dt), I(0), tensor({4, 8}, "i64"), F(-2.5)}, {}, std::string(dt) + " value -2.5");
  b.add("scatter.value", {tensor({10, 8}, "f32"), I(1), tensor({10, 2}, "i64"), F(std::numeric_limits<double>::quiet_NaN())}, {},
        "value nan");
  b.add("scatter_.src", {tensor({10, 8}, "f32"), I(0), tensor({4, 8}, "i64"), tensor({4, 8}, "f32")}, {}, "in place");
  b.add("scatter_.value", {tensor({10, 8}, "f32"), I(1), tensor({10, 3}, "i64"), F(1.0)}, {}, "in place");
  b.add("scatter_add_.default", {tensor({10, 8}, "f32"), I(0), tensor({20, 8}, "i64"), tensor({20, 8}, "f32")}, {},
        "in place, repeated targets");
  for (const char* red : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false})
      b.add("scatter_reduce.two", {tensor({10, 8}, "f32"), I(0), tensor({20, 8}, "i64"), tensor({20, 8}, "f32"), S(red), B(include_self)},
            {}, std::string(red) + (include_self ? "" : ", without self"));
    b.add("scatter_reduce.two", {tensor({10, 8}, "f32"), I(1), tensor({10, 6}, "i64"), tensor({10, 6}, "f32"), S(red)}, {},
          std::string(red) + " special", SP);
    b.add("scatter_reduce.two", {tensor({10, 8}, "i64"), I(1), tensor({10, 6}, "i64"), tensor({10, 6}, "i64"), S(red)}, {},
          std::string(red) + " i64");
  }
  b.add("index_select.default", {tensor({10, 8}, "f32"), I(1), tensor({3}, "i32")}, {}, "i32 index, dim 1");
  b.add("index_select.default", {tensor({10, 8}, "f32"), I(0), tensor({}, "i64")}, {}, "0-d index");
  b.add("index_select.default", {tensor({}, "f32"), I(0), tensor({1}, "i64")}, {}, "0-d self");
  b.add("index_select.default", {tensor({10, 8}, "f32"), I(0), tensor({0}, "i64")}, {}, "empty index");
  b.add("index_select.default", {tensor({12, 10}, "f32", L::Transposed), I(1), tensor({20}, "i64", L::Strided)}, {},
        "transposed, strided index");
  b.add("index_select.default", {tensor({30, 8}, "f32", L::Offset), I(0), tensor({9}, "i64", L::Offset)}, {}, "offset views");
  b.add("index_select.default", {tensor({10, 8}, "f32"), I(0), tensor({12}, "i64")}, {}, "special", SP);
  b.add("index_select.default", {tensor({5000, 64}, "f32"), I(0), tensor({300}, "i64")}, {}, "300 rows of 5000");
  b.add("take.default", {tensor({10, 8}, "f32"), tensor({5, 7}, "i64")}, {}, "flat indices");
  b.add("take.default", {tensor({10, 8}, "f32", L::Transposed), tensor({20}, "i64")}, {}, "transposed self (logical order)");
  b.add("take.default", {tensor({10, 8}, "f32"), tensor({20}, "i64")}, {}, "special", SP);
  b.add("take_along_dim.default", {tensor({10, 8}, "f32"), tensor({10, 3}, "i64"), I(1)}, {}, "dim 1");
  b.add("take_along_dim.default", {tensor({6, 5}, "f32"), tensor({4}, "i64")}, {}, "dim None");
}

void index_ops(Builder& b) {
  for (const std::string dt : {"f32", "f64", "bf16", "i64", "i32", "b8"}) {
    b.add("index_add.default", {tensor({10, 8}, dt), I(0), tensor({15}, "i64"), tensor({15, 8}, dt)}, {},
          std::string(dt) + " repeats add up");
    b.add("index_copy.default", {tensor({10, 8}, dt), I(0), tensor({6}, "i64"), tensor({6, 8}, dt)}, {},
          std::string(dt) + " distinct rows");
    b.add("index_fill.int_Scalar", {tensor({10, 8}, dt), I(1), tensor({3}, "i64"), F(-1.0)}, {}, std::string(dt) + " fill -1");
  }
  b.add("index_add.default", {tensor({10, 8}, "f32"), I(1), tensor({4}, "i64"), tensor({10, 4}, "f32")}, {{"alpha", F(0.5)}},
        "dim 1, alpha 0.5");
  b.add("index_add.default", {tensor({10, 8}, "f32", L::Transposed), I(0), tensor({5}, "i64"), tensor({5, 8}, "f32", L::Strided)}, {},
        "transposed self, strided source");
  b.add("index_add.default", {tensor({10, 8}, "f32"), I(0), tensor({6}, "i64"), tensor({6, 8}, "f32")}, {}, "special", SP);
  b.add("index_add.default", {tensor({}, "f32"), I(0), tensor({1}, "i64"), tensor({1}, "f32")}, {}, "0-d self");
  b.add("index_add_.default", {tensor({10, 8}, "f32"), I(0), tensor({12}, "i64"), tensor({12, 8}, "f32")}, {}, "in place");
  b.add("index_copy.default", {tensor({10, 8}, "f32"), I(1), tensor({8}, "i64"), tensor({10, 8}, "f32")}, {},
        "permutation of every column");
  b.add("index_copy.default", {tensor({10, 8}, "f32"), I(0), tensor({0}, "i64"), tensor({0, 8}, "f32")}, {}, "empty index");
  b.add("index_copy.default", {tensor({10, 8}, "f32"), I(0), tensor({4}, "i64"), tensor({4, 8}, "f32")}, {}, "special", SP);
  b.add("index_fill.int_Tensor", {tensor({10, 8}, "f32"), I(0), tensor({3}, "i64"), tensor({}, "f32")}, {}, "0-d tensor value");
  b.add("index_fill.int_Scalar", {tensor({10, 8}, "f32", L::Transposed), I(0), tensor({4}, "i64"), F(2.0)}, {}, "transposed self");
  b.add("index_fill_.int_Scalar", {tensor({10, 8}, "f32"), I(-1), tensor({2}, "i64"), F(std::numeric_limits<double>::infinity())}, {},
        "in place, fill inf");
  // index.Tensor: a list of optional index tensors, one per leading dim; a bool tensor is a mask.
  for (const std::string dt : {"f32", "f64", "bf16", "i64", "b8"})
    b.add("index.Tensor", {tensor({10, 8}, dt), List({tensor({6}, "i64").value})}, {}, std::string(dt) + " rows");
  b.add("index.Tensor", {tensor({10, 8}, "f32"), List({None(), tensor({5}, "i64").value})}, {}, "columns (None first)");
  b.add("index.Tensor", {tensor({10, 8}, "f32"), List({tensor({4, 1}, "i64").value, tensor({1, 3}, "i64").value})}, {},
        "two broadcast index tensors", N, kBroadcast);
  b.add("index.Tensor", {tensor({10, 8}, "f32"), List({tensor({10}, "b8").value})}, {}, "bool row mask");
  b.add("index.Tensor", {tensor({6, 7}, "f32"), List({tensor({6, 7}, "b8").value})}, {}, "bool mask of every element");
  b.add("index.Tensor", {tensor({4, 5, 6}, "f32"), List({tensor({3}, "i64").value, None(), tensor({3}, "i64").value})}, {},
        "advanced indices separated by a slice");
  b.add("index.Tensor", {tensor({10, 8}, "f32"), List({tensor({0}, "i64").value})}, {}, "empty index");
  b.add("index.Tensor", {tensor({12, 10}, "f32", L::Transposed), List({tensor({7}, "i32").value})}, {}, "transposed self, i32 index");
  b.add("index.Tensor", {tensor({10, 8}, "f32"), List({tensor({9}, "i64").value})}, {}, "special", SP);
  // index_put(self, indices, values, accumulate): without accumulate the targets are distinct.
  for (const std::string dt : {"f32", "f64", "i64", "b8"}) {
    b.add("index_put.default", {tensor({10, 8}, dt), List({tensor({4}, "i64").value}), tensor({4, 8}, dt)}, {}, std::string(dt) + " rows");
    b.add("index_put.default", {tensor({10, 8}, dt), List({tensor({12}, "i64").value}), tensor({12, 8}, dt), B(true)}, {},
          std::string(dt) + " accumulate repeats");
  }
  b.add("index_put.default", {tensor({10, 8}, "f32"), List({tensor({5}, "i64").value, tensor({5}, "i64").value}), tensor({5}, "f32")}, {},
        "element pairs");
  b.add("index_put.default", {tensor({10, 8}, "f32"), List({tensor({10}, "b8").value}), tensor({8}, "f32")}, {},
        "bool mask, broadcast values", N, kBroadcast);
  b.add("index_put.default", {tensor({10, 8}, "f32"), List({tensor({4}, "i64").value}), tensor({}, "f32")}, {}, "0-d value broadcast", N,
        kBroadcast);
  b.add("index_put.default", {tensor({10, 8}, "f32", L::Transposed), List({tensor({3}, "i64").value}), tensor({3, 8}, "f32")}, {},
        "transposed self");
  b.add("index_put.default", {tensor({10, 8}, "f32"), List({tensor({3}, "i64").value}), tensor({3, 8}, "f32")}, {}, "special", SP);
  b.add("index_put_.default", {tensor({10, 8}, "f32"), List({tensor({12}, "i64").value}), tensor({12, 8}, "f32"), B(true)}, {},
        "in place, accumulate");
  b.add("index_put_.default", {tensor({10, 8}, "f32"), List({tensor({3}, "i64").value}), tensor({3, 8}, "f32")}, {}, "in place");
  b.add("put.default", {tensor({10, 8}, "f32"), tensor({6}, "i64"), tensor({6}, "f32")}, {}, "distinct targets");
  b.add("put.default", {tensor({10, 8}, "f32"), tensor({6}, "i64"), tensor({6}, "f32"), B(true)}, {}, "accumulate");
}

void masked_ops(Builder& b) {
  for (const auto& dt : kAllReal) {
    b.add("masked_fill.Scalar", {tensor({12, 9}, dt), tensor({12, 9}, "b8"), F(-3.0)}, {}, dt);
    b.add("masked_select.default", {tensor({12, 9}, dt), tensor({12, 9}, "b8")}, {}, dt);
  }
  for (const char* op : {"masked_fill.Scalar", "masked_fill_.Scalar"}) {
    b.add(op, {tensor({12, 9}, "f32"), tensor({9}, "b8"), F(0.5)}, {}, "broadcast mask", N, kBroadcast);
    b.add(op, {tensor({12, 9}, "f32", L::Transposed), tensor({12, 9}, "b8", L::Strided), F(0.5)}, {}, "transposed self, strided mask");
    b.add(op, {tensor({30}, "f32", L::Offset), tensor({30}, "b8"), F(std::numeric_limits<double>::quiet_NaN())}, {},
          "offset self, fill nan");
    b.add(op, {tensor({}, "f32"), tensor({}, "b8"), I(7)}, {}, "0-d");
    b.add(op, {tensor({0, 4}, "f32"), tensor({0, 4}, "b8"), I(7)}, {}, "empty");
    b.add(op, {tensor({64}, "f32"), tensor({64}, "b8"), F(1.0)}, {}, "special", SP);
  }
  b.add("masked_fill.Tensor", {tensor({12, 9}, "f32"), tensor({12, 9}, "b8"), tensor({}, "f32")}, {}, "0-d tensor value");
  b.add("masked_fill.Tensor", {tensor({12, 9}, "bf16"), tensor({12, 1}, "b8"), tensor({}, "bf16")}, {}, "bf16, broadcast mask", N,
        kBroadcast);
  b.add("masked_select.default", {tensor({12, 9}, "f32"), tensor({9}, "b8")}, {}, "broadcast mask", N, kBroadcast);
  b.add("masked_select.default", {tensor({12, 9}, "f32", L::Transposed), tensor({12, 9}, "b8")}, {}, "transposed self");
  b.add("masked_select.default", {tensor({0, 3}, "f32"), tensor({0, 3}, "b8")}, {}, "empty");
  b.add("masked_select.default", {tensor({64}, "f32"), tensor({64}, "b8")}, {}, "special", SP);
  b.add("masked_scatter.default", {tensor({12, 9}, "f32"), tensor({12, 9}, "b8"), tensor({12, 9}, "f32")}, {}, "source as large as self");
  b.add("masked_scatter.default", {tensor({12, 9}, "f32"), tensor({9}, "b8"), tensor({120}, "f32")}, {}, "broadcast mask", N, kBroadcast);
  b.add("masked_scatter.default", {tensor({40}, "f32"), tensor({40}, "b8"), tensor({40}, "f32")}, {}, "special", SP);
  for (const std::string dt : {"f32", "i64", "b8", "bf16"}) b.add("nonzero.default", {tensor({12, 9}, dt)}, {}, dt);
  b.add("nonzero.default", {tensor({}, "f32")}, {}, "0-d");
  b.add("nonzero.default", {tensor({0, 5}, "f32")}, {}, "empty");
  b.add("nonzero.default", {tensor({12, 9}, "f32", L::Transposed)}, {}, "transposed");
  b.add("nonzero.default", {tensor({100}, "f32")}, {}, "special (NaN and -0.0)", SP);
}

void cat_split(Builder& b) {
  auto list = [](std::vector<TensorArg> ts) {
    std::vector<Value> v;
    for (auto& t : ts) v.push_back(t.value);
    return List(std::move(v));
  };
  for (const auto& dt : kAllReal) {
    b.add("cat.default", {list({tensor({3, 8}, dt), tensor({5, 8}, dt)}), I(0)}, {}, dt + " dim 0");
    b.add("stack.default", {list({tensor({3, 8}, dt), tensor({3, 8}, dt), tensor({3, 8}, dt)}), I(1)}, {}, dt + " dim 1");
  }
  b.add("cat.default", {list({tensor({4, 3}, "f32"), tensor({4, 5}, "f32"), tensor({4, 1}, "f32")}), I(-1)}, {}, "dim -1, three pieces");
  b.add("cat.default", {list({tensor({4, 3}, "f32"), tensor({4, 5}, "f64"), tensor({4, 1}, "i32")}), I(1)}, {}, "mixed dtypes promote");
  b.add("cat.default", {list({tensor({4, 3}, "f32"), tensor({0}, "f32")}), I(0)}, {}, "legacy empty 1-d piece is skipped");
  b.add("cat.default", {list({tensor({0, 3}, "f32"), tensor({0, 3}, "f32")}), I(0)}, {}, "all empty");
  b.add("cat.default",
        {list({tensor({6, 4}, "f32", L::Transposed), tensor({6, 4}, "f32", L::Strided), tensor({6, 4}, "f32", L::Expanded)}), I(0)}, {},
        "transposed, strided and expanded pieces");
  b.add("cat.default", {list({tensor({2, 3, 4}, "f32"), tensor({2, 3, 4}, "f32")}), I(1)}, {}, "special", SP);
  b.add("cat.default", {list({tensor({1}, "f32")}), I(0)}, {}, "one piece");
  b.add("stack.default", {list({tensor({}, "f32"), tensor({}, "f32")}), I(0)}, {}, "0-d pieces");
  b.add("stack.default", {list({tensor({4, 3}, "f32", L::Transposed), tensor({4, 3}, "f32")}), I(-1)}, {}, "dim -1, transposed piece");
  b.add("stack.default", {list({tensor({5}, "f32"), tensor({5}, "f32")}), I(0)}, {}, "special", SP);
  for (const std::string dt : {"f32", "i64", "b8", "bf16"}) {
    b.add("split.Tensor", {tensor({10, 6}, dt), I(3)}, {}, std::string(dt) + " size 3 (remainder 1)");
    b.add("split_with_sizes.default", {tensor({10, 6}, dt), Ints({1, 2, 3}), I(1)}, {}, std::string(dt) + " sizes 1,2,3");
    b.add("chunk.default", {tensor({10, 6}, dt), I(4)}, {}, std::string(dt) + " 4 chunks");
    b.add("unbind.int", {tensor({3, 4, 5}, dt), I(1)}, {}, std::string(dt) + " dim 1");
  }
  b.add("split.Tensor", {tensor({10, 6}, "f32", L::Transposed), I(4), I(1)}, {}, "transposed, dim 1");
  b.add("split.Tensor", {tensor({0, 6}, "f32"), I(2)}, {}, "empty");
  b.add("split_with_sizes.default", {tensor({10, 6}, "f32"), Ints({0, 10})}, {}, "a zero-size piece");
  b.add("chunk.default", {tensor({7}, "f32", L::Offset), I(3)}, {}, "offset view");
  b.add("unbind.int", {tensor({4, 3}, "f32"), I(0)}, {}, "special", SP);
}

void views_and_copies(Builder& b) {
  struct V {
    const char* op;
    std::vector<Arg> extra;
    std::vector<int64_t> shape;
    const char* label;
  };
  const std::vector<V> views = {
      {"view.default", {Ints({8, -1})}, {4, 6, 4}, "to [8, -1]"},
      {"reshape.default", {Ints({-1})}, {4, 6, 4}, "flatten"},
      {"_unsafe_view.default", {Ints({24, 4})}, {4, 6, 4}, "to [24, 4]"},
      {"permute.default", {Ints({2, 0, 1})}, {4, 6, 5}, "2,0,1"},
      {"transpose.int", {I(0), I(2)}, {4, 6, 5}, "0 and 2"},
      {"t.default", {}, {4, 6}, "2-d"},
      {"unsqueeze.default", {I(-1)}, {4, 6}, "at -1"},
      {"squeeze.dim", {I(1)}, {4, 1, 6}, "dim 1"},
      {"squeeze.default", {}, {1, 4, 1, 6}, "all unit dims"},
      {"expand.default", {Ints({3, 4, 6})}, {4, 1}, "to [3, 4, 6]"},
      {"flatten.using_ints", {I(1), I(2)}, {2, 3, 4, 5}, "dims 1..2"},
      {"clone.default", {}, {7, 9}, "copy"},
      {"contiguous.default", {}, {7, 9}, "contiguous copy"},
      {"flip.default", {Ints({0, -1})}, {5, 6, 7}, "first and last dims"},
      {"roll.default", {Ints({2, -3}), Ints({0, 1})}, {5, 7}, "by 2 and -3"},
      {"repeat.default", {Ints({2, 1, 3})}, {4, 5}, "2,1,3"},
      {"narrow.default", {I(1), I(2), I(3)}, {5, 7}, "dim 1 from 2, length 3"},
      {"select.int", {I(1), I(-1)}, {5, 7}, "last of dim 1"},
      {"slice.Tensor", {I(1), I(1), I(6), I(2)}, {5, 7}, "dim 1, 1:6:2"},
      {"diagonal.default", {I(1), I(0), I(1)}, {6, 6}, "offset 1"},
      {"tril.default", {I(-1)}, {6, 7}, "below the diagonal"},
      {"triu.default", {I(1)}, {6, 7}, "above the diagonal"},
      {"constant_pad_nd.default", {Ints({1, 2, 0, 3}), F(-1.5)}, {4, 5}, "pad 1,2,0,3 with -1.5"},
      {"constant_pad_nd.default", {Ints({-1, 1})}, {4, 5}, "negative pad crops"},
      {"unfold.default", {I(1), I(3), I(2)}, {4, 9}, "size 3 step 2"},
      {"movedim.int", {I(0), I(-1)}, {3, 4, 5}, "0 to -1"},
      {"alias.default", {}, {4, 5}, "alias"},
      {"zeros_like.default", {}, {4, 5}, "zeros"},
      {"ones_like.default", {}, {4, 5}, "ones"},
      {"full_like.default", {F(2.5)}, {4, 5}, "2.5"},
      {"fill.Scalar", {F(-7.0)}, {4, 5}, "-7"},
      {"new_zeros.default", {Ints({3, 2})}, {4, 5}, "[3, 2]"},
      {"new_ones.default", {Ints({3, 2})}, {4, 5}, "[3, 2]"},
      {"new_full.default", {Ints({3, 2}), F(4.0)}, {4, 5}, "[3, 2] of 4"},
      {"_to_copy.default", {}, {4, 5}, "same dtype"},
      {"pixel_shuffle.default", {I(2)}, {2, 8, 3, 3}, "factor 2"},
      {"pixel_unshuffle.default", {I(2)}, {2, 2, 6, 6}, "factor 2"},
      {"reflection_pad2d.default", {Ints({1, 2, 2, 1})}, {2, 3, 5, 6}, "pad 1,2,2,1"},
      {"replication_pad2d.default", {Ints({1, 2, 2, 1})}, {2, 3, 5, 6}, "pad 1,2,2,1"},
      {"upsample_nearest2d.vec", {Ints({10, 12}), None()}, {2, 3, 5, 6}, "to 10x12"},
      {"upsample_bilinear2d.vec", {Ints({9, 11}), B(false), None()}, {2, 3, 5, 6}, "to 9x11"},
      {"upsample_bilinear2d.vec", {Ints({9, 11}), B(true), None()}, {2, 3, 5, 6}, "to 9x11, align_corners"},
  };
  for (const auto& v : views) {
    auto add = [&](TensorArg t, const std::string& label, ValueFamily f = N) {
      std::vector<Arg> args = {std::move(t)};
      for (const auto& a : v.extra) args.push_back(a);
      b.add(v.op, std::move(args), {}, std::string(v.label) + ", " + label, f);
    };
    for (const std::string dt : {"f32", "f64", "bf16", "i64", "b8"}) add(tensor(v.shape, dt), dt);
    add(tensor(v.shape, "f32", L::Transposed), "transposed view");
    add(tensor(v.shape, "f32", L::Offset), "offset view");
    add(tensor(v.shape, "f32", L::Strided), "strided view");
    add(tensor(v.shape, "f32"), "special", SP);
  }
  // Copies that convert.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{"f32", "f16"},
                                                                                 {"f32", "bf16"},
                                                                                 {"f64", "f32"},
                                                                                 {"f32", "i32"},
                                                                                 {"i64", "f32"},
                                                                                 {"b8", "f32"},
                                                                                 {"f32", "b8"},
                                                                                 {"bf16", "f32"}}) {
    b.add("_to_copy.default", {tensor({20, 9}, from)}, {{"dtype", Dtype(to)}}, from + " to " + to);
    b.add("copy_.default", {tensor({20, 9}, to), tensor({20, 9}, from)}, {}, from + " into " + to);
  }
  b.add("_to_copy.default", {tensor({100}, "f32")}, {{"dtype", Dtype("f16")}}, "special f32 to f16 (overflow to inf)", SP);
  b.add("_to_copy.default", {tensor({100}, "f64")}, {{"dtype", Dtype("bf16")}}, "special f64 to bf16", SP);
  b.add("copy_.default", {tensor({6, 8}, "f32", L::Transposed), tensor({6, 8}, "f32")}, {}, "into a transposed view");
  b.add("copy_.default", {tensor({6, 8}, "f32"), tensor({8}, "f32")}, {}, "broadcast source", N, kBroadcast);
  b.add("copy_.default", {tensor({6, 8}, "f32", L::Offset), tensor({6, 8}, "f32", L::Strided)}, {}, "offset destination, strided source");
  b.add("copy_.default", {tensor({50}, "f32"), tensor({50}, "f32")}, {}, "special (bit-exact)", SP);
  b.add("fill_.Scalar", {tensor({6, 8}, "f32", L::Transposed), F(3.0)}, {}, "transposed view");
  b.add("fill_.Scalar", {tensor({6, 8}, "i32"), I(-4)}, {}, "i32");
  b.add("fill_.Tensor", {tensor({6, 8}, "f32"), tensor({}, "f32")}, {}, "0-d tensor value");
  b.add("zero_.default", {tensor({6, 8}, "f32", L::Offset)}, {}, "offset view");
  b.add("zero_.default", {tensor({6, 8}, "bf16", L::Strided)}, {}, "strided bf16");
  b.add("as_strided.default", {tensor({6, 8}, "f32"), Ints({4, 4}), Ints({8, 2})}, {}, "every other column");
  b.add("as_strided.default", {tensor({6, 8}, "f32"), Ints({3, 3}), Ints({1, 1}), I(2)}, {}, "overlapping windows, offset 2");
  b.add("full.default", {Ints({3, 4}), F(1.5)}, {{"dtype", Dtype("f32")}}, "3x4 of 1.5");
  b.add("zeros.default", {Ints({3, 4})}, {{"dtype", Dtype("f64")}}, "3x4 f64");
  b.add("ones.default", {Ints({2, 0})}, {{"dtype", Dtype("i64")}}, "empty i64");
  b.add("arange.start_step", {I(-5), I(17), I(3)}, {{"dtype", Dtype("i64")}}, "-5 to 17 step 3");
  b.add("arange.start_step", {F(0.0), F(1.0), F(0.1)}, {{"dtype", Dtype("f32")}}, "0 to 1 step 0.1");
  b.add("linspace.default", {F(-1.0), F(1.0), I(7)}, {{"dtype", Dtype("f32")}}, "7 points");
  b.add("eye.default", {I(5)}, {{"dtype", Dtype("f32")}}, "5x5");
}

}  // namespace

void shape_samples(Builder& b, bool large) {
  if (large) {
    const int64_t n = (int64_t{1} << 31) + 37;
    b.add("gather.default", {tensor({n}, "u8"), I(0), tensor({1000}, "i64")}, {}, "from 2^31+37 elements u8", N, kLarge);
    b.add("cat.default", {List({tensor({n / 2}, "i8").value, tensor({n / 2 + 1}, "i8").value}), I(0)}, {},
          "two halves into 2^31+ elements i8", N, kLarge);
    return;
  }
  gather_scatter(b);
  index_ops(b);
  masked_ops(b);
  cat_split(b);
  views_and_copies(b);
}

}  // namespace kg::harness::edge
