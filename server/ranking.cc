#include "server/ranking.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"

namespace plrank::server {

absl::Status RankDocuments(const ServableVersion& version,
                           const v1::RankRequest& request,
                           const RequestLimits& limits,
                           InterruptCheck interrupted,
                           v1::RankResponse* response,
                           std::vector<double>* all_scores) {
  const size_t num_docs = static_cast<size_t>(request.documents_size());
  if (absl::Status count = CheckDocumentCount(num_docs, limits); !count.ok()) {
    return count;
  }
  if (absl::Status spec = CheckSamplingSpec(request, num_docs); !spec.ok()) {
    return spec;
  }
  absl::StatusOr<absl::Span<const double>> scores = DocumentScorer::Score(
      version.scorer(), request.documents(), "", interrupted);
  if (!scores.ok()) return scores.status();
  if (all_scores != nullptr) all_scores->assign(scores->begin(), scores->end());
  if (WantsSampling(request)) {
    response->set_model_name(version.model());
    response->set_model_version(version.version());
    response->set_query_id(request.query_id());
    response->set_request_id(request.request_id());
    return FillSampledRanking(request, *scores, response);
  }

  thread_local std::vector<uint32_t> order;
  order.resize(num_docs);
  std::iota(order.begin(), order.end(), 0u);
  const double* s = scores->data();
  // A strict total order (score desc, NaN last, then request index) makes
  // partial_sort deterministic without needing a stable sort.
  auto better = [s](uint32_t a, uint32_t b) {
    const bool a_nan = std::isnan(s[a]);
    const bool b_nan = std::isnan(s[b]);
    if (a_nan != b_nan) return b_nan;
    if (!a_nan && s[a] != s[b]) return s[a] > s[b];
    return a < b;
  };
  const uint32_t requested_k =
      request.has_sampling() && request.sampling().top_k() != 0
          ? request.sampling().top_k()
          : request.top_k();
  const size_t top_k = requested_k == 0
                           ? num_docs
                           : std::min<size_t>(requested_k, num_docs);
  std::partial_sort(order.begin(), order.begin() + top_k, order.end(), better);

  response->set_model_name(version.model());
  response->set_model_version(version.version());
  response->set_query_id(request.query_id());
  response->mutable_documents()->Reserve(static_cast<int>(top_k));
  for (size_t r = 0; r < top_k; ++r) {
    const uint32_t index = order[r];
    v1::ScoredDocument* scored = response->add_documents();
    scored->set_id(request.documents(static_cast<int>(index)).id());
    scored->set_score(s[index]);
    scored->set_rank(static_cast<uint32_t>(r + 1));
    scored->set_request_index(index);
  }
  if (!request.request_id().empty()) {
    response->set_request_id(request.request_id());
  }
  if (request.has_sampling()) MarkDeterministicRanking(request, response);
  return absl::OkStatus();
}

}  // namespace plrank::server
