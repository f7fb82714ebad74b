#ifndef PLRANK_SERVER_SAMPLED_RANKING_H_
#define PLRANK_SERVER_SAMPLED_RANKING_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "plrank/v1/ranker.pb.h"

namespace plrank::server {

// The documented bounds of RankRequest.sampling.marginal_samples.
inline constexpr uint32_t kMaxMarginalSamples = 10000;
inline constexpr uint32_t kMaxMarginalPositions = 100;
inline constexpr uint64_t kMaxMarginalWork = 10000000;  // samples x docs
// Longest RankRequest.request_id.
inline constexpr size_t kMaxRequestIdBytes = 128;

// True when `request` asks for a drawn ranking (a sampling spec with a
// temperature other than 0).
bool WantsSampling(const v1::RankRequest& request);

// Checks the request's request_id and sampling spec against `num_docs`
// documents: INVALID_ARGUMENT naming the field for a temperature that is
// negative or not finite or a request_id over kMaxRequestIdBytes;
// RESOURCE_EXHAUSTED for marginal estimates over the bounds above.
absl::Status CheckSamplingSpec(const v1::RankRequest& request,
                               size_t num_docs);

// Fills `response->documents` (and log_probability, sampling_seed, sampled)
// with a ranking of `scores` drawn from the Plackett-Luce policy of
// request.sampling() (WantsSampling(request) must hold, and the spec must
// have passed CheckSamplingSpec): the first top_k documents, each with its
// pick probability and, when marginal_samples is set, its estimated
// position probabilities. A seed of 0 is replaced by a random one.
absl::Status FillSampledRanking(const v1::RankRequest& request,
                                absl::Span<const double> scores,
                                v1::RankResponse* response);

// The deterministic ranking already in `response` as a sampled request at
// temperature 0 reports it: pick probabilities 1, log-probability 0, and
// position probabilities 1 at each document's own rank, 0 elsewhere.
void MarkDeterministicRanking(const v1::RankRequest& request,
                              v1::RankResponse* response);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_SAMPLED_RANKING_H_
