// Returns against the schema's alias annotations, each case differing only in that respect.
#include "../../harness/src/aliasing.h"
#include "kernelgate/protocol.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

using kg::harness::aliasing_mismatch;
using kg::protocol::kAliasNone;
using kg::protocol::kAliasNotTensor;

namespace {
const c10::FunctionSchema& schema(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).schema();
}
}  // namespace

TEST(VerdictAliasing, InPlaceReturnMustBeTheWrittenArgument) {
  const auto& add_ = schema("aten::add_", "Tensor");  // add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)
  EXPECT_FALSE(aliasing_mismatch(add_, {0}, {0}));
  auto fresh = aliasing_mismatch(add_, {kAliasNone}, {0});
  ASSERT_TRUE(fresh);
  EXPECT_NE(fresh->find("argument 0 (self) itself"), std::string::npos) << *fresh;
  EXPECT_NE(fresh->find("different tensor"), std::string::npos) << *fresh;
  EXPECT_TRUE(aliasing_mismatch(add_, {1}, {0}));  // other's storage
}

TEST(VerdictAliasing, OutVariantReturnMustBeOut) {
  const auto& add_out = schema("aten::add", "out");  // out is argument 3
  EXPECT_FALSE(aliasing_mismatch(add_out, {3}, {3}));
  EXPECT_TRUE(aliasing_mismatch(add_out, {0}, {3}));
}

TEST(VerdictAliasing, UnannotatedReturnMustBeNew) {
  const auto& relu = schema("aten::relu", "");
  EXPECT_FALSE(aliasing_mismatch(relu, {kAliasNone}, {kAliasNone}));
  auto same = aliasing_mismatch(relu, {0}, {kAliasNone});
  ASSERT_TRUE(same);
  EXPECT_NE(same->find("new tensor"), std::string::npos) << *same;
  // Unless the reference aliases too (aten::_unsafe_view returns a view, unannotated).
  EXPECT_FALSE(aliasing_mismatch(relu, {0}, {0}));
  EXPECT_FALSE(aliasing_mismatch(relu, {kAliasNotTensor}, {kAliasNone}));
}

TEST(VerdictAliasing, ViewReturnMayGoEitherWay) {
  const auto& reshape = schema("aten::reshape", "");  // Tensor(a) self -> Tensor(a)
  EXPECT_FALSE(aliasing_mismatch(reshape, {0}, {0}));
  EXPECT_FALSE(aliasing_mismatch(reshape, {kAliasNone}, {0}));
}
