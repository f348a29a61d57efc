// Wire*: the shared-memory value encoding; decode() treats bytes as hostile.
#include "kernelgate/wire.h"

#include "loader_test_util.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kg::wire;
using kg::loader::test::gpu_available;

namespace {

std::vector<uint8_t> enc(const std::vector<c10::IValue>& v) {
  std::vector<uint8_t> buf(encoded_size(v));
  buf.resize(encode(v, buf.data(), buf.size()));
  return buf;
}

}  // namespace

TEST(WireRoundTrip, TensorsKeepSizesStridesAndValues) {
  at::Tensor a = at::arange(12, at::kFloat).reshape({3, 4});
  auto out = decode(enc({a.t(), a.slice(1, 1, 3), c10::IValue(int64_t{5}), c10::IValue(0.25), c10::IValue()}).data(),
                    enc({a.t(), a.slice(1, 1, 3), c10::IValue(int64_t{5}), c10::IValue(0.25), c10::IValue()}).size());
  ASSERT_EQ(out.size(), 5u);
  EXPECT_TRUE(out[0].toTensor().equal(a.t()));
  EXPECT_EQ(out[0].toTensor().strides(), a.t().strides());
  EXPECT_TRUE(out[1].toTensor().equal(a.slice(1, 1, 3)));
  EXPECT_EQ(out[2].toInt(), 5);
  EXPECT_TRUE(out[4].isNone());
}

TEST(WireHostile, EveryTruncationIsAnErrorNotACrash) {
  at::Tensor a = at::arange(64, at::kDouble).reshape({8, 8});
  auto buf = enc({a, c10::IValue(std::vector<int64_t>{1, 2}), c10::ivalue::Tuple::create({c10::IValue(a)})});
  for (size_t n = 0; n < buf.size(); n += 3) {
    std::vector<uint8_t> cut(buf.begin(), buf.begin() + static_cast<long>(n));
    EXPECT_THROW(decode(cut.data(), cut.size()), WireError) << n;
  }
}

TEST(WireHostile, FlippedBytesNeverEscapeAsOtherErrors) {
  at::Tensor a = at::arange(16, at::kFloat);
  auto buf = enc({a, c10::IValue(c10::Device(c10::DeviceType::CPU)), c10::IValue(true)});
  for (size_t i = 0; i < buf.size(); ++i)
    for (uint8_t v : {uint8_t{0}, uint8_t{1}, uint8_t{0x7f}, uint8_t{0xff}}) {
      auto b = buf;
      b[i] = v;
      try {
        decode(b.data(), b.size());
      } catch (const WireError&) {
      } catch (const std::exception& e) { ADD_FAILURE() << "byte " << i << " = " << int(v) << ": " << e.what(); }
    }
}

TEST(WireHostile, FuzzCorpusAndRegressionsDecodeOrFailCleanly) {
  // tests/fuzz/corpus_wire holds the seeds and every input the fuzzer ever found.
  namespace fs = std::filesystem;
  size_t n = 0;
  for (const auto& f : fs::directory_iterator(std::string(KG_TEST_SOURCE_DIR) + "/tests/fuzz/corpus_wire")) {
    std::ifstream in(f.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    try {
      decode(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    } catch (const WireError&) {}
    ++n;
  }
  EXPECT_GE(n, 9u);
}

TEST(WireHostile, LiesAboutExtentsAreCaught) {
  at::Tensor a = at::arange(4, at::kFloat);
  auto buf = enc({a});
  // The tensor's storage length field sits 8 bytes before its data; find it by its value (16).
  bool patched = false;
  for (size_t i = 0; i + 8 <= buf.size() && !patched; ++i) {
    uint64_t v;
    std::memcpy(&v, &buf[i], 8);
    if (v == 16 && i > 40) {
      uint64_t lie = 8;  // smaller than the extent of 4 floats
      std::memcpy(&buf[i], &lie, 8);
      patched = true;
    }
  }
  ASSERT_TRUE(patched);
  EXPECT_THROW(decode(buf.data(), buf.size()), WireError);
}

// decode_views: kg-runner's inputs on their way to the device, read in place.
TEST(WireViews, ViewsHoldTheSameValuesAndPointIntoTheRegion) {
  at::Tensor a = at::arange(24, at::kFloat).reshape({2, 3, 4});
  at::Tensor flags = at::arange(6, at::kLong).remainder(2).to(at::kBool);
  std::vector<c10::IValue> values{a.permute({2, 0, 1}), a.slice(2, 1, 3), flags, c10::IValue(int64_t{3}),
                                  c10::IValue(std::vector<at::Tensor>{a[1], at::Tensor()})};
  auto buf = enc(values);
  auto copied = decode(buf.data(), buf.size());
  auto viewed = decode_views(buf.data(), buf.size());
  ASSERT_EQ(viewed.size(), copied.size());
  auto inside = [&](const at::Tensor& t) {
    const auto* p = static_cast<const uint8_t*>(t.data_ptr());
    return p >= buf.data() && p + t.storage().nbytes() <= buf.data() + buf.size();
  };
  for (size_t i : {0u, 1u, 2u}) {
    const at::Tensor& v = viewed[i].toTensor();
    const at::Tensor& c = copied[i].toTensor();
    EXPECT_TRUE(v.equal(c)) << i;
    EXPECT_EQ(v.strides(), c.strides()) << i;
    EXPECT_EQ(v.storage_offset(), c.storage_offset()) << i;
    EXPECT_TRUE(inside(v)) << i;
    EXPECT_FALSE(inside(c)) << i;
  }
  EXPECT_EQ(viewed[3].toInt(), 3);
  auto list = viewed[4].toTensorList();
  EXPECT_TRUE(list.get(0).equal(a[1]));
  EXPECT_TRUE(inside(list.get(0)));
  EXPECT_FALSE(list.get(1).defined());
}

TEST(WireViews, HostileBytesFailAsTheyDoForACopy) {
  at::Tensor a = at::arange(16, at::kFloat);
  at::Tensor b = at::ones({5}, at::kBool);
  auto buf = enc({a, b, c10::IValue(true)});
  auto outcome = [](auto decoder, const std::vector<uint8_t>& bytes) -> std::string {
    try {
      decoder(bytes.data(), bytes.size());
      return "ok";
    } catch (const WireError& e) { return e.what(); }
  };
  size_t failures = 0;
  for (size_t i = 0; i < buf.size(); ++i)
    for (uint8_t v : {uint8_t{0}, uint8_t{2}, uint8_t{0xff}}) {
      auto bytes = buf;
      bytes[i] = v;
      const std::string want = outcome(decode, bytes);
      EXPECT_EQ(outcome(decode_views, bytes), want) << "byte " << i << " = " << int(v);
      failures += want != "ok";
    }
  EXPECT_GT(failures, 0u);
  for (size_t n = 0; n < buf.size(); n += 5) {
    std::vector<uint8_t> cut(buf.begin(), buf.begin() + static_cast<long>(n));
    EXPECT_THROW(decode_views(cut.data(), cut.size()), WireError) << n;
  }
}

// A device tensor is encoded byte for byte as its CPU copy would be, and sized so: a dense one is
// copied straight into the region (its strides kept), any other through a contiguous CPU copy
// (an expanded one is larger than its span: sized by its span it did not fit).
TEST(WireGpu, DeviceTensorsEncodeAsTheirCpuCopiesDo) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU here (or libtorch without CUDA)";
  ASSERT_TRUE(at::hasCUDA());
  at::Tensor a = at::randn({4, 6, 5}, at::TensorOptions().device(at::kCUDA, 0));
  std::vector<at::Tensor> cases{
      a,
      a.permute({2, 0, 1}),  // dense, not contiguous
      a.transpose(0, 1),     // dense, not contiguous
      at::randn({2, 3, 4, 5}, a.options()).contiguous(at::MemoryFormat::ChannelsLast),
      a.slice(2, 1, 4),                       // gaps: not dense
      a.select(1, 2),                         // storage offset, gaps
      a[3],                                   // storage offset, dense
      a.slice(0, 0, 1).expand({3, 6, 5}),     // overlapping
      a.as_strided({4, 1, 5}, {5, 1000, 1}),  // dense, a size-1 dim with an odd stride
      at::empty({0, 3}, a.options()),
      a.gt(0),  // bool
      a.to(at::kHalf).transpose(0, 2),
      at::arange(10, a.options().dtype(at::kLong)),
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const at::Tensor& t = cases[i];
    EXPECT_EQ(encoded_size({t}), encoded_size({t.cpu()})) << "case " << i;
    auto on_device = enc({t, c10::IValue(int64_t{7})});
    auto on_cpu = enc({t.cpu(), c10::IValue(int64_t{7})});
    EXPECT_EQ(on_device, on_cpu) << "case " << i << ": sizes " << t.sizes() << " strides " << t.strides();
    auto back = decode(on_device.data(), on_device.size());
    EXPECT_TRUE(back[0].toTensor().equal(t.cpu())) << "case " << i;
  }
}

// A lazily conjugated or negated view (conj bit, neg bit) ships its values, not its raw storage.
TEST(WireRoundTrip, ConjugateAndNegativeViewsShipTheirValues) {
  at::Tensor z = at::complex(at::arange(6, at::kFloat), at::arange(6, at::kFloat) + 10).reshape({2, 3});
  ASSERT_TRUE(z.conj().is_conj());
  // Dense ones keep their strides; the others come as contiguous copies, sized as such (an
  // expanded view has more elements than its span: `enc` sizes its buffer by encoded_size).
  for (const at::Tensor& view :
       {z.conj(), z.conj().t(), at::_neg_view(z), z.conj().slice(1, 1, 3), z.slice(0, 0, 1).conj().expand({4, 3})}) {
    auto buf = enc({view});
    auto back = decode(buf.data(), buf.size());
    EXPECT_TRUE(back[0].toTensor().equal(view.resolve_conj().resolve_neg())) << view;
    EXPECT_FALSE(back[0].toTensor().is_conj());
    if (view.is_non_overlapping_and_dense()) EXPECT_EQ(back[0].toTensor().strides(), view.strides());
    else EXPECT_TRUE(back[0].toTensor().is_contiguous());
  }
}
