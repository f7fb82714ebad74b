#ifndef PLRANK_BENCH_SYNTHETIC_LETOR_TEXT_H_
#define PLRANK_BENCH_SYNTHETIC_LETOR_TEXT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace plrank::bench {

// Writes an MSLR-WEB30K-shaped LETOR text file for parsing benchmarks:
// "<label> qid:<q> 1:<v> ... <F>:<v>" with labels 0..4, about 120 documents
// per query, and feature values mixing small integers, large counts and
// decimals with 6 significant digits (as MSLR's do). Stops after the query
// that crosses `target_bytes`. Returns the number of bytes written.
absl::StatusOr<int64_t> WriteSyntheticLetorText(const std::string& path,
                                                int64_t target_bytes,
                                                int32_t num_features,
                                                uint64_t seed);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_SYNTHETIC_LETOR_TEXT_H_
