// DrawsAhead* tests: inputs drawn ahead on another thread are exactly the ones make_inputs draws
// where they are used (every byte of every storage), are taken only for the same sample at the
// same seed index and only once (in any order, after finish() too), carry a failed draw's
// exception to the taker, and a draw no one wants any more stops part-way.
#include "draws_ahead.h"

#include "kernelgate/harness.h"
#include "kernelgate/loader.h"
#include "sample_spec.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace kg::harness;
using kg::harness::evaluation::DrawsAhead;
using kg::harness::test::sample;

namespace {

std::mt19937_64 rng_at(size_t seed_index) { return std::mt19937_64(1000 + seed_index); }

DrawsAhead::Want want(size_t seed_index, const Sample& s) { return {seed_index, s, rng_at(seed_index)}; }

std::vector<c10::IValue> drawn_here(size_t seed_index, const Sample& s) {
  std::mt19937_64 rng = rng_at(seed_index);
  return make_inputs(kg::loader::aten_schema(s.op), s, rng);
}

// The same tensors: dtype, sizes, strides, offset, and every byte of the storage behind them.
void expect_same_bytes(const std::vector<c10::IValue>& a, const std::vector<c10::IValue>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].isTensor(), b[k].isTensor()) << k;
    if (!a[k].isTensor()) continue;
    const at::Tensor &x = a[k].toTensor(), &y = b[k].toTensor();
    EXPECT_EQ(x.scalar_type(), y.scalar_type()) << k;
    EXPECT_EQ(x.sizes(), y.sizes()) << k;
    EXPECT_EQ(x.strides(), y.strides()) << k;
    EXPECT_EQ(x.storage_offset(), y.storage_offset()) << k;
    ASSERT_EQ(x.storage().nbytes(), y.storage().nbytes()) << k;
    EXPECT_EQ(std::memcmp(x.storage().data(), y.storage().data(), x.storage().nbytes()), 0) << "argument " << k << " differs";
  }
}

}  // namespace

TEST(DrawsAhead, TakesExactlyTheValuesDrawnWhereTheyAreUsed) {
  const std::vector<std::pair<size_t, Sample>> cases = {
      {310007, sample("relu.default", "((T([4194304], f32),), {})")},  // the ladder's top rung
      {300003, sample("add.Tensor", "((T([512, 300], f16), T([300], f16)), {})", ValueFamily::Special)},
      {300004, sample("mul.Tensor", "((T([64, 96], f32, [1, 64]), T([64, 96], f32)), {})")},  // strided
      {300005, sample("gather.default", "((T([128, 64], f32), 1, T([128, 32], i64)), {})")},  // an index rule
      {300006, sample("add.Tensor", "((T([1000, 100], i32), T([1000, 100], i32)), {})", ValueFamily::Special)},
  };
  DrawsAhead ahead(kg::loader::aten_schema("relu.default"), {});
  for (const auto& [seed_index, s] : cases) {
    DrawsAhead one(kg::loader::aten_schema(s.op), {want(seed_index, s)});
    std::optional<std::vector<c10::IValue>> taken = one.take(seed_index, s);
    ASSERT_TRUE(taken) << s.op;
    expect_same_bytes(*taken, drawn_here(seed_index, s));
    EXPECT_EQ(one.taken(), 1);
  }
  EXPECT_FALSE(ahead.take(310007, cases[0].second)) << "nothing was wanted of this one";
}

TEST(DrawsAhead, OnlyTheSameSampleAtTheSameSeedIndexIsTakenAndOnlyOnce) {
  const Sample big = sample("relu.default", "((T([1048576], f32),), {})");
  const Sample other_shape = sample("relu.default", "((T([1048575], f32),), {})");
  Sample other_family = big;
  other_family.family = ValueFamily::Special;
  Sample other_offset = big;
  other_offset.storage_offsets = {3};
  DrawsAhead ahead(kg::loader::aten_schema("relu.default"), {want(300001, big)});
  EXPECT_TRUE(ahead.has_all({want(300001, big)}));
  EXPECT_FALSE(ahead.has_all({want(300001, big), want(310001, big)}));
  EXPECT_FALSE(ahead.take(300002, big)) << "another seed index";
  EXPECT_FALSE(ahead.take(300001, other_shape));
  EXPECT_FALSE(ahead.take(300001, other_family));
  EXPECT_FALSE(ahead.take(300001, other_offset));
  EXPECT_EQ(ahead.taken(), 0);
  std::optional<std::vector<c10::IValue>> taken = ahead.take(300001, big);
  ASSERT_TRUE(taken);
  expect_same_bytes(*taken, drawn_here(300001, big));
  EXPECT_FALSE(ahead.take(300001, big)) << "taken twice";
  EXPECT_FALSE(ahead.has_all({want(300001, big)}));
  EXPECT_EQ(ahead.taken(), 1);
}

TEST(DrawsAhead, AFailedDrawThrowsAtTheTakeAsItWouldWhereItIsUsed) {
  const Sample bad = sample("relu.default", "((T([4, 3], nosuchdtype),), {})");
  const Sample good = sample("relu.default", "((T([4, 3], f32),), {})");
  DrawsAhead ahead(kg::loader::aten_schema("relu.default"), {want(5, bad), want(6, good)});
  EXPECT_THROW(drawn_here(5, bad), std::runtime_error);
  EXPECT_THROW(ahead.take(5, bad), std::runtime_error);
  std::optional<std::vector<c10::IValue>> taken = ahead.take(6, good);
  ASSERT_TRUE(taken) << "the draw after a failed one still happens";
  expect_same_bytes(*taken, drawn_here(6, good));
}

TEST(DrawsAhead, AStopEndsALargeDrawPartWay) {
  const Sample big = sample("relu.default", "((T([4194304], f32),), {})");
  std::atomic<bool> stop{true};
  std::mt19937_64 rng = rng_at(1);
  EXPECT_THROW(make_inputs(kg::loader::aten_schema("relu.default"), big, rng, &stop), DrawStopped);
  stop = false;
  rng = rng_at(1);
  expect_same_bytes(make_inputs(kg::loader::aten_schema("relu.default"), big, rng, &stop), drawn_here(1, big));
  // Destroyed with its draws not taken: they stop, and the destructor returns.
  for (int k = 0; k < 3; ++k) DrawsAhead ahead(kg::loader::aten_schema("relu.default"), {want(1, big), want(2, big), want(3, big)});
}

TEST(DrawsAhead, FinishWaitsForEveryDrawAndTheyAreStillTaken) {
  const Sample a = sample("relu.default", "((T([1048576], f32),), {})");
  const Sample b = sample("relu.default", "((T([64, 128], f16),), {})", ValueFamily::Special);
  DrawsAhead ahead(kg::loader::aten_schema("relu.default"), {want(400001, a), want(400002, b)});
  ahead.finish();
  ahead.finish();  // again: nothing left to wait for
  EXPECT_TRUE(ahead.has_all({want(400001, a), want(400002, b)}));
  std::optional<std::vector<c10::IValue>> second = ahead.take(400002, b);
  ASSERT_TRUE(second);
  expect_same_bytes(*second, drawn_here(400002, b));
  std::optional<std::vector<c10::IValue>> first = ahead.take(400001, a);
  ASSERT_TRUE(first);
  expect_same_bytes(*first, drawn_here(400001, a));
}
