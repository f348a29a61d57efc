// PolicyRationale: the numbers behind competition's per-op tolerances for float32 accumulating
// ops (the comment at the top of policies/profiles/competition.toml). Checked here so that a
// change to the profile that would reject honest kernels, or pass precision downgrades, fails.
//
// Model: eager sums pairwise (cascade, as PyTorch's CPU sum and the blocked GPU reductions do);
// the worst honest kernel sums with one sequential float32 accumulator. A downgraded kernel rounds
// its inputs to TF32 (10 mantissa bits) or bf16 (7) before multiplying (docs/threats.md B15).
#include "policy_test_util.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

namespace kg::policy {
namespace {

float pairwise(const float* x, size_t n) {
  if (n <= 8) {
    float s = 0;
    for (size_t i = 0; i < n; ++i) s += x[i];
    return s;
  }
  size_t h = n / 2;
  return pairwise(x, h) + pairwise(x + h, n - h);
}

// Round a float to `bits` mantissa bits, to nearest even.
float keep_mantissa(float v, int bits) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  const int drop = 23 - bits;
  const uint32_t half = 1u << (drop - 1);
  u = (u + half - 1 + ((u >> drop) & 1)) & ~((1u << drop) - 1);
  std::memcpy(&v, &u, 4);
  return v;
}

struct Rates {
  double honest, tf32, bf16;  // fraction of outputs outside the tolerance
};

// Dot products of K randn pairs, `rows` of them, judged with `t` against the pairwise sum.
Rates dot_products(size_t k, int rows, Tolerance t, bool products = true) {
  std::mt19937 gen(1234 + k);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> x(k), y(k), p(k);
  int bad_honest = 0, bad_tf32 = 0, bad_bf16 = 0;
  auto bad = [&](float c, float ref) { return std::fabs(double(c) - ref) > t.atol + t.rtol * std::fabs(double(ref)); };
  for (int r = 0; r < rows; ++r) {
    for (size_t i = 0; i < k; ++i) {
      x[i] = normal(gen);
      y[i] = products ? normal(gen) : 1.0f;
      p[i] = x[i] * y[i];
    }
    const float ref = pairwise(p.data(), k);
    float seq = 0, tf = 0, bf = 0;
    for (size_t i = 0; i < k; ++i) {
      seq += p[i];
      tf += keep_mantissa(x[i], 10) * keep_mantissa(y[i], 10);
      bf += keep_mantissa(x[i], 7) * keep_mantissa(y[i], 7);
    }
    bad_honest += bad(seq, ref);
    bad_tf32 += bad(tf, ref);
    bad_bf16 += bad(bf, ref);
  }
  return {double(bad_honest) / rows, double(bad_tf32) / rows, double(bad_bf16) / rows};
}

TEST(PolicyRationale, MatmulToleranceAcceptsHonestOrderRejectsDowngrades) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  const Tolerance t = load("competition").tolerance_for("mm.default", "f32");
  for (size_t k : {64, 1024, 4096, 32768}) {
    SCOPED_TRACE("K=" + std::to_string(k));
    Rates r = dot_products(k, k >= 32768 ? 300 : 2000, t);
    EXPECT_EQ(r.honest, 0.0);  // every output of the sequential-order kernel passes
    EXPECT_GT(r.tf32, 0.3);    // TF32 inputs: most outputs fail
    EXPECT_GT(r.bf16, 0.8);    // bf16 inputs: nearly all fail
  }
}

TEST(PolicyRationale, SumToleranceAcceptsHonestOrder) {
  test::PolicyDirOverride dir(KG_TEST_SHIPPED_DIR);
  const Tolerance t = load("competition").tolerance_for("sum.dim_IntList", "f32");
  for (size_t n : {1024, 16384, 32768}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    EXPECT_EQ(dot_products(n, n >= 32768 ? 300 : 1000, t, /*products=*/false).honest, 0.0);
  }
}

TEST(PolicyRationale, TorchTestingDefaultWouldRejectHonestMatmul) {
  // Why the override exists at all: at K = 4096 the float32 default rejects a large share of
  // an honest kernel's outputs.
  EXPECT_GT(dot_products(4096, 1000, builtin_tolerance("f32")).honest, 0.1);
}

}  // namespace
}  // namespace kg::policy
