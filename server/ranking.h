#ifndef PLRANK_SERVER_RANKING_H_
#define PLRANK_SERVER_RANKING_H_

#include "absl/status/status.h"
#include "plrank/v1/ranker.pb.h"
#include "server/document_scoring.h"
#include "server/lifecycle/servable_version.h"
#include "server/request_limits.h"

namespace plrank::server {

// Validates `request` (non-empty, within limits, documents matching the
// model), scores its documents with `version` and fills `response` with the
// best top_k (0 = all) sorted by descending score; equal scores keep the
// request order, so the result is deterministic. NaN scores (not produced by
// a valid model) would rank last.
absl::Status RankDocuments(const ServableVersion& version,
                           const v1::RankRequest& request,
                           const RequestLimits& limits,
                           InterruptCheck interrupted,
                           v1::RankResponse* response);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_RANKING_H_
