#include "server/sampled_ranking.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "core/policy/plackett_luce_sampler.h"

namespace plrank::server {
namespace {

// Documents a sampled request returns: the spec's top_k, else the
// request's, else all.
size_t SampledCount(const v1::RankRequest& request, size_t num_docs) {
  const uint32_t top_k = request.sampling().top_k() != 0
                             ? request.sampling().top_k()
                             : request.top_k();
  return top_k == 0 ? num_docs : std::min<size_t>(top_k, num_docs);
}

uint64_t RandomSeed() {
  thread_local absl::BitGen bits;
  uint64_t seed = 0;
  while (seed == 0) seed = absl::Uniform<uint64_t>(bits);
  return seed;
}

}  // namespace

bool WantsSampling(const v1::RankRequest& request) {
  return request.has_sampling() && request.sampling().temperature() != 0;
}

absl::Status CheckSamplingSpec(const v1::RankRequest& request,
                               size_t num_docs) {
  if (request.request_id().size() > kMaxRequestIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("request_id has ", request.request_id().size(),
                     " bytes; at most ", kMaxRequestIdBytes, " are accepted"));
  }
  if (!request.has_sampling()) return absl::OkStatus();
  const v1::SamplingSpec& spec = request.sampling();
  if (!(spec.temperature() >= 0) || !std::isfinite(spec.temperature())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sampling.temperature must be 0 (deterministic) or > 0 and finite, "
        "got ",
        spec.temperature()));
  }
  if (spec.marginal_samples() == 0) return absl::OkStatus();
  const size_t positions = SampledCount(request, num_docs);
  if (spec.marginal_samples() > kMaxMarginalSamples) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "sampling.marginal_samples is ", spec.marginal_samples(),
        "; this server estimates from at most ", kMaxMarginalSamples));
  }
  if (positions > kMaxMarginalPositions) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "position probabilities of ", positions,
        " positions asked; at most ", kMaxMarginalPositions,
        " (set sampling.top_k)"));
  }
  if (uint64_t{spec.marginal_samples()} * num_docs > kMaxMarginalWork) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "sampling.marginal_samples ", spec.marginal_samples(), " x ",
        num_docs, " documents is over this server's bound of ",
        kMaxMarginalWork));
  }
  return absl::OkStatus();
}

absl::Status FillSampledRanking(const v1::RankRequest& request,
                                absl::Span<const double> scores,
                                v1::RankResponse* response) {
  const v1::SamplingSpec& spec = request.sampling();
  const size_t count = SampledCount(request, scores.size());
  absl::StatusOr<PlackettLucePolicy> policy =
      PlackettLucePolicy::Create(scores, {spec.temperature(), count});
  if (!policy.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot sample: ", policy.status().message()));
  }
  const uint64_t seed = spec.seed() != 0 ? spec.seed() : RandomSeed();
  const SampledRanking ranking = policy->Sample(seed);
  std::vector<double> marginals;
  if (spec.marginal_samples() > 0) {
    marginals = policy->EstimateMarginals(spec.marginal_samples(), seed);
  }
  response->set_sampled(true);
  response->set_sampling_seed(seed);
  response->set_log_probability(ranking.log_probability);
  response->mutable_documents()->Reserve(static_cast<int>(count));
  for (size_t r = 0; r < count; ++r) {
    const uint32_t index = ranking.order[r];
    v1::ScoredDocument* scored = response->add_documents();
    scored->set_id(request.documents(static_cast<int>(index)).id());
    scored->set_score(scores[index]);
    scored->set_rank(static_cast<uint32_t>(r + 1));
    scored->set_request_index(index);
    scored->set_pick_probability(ranking.pick_probabilities[r]);
    if (!marginals.empty()) {
      for (size_t j = 0; j < count; ++j) {
        scored->add_position_probabilities(
            marginals[j * scores.size() + index]);
      }
    }
  }
  return absl::OkStatus();
}

void MarkDeterministicRanking(const v1::RankRequest& request,
                              v1::RankResponse* response) {
  response->set_log_probability(0.0);
  const bool marginals = request.sampling().marginal_samples() > 0;
  const int count = response->documents_size();
  for (v1::ScoredDocument& scored : *response->mutable_documents()) {
    scored.set_pick_probability(1.0);
    if (!marginals) continue;
    for (int j = 0; j < count; ++j) {
      scored.add_position_probabilities(
          static_cast<uint32_t>(j + 1) == scored.rank() ? 1.0 : 0.0);
    }
  }
}

}  // namespace plrank::server
