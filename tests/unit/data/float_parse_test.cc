// The reader's fast decimal path must agree bit for bit with from_chars.

#include <bit>
#include <charconv>
#include <cstdio>
#include <string>

#include "core/data/letor_tokens.h"
#include "core/data/random.h"
#include "gtest/gtest.h"

namespace plrank::letor_internal {
namespace {

// Returns whether the fast path took the text.
bool ExpectSameAsFromChars(const std::string& text) {
  float fast = 0;
  const char* end = ParseFloatFast(text.data(), text.data() + text.size(), &fast);
  float reference = 0;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), reference);
  if (end == nullptr) return false;  // deferred to from_chars by design
  EXPECT_EQ(ec, std::errc()) << text;
  EXPECT_EQ(end, ptr) << text;
  EXPECT_EQ(std::bit_cast<uint32_t>(fast), std::bit_cast<uint32_t>(reference))
      << text << " fast=" << fast << " from_chars=" << reference;
  return true;
}

TEST(FloatParseTest, FixedCases) {
  for (const char* text :
       {"0", "-0", "0.0", "1", "-1", "0.1", "0.007477", "1.000000", "123456789",
        "16777217", "3e-05", "1E5", "-2.5e+3", ".5", "5.", "0.30000001",
        "340282346638528859811704183484516925440", "1e22", "1e-22",
        "9007199254740993", "0.1e1"}) {
    ExpectSameAsFromChars(text);
  }
}

TEST(FloatParseTest, RefusesWhatItCannotParseExactly) {
  float value;
  for (std::string text : {"nan", "inf", "+1", "", ".", "-", "1e", "1e400",
                           "12345678901234567"}) {
    EXPECT_EQ(ParseFloatFast(text.data(), text.data() + text.size(), &value),
              nullptr)
        << text;
  }
}

TEST(FloatParseTest, RandomDecimalsAgree) {
  Xoshiro256 rng(42, 0);
  char buffer[64];
  int fast_path_taken = 0;
  constexpr int kCases = 200000;
  for (int i = 0; i < kCases; ++i) {
    // A random decimal: sign, up to 12 digits, a point, maybe an exponent.
    const int digits = 1 + static_cast<int>(rng.Below(12));
    const int decimals = static_cast<int>(rng.Below(digits + 1));
    char digit_text[16];
    for (int d = 0; d < digits; ++d) {
      digit_text[d] = static_cast<char>('0' + rng.Below(10));
    }
    char* out = buffer;
    if (rng.Below(2) == 0) *out++ = '-';
    for (int d = 0; d < digits; ++d) {
      if (d == digits - decimals && decimals > 0) *out++ = '.';
      *out++ = digit_text[d];
    }
    if (rng.Below(4) == 0) {
      out += std::snprintf(out, 8, "e%d", static_cast<int>(rng.Below(40)) - 20);
    }
    const std::string text(buffer, out);
    fast_path_taken += ExpectSameAsFromChars(text);
    // Shortest round-trip text of a random float, as the writer emits.
    const float random_float = std::bit_cast<float>(
        static_cast<uint32_t>(rng.Next()) & 0xbfffffffu);  // finite
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), random_float);
    fast_path_taken += ExpectSameAsFromChars(std::string(buffer, end));
  }
  // Most cases must exercise the fast path, or this test proves little.
  EXPECT_GT(fast_path_taken, kCases);
}

}  // namespace
}  // namespace plrank::letor_internal
