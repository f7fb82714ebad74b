#ifndef PLRANK_SERVER_EXPLANATION_H_
#define PLRANK_SERVER_EXPLANATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "plrank/v1/ranker.pb.h"
#include "server/document_scoring.h"
#include "server/lifecycle/servable_version.h"
#include "server/request_limits.h"

namespace plrank::server {

// What one Explain request costs with `version`: documents x its TreeSHAP
// cost per document (EnsembleExplainer::cost_per_document), saturating.
uint64_t ExplainCost(const EnsembleExplainer& explainer, uint64_t documents);

// Validates `request` like a Rank request (non-empty, at most
// max_documents_per_request documents matching the model), refuses a
// version that cannot be explained (FAILED_PRECONDITION: several outputs)
// and a request whose ExplainCost exceeds limits.max_explain_cost
// (RESOURCE_EXHAUSTED, saying how many documents would fit), then fills
// `response` with the bias and, per document in request order, its served
// score and its non-zero feature contributions sorted by decreasing
// |contribution| (then feature), cut to top_k when it is set. `interrupted`
// is checked before every document.
absl::Status ExplainDocuments(const ServableVersion& version,
                              const v1::ExplainRequest& request,
                              const RequestLimits& limits,
                              InterruptCheck interrupted,
                              v1::ExplainResponse* response);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_EXPLANATION_H_
