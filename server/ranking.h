#ifndef PLRANK_SERVER_RANKING_H_
#define PLRANK_SERVER_RANKING_H_

#include <vector>

#include "absl/status/status.h"
#include "plrank/v1/ranker.pb.h"
#include "server/document_scoring.h"
#include "server/lifecycle/servable_version.h"
#include "server/request_limits.h"
#include "server/sampled_ranking.h"

namespace plrank::server {

// Validates `request` (non-empty, within limits, documents matching the
// model), scores its documents with `version` and fills `response` with the
// best top_k (0 = all) sorted by descending score; equal scores keep the
// request order, so the result is deterministic. NaN scores (not produced by
// a valid model) would rank last.
//
// With a sampling spec (server/sampled_ranking.h) at a temperature > 0 the
// ranking is drawn from the model's Plackett-Luce policy instead; at
// temperature 0 it is the deterministic one with pick probabilities 1. The
// response echoes request_id. `all_scores` (optional) receives the score of
// every request document, in request order (for the impression log).
absl::Status RankDocuments(const ServableVersion& version,
                           const v1::RankRequest& request,
                           const RequestLimits& limits,
                           InterruptCheck interrupted,
                           v1::RankResponse* response,
                           std::vector<double>* all_scores = nullptr);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_RANKING_H_
