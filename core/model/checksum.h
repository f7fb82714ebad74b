#ifndef PLRANK_CORE_MODEL_CHECKSUM_H_
#define PLRANK_CORE_MODEL_CHECKSUM_H_

#include <cstdint>
#include <string_view>

namespace plrank {

// Name written into ModelFile.checksum_algorithm.
inline constexpr std::string_view kChecksumAlgorithm = "fnv1a64";

// FNV-1a 64-bit hash of `bytes` (offset basis 0xcbf29ce484222325, prime
// 0x100000001b3). Not cryptographic: it detects truncation and corruption,
// not tampering.
uint64_t Fnv1a64(std::string_view bytes);

// The FNV-1a offset basis: Fnv1a64(bytes) == Fnv1a64(bytes, kFnv1a64Basis).
inline constexpr uint64_t kFnv1a64Basis = 0xcbf29ce484222325ULL;

// Continues a hash over more bytes, so that hashing a sequence piece by piece
// equals hashing its concatenation: Fnv1a64(b, Fnv1a64(a)) == Fnv1a64(a + b).
uint64_t Fnv1a64(std::string_view bytes, uint64_t hash);

}  // namespace plrank

#endif  // PLRANK_CORE_MODEL_CHECKSUM_H_
