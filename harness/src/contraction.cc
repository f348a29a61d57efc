// Which overloads are contractions (sums of products), for the comparison's non-finite rule.
#include "kernelgate/harness.h"
#include "kernelgate/names.h"

#include <set>
#include <sstream>

namespace kg::harness {
namespace {

// The convolution family by name component, so every backend's variant is covered
// (conv2d, conv_transpose1d, _convolution, slow_conv3d, cudnn_convolution_relu, thnn_conv2d,
// convolution_backward) and `_convert_indices_from_coo_to_csr` is not.
bool is_convolution(const std::string& base) {
  std::istringstream parts(base);
  for (std::string p; std::getline(parts, p, '_');)
    if (p == "conv" || p == "convolution" || p == "conv1d" || p == "conv2d" || p == "conv3d") return true;
  return false;
}

}  // namespace

bool is_contraction(const std::string& op) {
  // outer, addr and ger are left out: one product per element, no sum, so inf * 0 is NaN in
  // every implementation.
  static const std::set<std::string> contractions = {"mm",
                                                     "bmm",
                                                     "addmm",
                                                     "addmv",
                                                     "mv",
                                                     "dot",
                                                     "vdot",
                                                     "inner",
                                                     "matmul",
                                                     "linear",
                                                     "baddbmm",
                                                     "addbmm",
                                                     "einsum",
                                                     "tensordot",
                                                     "bilinear",
                                                     "_trilinear",
                                                     "chain_matmul",
                                                     "linalg_matmul",
                                                     "linalg_multi_dot",
                                                     "linalg_vecdot",
                                                     "_addmm_activation",
                                                     "mkldnn_linear",
                                                     "matmul_backward",
                                                     "linear_backward",
                                                     "_scaled_mm",
                                                     "_sparse_mm",
                                                     "_sparse_addmm",
                                                     "sspaddmm",
                                                     "hspmm",
                                                     "smm",
                                                     "sparse_sampled_addmm"};
  const auto name = names::OpName::try_parse(op);
  if (!name) return false;
  const std::string base = name->base();
  return contractions.count(base) > 0 || is_convolution(base);
}

}  // namespace kg::harness
