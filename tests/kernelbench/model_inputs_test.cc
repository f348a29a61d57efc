// KernelBenchInputs.*: the value families kernelgate adds to get_inputs()'s draws.
#include <gtest/gtest.h>

#include "model_inputs.h"

namespace {

using kg::kernelbench::all_finite;
using kg::kernelbench::describe_inputs;
using kg::kernelbench::non_contiguous_copies;
using kg::kernelbench::with_special_values;

TEST(KernelBenchInputs, NonContiguousCopiesKeepValuesAndDoubleTheLastStride) {
  const std::vector<at::Tensor> in = {at::randn({4, 5}), at::randn({}), at::randn({0, 3}), at::arange(6)};
  const auto out = non_contiguous_copies(in);
  ASSERT_EQ(out.size(), in.size());
  EXPECT_FALSE(out[0].is_contiguous());
  EXPECT_EQ(out[0].stride(1), 2);
  EXPECT_TRUE(at::equal(out[0], in[0]));
  EXPECT_TRUE(at::equal(out[1], in[1]));
  EXPECT_EQ(out[2].sizes(), in[2].sizes());
  EXPECT_FALSE(out[3].is_contiguous());
  EXPECT_TRUE(at::equal(out[3], in[3]));
  EXPECT_EQ(describe_inputs({out[0]}), "(T([4, 5], f32, [10, 2]),)");
}

TEST(KernelBenchInputs, SpecialValuesReplaceAboutOneInSixteenWithOneSignOfLargeValues) {
  const at::Tensor x = at::randn({64, 64});
  const at::Tensor ints = at::arange(10);
  bool changed = false;
  const auto out = with_special_values({x, ints}, 7, &changed);
  ASSERT_TRUE(changed);
  const int64_t differ = (out[0] != x).sum().item<int64_t>();
  EXPECT_GT(differ, 64 * 64 / 32);
  EXPECT_LT(differ, 64 * 64 / 8);
  const bool positive = (out[0] == 1e4).any().item<bool>(), negative = (out[0] == -1e4).any().item<bool>();
  EXPECT_NE(positive, negative) << "a tensor's large values share one sign";
  EXPECT_TRUE(at::equal(out[1], ints)) << "integer tensors are left as they are";
  EXPECT_TRUE(all_finite(out));
  bool again = false;
  EXPECT_TRUE(at::equal(with_special_values({x, ints}, 7, &again)[0], out[0])) << "the same seed, the same values";
  EXPECT_FALSE(all_finite({at::full({2}, std::numeric_limits<float>::infinity())}));
}

}  // namespace
