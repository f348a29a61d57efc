// Loader*/BuildGlue*: the C++ signature kernelgate expects for an overload, and the generated
// glue: the right signature builds, a wrong one is a build error naming the expected one.
#include "loader_test_util.h"

#include <gtest/gtest.h>

using namespace kg::loader;
using namespace kg::loader::test;

namespace {

std::string decl(const std::string& op) { return cpp_signature(aten_schema(op)).declaration(folder_for_op(op) + "_kernel_impl"); }

struct Case {
  const char* op;
  const char* right;  // a body with the expected signature
  const char* wrong;  // a plausible mistake
};

// One per schema feature: plain, in-place, out=, optional, list argument, tuple return.
const Case kCases[] = {
    {"relu.default", "at::Tensor relu__default_kernel_impl(const at::Tensor& self) { return self.clamp_min(0); }",
     "void relu__default_kernel_impl(const at::Tensor& self) {}"},
    {"add_.Tensor",
     "at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) { return self; }",
     "at::Tensor add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) { return self.clone(); }"},
    {"add.out",
     "at::Tensor& add__out_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) { return out; }",
     "at::Tensor& add__out_kernel_impl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) { return out; }"},
    {"clamp.default",
     "at::Tensor clamp__default_kernel_impl(const at::Tensor& self, const c10::optional<at::Scalar>& min, const c10::optional<at::Scalar>& max) { return self; }",
     "at::Tensor clamp__default_kernel_impl(const at::Tensor& self, const at::Scalar& min, const at::Scalar& max) { return self; }"},
    {"cat.default", "at::Tensor cat__default_kernel_impl(at::TensorList tensors, int64_t dim) { return tensors[0]; }",
     "at::Tensor cat__default_kernel_impl(const at::Tensor& tensors, int64_t dim) { return tensors; }"},
    {"max.dim",
     "std::tuple<at::Tensor, at::Tensor> max__dim_kernel_impl(const at::Tensor& self, int64_t dim, bool keepdim) { return {self, self}; }",
     "at::Tensor max__dim_kernel_impl(const at::Tensor& self, int64_t dim, bool keepdim) { return self; }"},
};

}  // namespace

TEST(LoaderSignature, MatchesTheDispatchersCppTypes) {
  EXPECT_EQ(decl("relu.default"), "at::Tensor relu__default_kernel_impl(const at::Tensor& self)");
  EXPECT_EQ(decl("add_.Tensor"),
            "at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)");
  EXPECT_EQ(decl("add.out"),
            "at::Tensor& add__out_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out)");
  EXPECT_EQ(
      decl("clamp.default"),
      "at::Tensor clamp__default_kernel_impl(const at::Tensor& self, const c10::optional<at::Scalar>& min, const c10::optional<at::Scalar>& max)");
  EXPECT_EQ(decl("cat.default"), "at::Tensor cat__default_kernel_impl(at::TensorList tensors, int64_t dim)");
  EXPECT_EQ(decl("max.dim"), "::std::tuple<at::Tensor,at::Tensor> max__dim_kernel_impl(const at::Tensor& self, int64_t dim, bool keepdim)");
  EXPECT_EQ(
      decl("sum.dim_IntList"),
      "at::Tensor sum__dim_IntList_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, c10::optional<at::ScalarType> dtype)");
}

TEST(LoaderSignature, RegisteredSchemaKeepsAliasAnnotations) {
  EXPECT_EQ(registered_schema(aten_schema("add_.Tensor"), "add___Tensor"),
            "add___Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
}

TEST(LoaderSignature, UnknownOverloadIsNamed) {
  try {
    aten_schema("relu.nope");
    FAIL();
  } catch (const std::exception& e) { EXPECT_NE(std::string(e.what()).find("relu.nope"), std::string::npos); }
}

TEST(LoaderFolders, RoundTrip) {
  EXPECT_EQ(folder_for_op("add_.Tensor"), "add___Tensor");
  EXPECT_EQ(op_for_folder("add___Tensor"), "add_.Tensor");
  EXPECT_EQ(op_for_folder("_softmax__default"), "_softmax.default");
  EXPECT_EQ(op_for_folder("relu"), "");
}

class BuildGlue : public ::testing::TestWithParam<Case> {};

TEST_P(BuildGlue, RightSignatureBuilds) {
  const Case& c = GetParam();
  TempDir d;
  std::string folder = folder_for_op(c.op);
  OpFolder op = make_op(d.path, c.op, {{folder + "_implementation.cpp", std::string("#include <ATen/ATen.h>\n") + c.right + "\n"}});
  BuildResult r = build(op, options(d.path));
  EXPECT_TRUE(r.ok) << all_diagnostics(r);
}

TEST_P(BuildGlue, WrongSignatureNamesTheExpectedOne) {
  const Case& c = GetParam();
  TempDir d;
  std::string folder = folder_for_op(c.op);
  OpFolder op = make_op(d.path, c.op, {{folder + "_implementation.cpp", std::string("#include <ATen/ATen.h>\n") + c.wrong + "\n"}});
  BuildResult r = build(op, options(d.path));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("expected signature: " + decl(c.op)), std::string::npos) << all_diagnostics(r);
  bool note = false;
  for (const auto& diag : r.diagnostics) note |= diag.severity == "note" && diag.message.find(decl(c.op)) != std::string::npos;
  EXPECT_TRUE(note) << "a note diagnostic carries the expected signature";
}

INSTANTIATE_TEST_SUITE_P(Schemas, BuildGlue, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string n = folder_for_op(info.param.op);
  return n;
});
