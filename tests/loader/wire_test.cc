// Wire*: the shared-memory value encoding; decode() treats bytes as hostile.
#include "kernelgate/wire.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kg::wire;

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
