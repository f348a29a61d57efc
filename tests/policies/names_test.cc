// Names*: the shared vocabulary (kernelgate/names.h): every spelling of an op overload parses to
// the same OpName and prints back each spelling; malformed names are refused with a message;
// devices and dtypes round-trip through their names.
#include "kernelgate/names.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using kg::names::Device;
using kg::names::Dtype;
using kg::names::OpName;

// The message of the std::invalid_argument `f` throws, "" when it throws none.
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) { return e.what(); }
  return "";
}

TEST(NamesOp, EverySpellingParsesToTheSameOverload) {
  const OpName want = OpName::parse("addmm_.default");
  for (const char* s : {"aten::addmm_.default", "aten.addmm_.default", "addmm_.default", "aten::addmm_", "addmm_"}) {
    const auto got = OpName::try_parse(s);
    ASSERT_TRUE(got) << s;
    EXPECT_EQ(*got, want) << s;
  }
  EXPECT_EQ(OpName::from_folder("addmm___default"), want);
  EXPECT_EQ(OpName::from_dispatcher("aten::addmm_", ""), want);
  EXPECT_EQ(OpName::from_dispatcher("aten::addmm_", "default"), want);
  EXPECT_NE(OpName::parse("addmm.default"), want) << "the in-place overload is its own";
  EXPECT_NE(OpName::parse("addmm_.out"), want);
}

TEST(NamesOp, PrintsEachSpelling) {
  const OpName add = OpName::parse("aten::add_.Tensor");
  EXPECT_EQ(add.name(), "add_");
  EXPECT_EQ(add.overload(), "Tensor");
  EXPECT_EQ(add.base(), "add");
  EXPECT_EQ(add.profile(), "add_.Tensor");
  EXPECT_EQ(add.trace(), "aten.add_.Tensor");
  EXPECT_EQ(add.dispatcher_name(), "aten::add_");
  EXPECT_EQ(add.dispatcher_overload(), "Tensor");
  EXPECT_EQ(add.folder(), "add___Tensor");

  const OpName mm = OpName::parse("aten::mm");
  EXPECT_EQ(mm.profile(), "mm.default");
  EXPECT_EQ(mm.overload(), "default");
  EXPECT_EQ(mm.dispatcher_overload(), "") << "the dispatcher writes the default overload as \"\"";
  EXPECT_EQ(mm.folder(), "mm__default");
  EXPECT_EQ(OpName::parse("sum.dim_IntList").folder(), "sum__dim_IntList");
  EXPECT_EQ(OpName::parse("_softmax.default").base(), "_softmax");
  EXPECT_EQ(OpName::parse("__and__.Tensor").base(), "__and") << "every trailing '_' is the in-place suffix's";
  EXPECT_EQ(OpName::parse("add.out").base(), "add");
}

TEST(NamesOp, EachSpellingRoundTrips) {
  for (const char* s : {"add.Tensor", "add_.Tensor", "_softmax.default", "sum.dim_IntList", "__and__.Tensor", "relu.default"}) {
    const OpName op = OpName::parse(s);
    EXPECT_EQ(op.profile(), s);
    EXPECT_EQ(OpName::parse(op.trace()), op) << s;
    EXPECT_EQ(OpName::parse(op.dispatcher_name() + "." + op.overload()), op) << s;
    EXPECT_EQ(OpName::from_dispatcher(op.dispatcher_name(), op.dispatcher_overload()), op) << s;
    EXPECT_EQ(OpName::from_folder(op.folder()), op) << s;
  }
}

TEST(NamesOp, FolderSpellingSplitsAtTheLastDoubleUnderscore) {
  EXPECT_EQ(OpName::from_folder("add__Tensor")->profile(), "add.Tensor");
  EXPECT_EQ(OpName::from_folder("add___Tensor")->profile(), "add_.Tensor");
  EXPECT_EQ(OpName::from_folder("__and____Tensor")->profile(), "__and__.Tensor");
  EXPECT_EQ(OpName::from_folder("_softmax__default")->profile(), "_softmax.default");
  for (const char* bad : {"relu", "__default", "relu__", "relu___", "re-lu__default", "relu__de.fault", ""})
    EXPECT_FALSE(OpName::from_folder(bad)) << bad;
  EXPECT_EQ(kg::names::folder_spelling("add_.Tensor"), "add___Tensor");
  EXPECT_EQ(kg::names::folder_spelling("relu"), "relu") << "the spelling as written, without a default overload";
}

TEST(NamesOp, UnqualifiedParsingRefusesTheNamespace) {
  EXPECT_EQ(OpName::try_parse_unqualified("relu"), OpName::parse("relu.default"));
  EXPECT_EQ(OpName::try_parse_unqualified("add.Tensor"), OpName::parse("add.Tensor"));
  EXPECT_FALSE(OpName::try_parse_unqualified("aten::relu.default"));
  EXPECT_FALSE(OpName::try_parse_unqualified("aten.relu.default"));
}

TEST(NamesOp, MalformedNamesAreRefusedWithAMessage) {
  for (const char* bad : {"", ".", "add.", ".Tensor", "add.Tensor.out", "add Tensor", "aten::", "aten.", "add-x.Tensor",
                          "aten::aten::add.Tensor", "prims::add.Tensor"}) {
    EXPECT_FALSE(OpName::try_parse(bad)) << bad;
    const std::string why = refusal([&] { OpName::parse(bad); });
    EXPECT_NE(why.find("'" + std::string(bad) + "' is not an op overload name"), std::string::npos) << why;
    EXPECT_NE(why.find("NAME.OVERLOAD"), std::string::npos) << why;
    EXPECT_NE(why.find("aten::NAME"), std::string::npos) << why;
  }
  EXPECT_FALSE(OpName::from_dispatcher("prims::add", "Tensor"));
  EXPECT_FALSE(OpName::from_dispatcher("aten::add.Tensor", ""));
  EXPECT_FALSE(OpName::from_dispatcher("aten::", ""));
}

TEST(NamesOp, NamespacePrefixes) {
  EXPECT_EQ(kg::names::in_dispatcher_namespace("aten::relu"), "relu");
  EXPECT_FALSE(kg::names::in_dispatcher_namespace("aten.relu"));
  EXPECT_FALSE(kg::names::in_dispatcher_namespace("kgsub::relu__default"));
  EXPECT_EQ(kg::names::in_trace_namespace("aten.add.Tensor"), "add.Tensor");
  EXPECT_FALSE(kg::names::in_trace_namespace("aten::add.Tensor"));
  EXPECT_FALSE(kg::names::in_trace_namespace("prims.add.default"));
  EXPECT_EQ(kg::names::without_aten_prefix("aten::mm"), "mm");
  EXPECT_EQ(kg::names::without_aten_prefix("aten.mm.default"), "mm.default");
  EXPECT_EQ(kg::names::without_aten_prefix("aten::aten.mm"), "aten.mm") << "one prefix only";
  EXPECT_FALSE(kg::names::without_aten_prefix("mm.default"));
}

TEST(NamesDevice, RoundTrips) {
  for (Device d : {Device::Cpu, Device::Cuda}) EXPECT_EQ(kg::names::parse_device(kg::names::device_name(d)), d);
  EXPECT_STREQ(kg::names::device_name(Device::Cpu), "cpu");
  EXPECT_STREQ(kg::names::device_name(Device::Cuda), "cuda");
  for (const char* bad : {"auto", "gpu", "cuda:0", "CPU", ""}) {
    EXPECT_FALSE(kg::names::try_parse_device(bad)) << bad;
    const std::string why = refusal([&] { kg::names::parse_device(bad); });
    EXPECT_NE(why.find("unknown device '" + std::string(bad) + "'"), std::string::npos) << why;
    EXPECT_NE(why.find("cpu or cuda"), std::string::npos) << why;
  }
}

TEST(NamesDtype, EveryNameRoundTrips) {
  ASSERT_EQ(kg::names::all_dtypes().size(), 16u);
  for (Dtype d : kg::names::all_dtypes()) {
    const std::string s(kg::names::short_name(d));
    const std::string t(kg::names::torch_name(d));
    EXPECT_EQ(kg::names::try_parse_short_dtype(s), d) << s;
    EXPECT_EQ(kg::names::try_parse_torch_dtype(t), d) << t;
    EXPECT_EQ(kg::names::try_parse_torch_dtype("torch." + t), d) << t;
    EXPECT_EQ(kg::names::torch_spelling(d), "torch." + t);
    EXPECT_EQ(kg::names::parse_dtype(s), d) << s;
    EXPECT_EQ(kg::names::parse_dtype(kg::names::torch_spelling(d)), d) << t;
    const std::string alias(kg::names::torch_alias(d));
    if (!alias.empty()) {
      EXPECT_EQ(kg::names::try_parse_torch_dtype(alias), d) << alias;
      EXPECT_EQ(kg::names::try_parse_torch_dtype("torch." + alias), d) << alias;
    }
    EXPECT_FALSE(kg::names::try_parse_short_dtype(t)) << "a torch name is not a short name: " << t;
  }
}

TEST(NamesDtype, KnownNames) {
  EXPECT_EQ(kg::names::parse_dtype("f32"), Dtype::F32);
  EXPECT_EQ(kg::names::parse_dtype("float32"), Dtype::F32);
  EXPECT_EQ(kg::names::parse_dtype("torch.float"), Dtype::F32);
  EXPECT_EQ(kg::names::parse_dtype("half"), Dtype::F16);
  EXPECT_EQ(kg::names::parse_dtype("torch.chalf"), Dtype::C32);
  EXPECT_EQ(kg::names::parse_dtype("long"), Dtype::I64);
  EXPECT_EQ(kg::names::parse_dtype("b8"), Dtype::B8);
  EXPECT_EQ(kg::names::parse_dtype("bool"), Dtype::B8);
  std::vector<std::string> floating;
  for (Dtype d : kg::names::all_dtypes())
    if (kg::names::is_floating(d)) floating.emplace_back(kg::names::short_name(d));
  EXPECT_EQ(floating, (std::vector<std::string>{"f16", "bf16", "f32", "f64", "c32", "c64", "c128"}));
  EXPECT_TRUE(kg::names::is_trace_abbreviation(Dtype::B8));
  EXPECT_FALSE(kg::names::is_trace_abbreviation(Dtype::U16));
}

TEST(NamesDtype, UnknownNamesAreRefusedWithAMessage) {
  for (const char* bad : {"fp8", "f23", "torch.torch.float32", "torch.", "", "Float32", "torch.f32"}) {
    EXPECT_FALSE(kg::names::try_parse_short_dtype(bad) || kg::names::try_parse_torch_dtype(bad)) << bad;
    const std::string why = refusal([&] { kg::names::parse_dtype(bad); });
    EXPECT_NE(why.find("unknown dtype '" + std::string(bad) + "'"), std::string::npos) << why;
    EXPECT_NE(why.find("f16, bf16, f32"), std::string::npos) << why;
    EXPECT_NE(why.find("torch.float32"), std::string::npos) << why;
  }
}

}  // namespace
