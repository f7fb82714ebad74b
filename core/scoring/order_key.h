#ifndef PLRANK_CORE_SCORING_ORDER_KEY_H_
#define PLRANK_CORE_SCORING_ORDER_KEY_H_

#include <bit>
#include <cstdint>

namespace plrank {

// Maps a non-NaN float to a uint32 with the same order: x > y exactly when
// OrderKey(x) > OrderKey(y). Scorers compare these integer keys instead of
// floats: shorter dependency chains, and an unsigned compare sets the carry
// flag a tree walk can add to a child index. -0 is folded into +0 first, as
// the two compare equal as floats.
inline uint32_t OrderKey(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value + 0.0f);
  const uint32_t negative =
      static_cast<uint32_t>(static_cast<int32_t>(bits) >> 31);
  return bits ^ (negative | 0x80000000u);
}

// The same order as a signed int32, for SIMD signed compares.
inline int32_t SignedOrderKey(float value) {
  return static_cast<int32_t>(OrderKey(value) ^ 0x80000000u);
}

}  // namespace plrank

#endif  // PLRANK_CORE_SCORING_ORDER_KEY_H_
