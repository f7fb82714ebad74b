#ifndef PLRANK_CORE_DATA_LETOR_TOKENS_H_
#define PLRANK_CORE_DATA_LETOR_TOKENS_H_

// Token-level parsing of LETOR text, over raw char ranges. Internal to the
// reader; kept apart so the line loop stays readable. Every function here
// is allocation-free on success: errors are rare, so only they build text.

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "core/data/dataset.h"

namespace plrank::letor_internal {

using ::plrank::kMaxLabel;  // core/data/dataset.h
// A dense column per index is allocated, so an absurd index is refused
// before it can exhaust memory.
inline constexpr int64_t kMaxFeatureIndex = int64_t{1} << 24;

inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

inline const char* SkipSpaces(const char* p, const char* end) {
  while (p < end && IsSpace(*p)) ++p;
  return p;
}

inline const char* TokenEnd(const char* p, const char* end) {
  while (p < end && !IsSpace(*p)) ++p;
  return p;
}

enum class LabelResult { kOk, kNotInteger, kOutOfRange, kNotNumber };

// Accepts "2", "2.0", "2.", "2e0"; the value must be an integer in
// [0, kMaxLabel].
inline LabelResult ParseLabel(const char* begin, const char* end,
                              int32_t* label) {
  int64_t integer = 0;
  auto [ptr, ec] = std::from_chars(begin, end, integer);
  if (ec == std::errc() && ptr == end) {
    if (integer < 0 || integer > kMaxLabel) return LabelResult::kOutOfRange;
    *label = static_cast<int32_t>(integer);
    return LabelResult::kOk;
  }
  double real = 0;
  const char* start = (begin < end && *begin == '+') ? begin + 1 : begin;
  auto [rptr, rec] = std::from_chars(start, end, real);
  if (rec != std::errc() || rptr != end || !std::isfinite(real)) {
    return LabelResult::kNotNumber;
  }
  if (real != std::floor(real)) return LabelResult::kNotInteger;
  if (real < 0 || real > kMaxLabel) return LabelResult::kOutOfRange;
  *label = static_cast<int32_t>(real);
  return LabelResult::kOk;
}

enum class IndexResult { kOk, kNotNumber, kNotPositive, kTooLarge };

// Parses the 1-based index of "<index>:<value>"; `end` is the colon.
inline IndexResult ParseFeatureIndex(const char* begin, const char* end,
                                     int64_t* index) {
  if (begin == end) return IndexResult::kNotNumber;
  if (*begin == '-') {
    int64_t ignored;
    auto [ptr, ec] = std::from_chars(begin, end, ignored);
    return (ec == std::errc() && ptr == end) ? IndexResult::kNotPositive
                                             : IndexResult::kNotNumber;
  }
  int64_t value = 0;
  for (const char* p = begin; p < end; ++p) {
    const unsigned digit = static_cast<unsigned char>(*p) - '0';
    if (digit > 9) return IndexResult::kNotNumber;
    value = value * 10 + digit;
    if (value > kMaxFeatureIndex) {
      // Keep scanning so "99999999999x" still reads as not a number.
      for (const char* q = p + 1; q < end; ++q) {
        if (static_cast<unsigned>(static_cast<unsigned char>(*q) - '0') > 9) {
          return IndexResult::kNotNumber;
        }
      }
      return IndexResult::kTooLarge;
    }
  }
  if (value == 0) return IndexResult::kNotPositive;
  *index = value;
  return IndexResult::kOk;
}

// Fast path for plain decimals ("-12.5", "0.007477", "3e-05"): returns the
// end of the number, or nullptr when the text needs std::from_chars (too many
// digits, large exponents, nan/inf, '+', or a rare rounding tie). The result
// is bit-identical to from_chars: the decimal is first rounded exactly to
// double (Clinger's fast path: mantissa < 2^53 and |exponent| <= 22 are
// both exact in double, so one multiply or divide rounds correctly), then to
// float; rounding twice can only differ when the double lands exactly on a
// midpoint between two floats, which is detected and sent to from_chars.
inline const char* ParseFloatFast(const char* p, const char* end,
                                  float* value) {
  static constexpr double kPowersOfTen[] = {
      1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  uint64_t mantissa = 0;
  int significant_digits = 0;
  int any_digits = 0;
  int exponent = 0;
  while (p < end && static_cast<unsigned char>(*p - '0') <= 9) {
    mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
    significant_digits += mantissa != 0;
    ++any_digits;
    ++p;
  }
  if (p < end && *p == '.') {
    ++p;
    while (p < end && static_cast<unsigned char>(*p - '0') <= 9) {
      mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
      significant_digits += mantissa != 0;
      ++any_digits;
      --exponent;
      ++p;
    }
  }
  if (any_digits == 0 || significant_digits > 15) return nullptr;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool negative_exponent = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+')) ++p;
    int written = 0;
    int digits = 0;
    while (p < end && static_cast<unsigned char>(*p - '0') <= 9 && digits < 6) {
      written = written * 10 + (*p - '0');
      ++digits;
      ++p;
    }
    if (digits == 0 || digits == 6) return nullptr;
    exponent += negative_exponent ? -written : written;
  }
  double result = static_cast<double>(mantissa);
  if (mantissa != 0) {
    if (exponent < -22 || exponent > 22) return nullptr;
    if (exponent < 0) {
      result /= kPowersOfTen[-exponent];
    } else {
      result *= kPowersOfTen[exponent];
    }
    // Low 29 bits of the double's significand are those float drops; a
    // value of exactly 1 << 28 is a float rounding tie.
    constexpr uint64_t kDropped = (uint64_t{1} << 29) - 1;
    if ((std::bit_cast<uint64_t>(result) & kDropped) == (uint64_t{1} << 28)) {
      return nullptr;
    }
  }
  *value = static_cast<float>(negative ? -result : result);
  return p;
}

enum class ValueResult { kOk, kMissing, kInfinite, kOverflow, kNotNumber };

inline bool EqualsIgnoreCase(const char* begin, const char* end,
                             std::string_view lower) {
  if (static_cast<size_t>(end - begin) != lower.size()) return false;
  for (size_t i = 0; i < lower.size(); ++i) {
    char c = begin[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// Parses a feature value. NaN spellings (any case, as accepted by
// from_chars) and "NULL" mean missing; infinities are refused because
// they break histogram binning and sums; a value beyond float range is
// refused, one below it rounds to zero or a denormal.
inline ValueResult ParseValue(const char* begin, const char* end,
                              float* value) {
  const char* start = (begin < end && *begin == '+') ? begin + 1 : begin;
  if (start == end) return ValueResult::kNotNumber;
  auto [ptr, ec] = std::from_chars(start, end, *value);
  if (ec == std::errc() && ptr == end) {
    if (std::isnan(*value)) return ValueResult::kMissing;
    if (std::isinf(*value)) return ValueResult::kInfinite;
    return ValueResult::kOk;
  }
  if (ec == std::errc::result_out_of_range) {
    double wide = 0;
    auto [wptr, wec] = std::from_chars(start, end, wide);
    if (wptr == end && wec == std::errc() &&
        std::fabs(wide) < std::numeric_limits<float>::max()) {
      *value = static_cast<float>(wide);
      return ValueResult::kOk;
    }
    return ValueResult::kOverflow;
  }
  if (EqualsIgnoreCase(begin, end, "null")) return ValueResult::kMissing;
  return ValueResult::kNotNumber;
}

}  // namespace plrank::letor_internal

#endif  // PLRANK_CORE_DATA_LETOR_TOKENS_H_
