#include "server/explanation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace plrank::server {

uint64_t ExplainCost(const EnsembleExplainer& explainer, uint64_t documents) {
  const uint64_t per_document = explainer.cost_per_document();
  if (documents > std::numeric_limits<uint64_t>::max() / per_document) {
    return std::numeric_limits<uint64_t>::max();
  }
  return documents * per_document;
}

absl::Status ExplainDocuments(const ServableVersion& version,
                              const v1::ExplainRequest& request,
                              const RequestLimits& limits,
                              InterruptCheck interrupted,
                              v1::ExplainResponse* response) {
  const size_t num_docs = static_cast<size_t>(request.documents_size());
  if (absl::Status count = CheckDocumentCount(num_docs, limits); !count.ok()) {
    return count;
  }
  if (!version.explainer().ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model ", version.model(), " version ", version.version(),
        " cannot be explained: ", version.explainer().status().message()));
  }
  const EnsembleExplainer& explainer = *version.explainer();
  const uint64_t cost = ExplainCost(explainer, num_docs);
  if (cost > limits.max_explain_cost) {
    const uint64_t fit =
        limits.max_explain_cost / explainer.cost_per_document();
    return absl::ResourceExhaustedError(absl::StrCat(
        "explaining ", num_docs, " documents with model ", version.model(),
        " version ", version.version(), " costs ", cost, " (", num_docs,
        " documents x ", explainer.cost_per_document(), ", the sum over its ",
        explainer.num_trees(),
        " trees of leaves x depth^2 plus the features read); this server "
        "accepts at most ",
        limits.max_explain_cost, " per Explain request, ",
        fit == 0 ? std::string("so not even one document of this model")
                 : absl::StrCat("i.e. ", fit, " documents of this model"),
        " (split the request)"));
  }
  // Validates every document and gives the scores Rank would return.
  absl::StatusOr<absl::Span<const double>> scored = DocumentScorer::Score(
      version.scorer(), request.documents(), "", interrupted);
  if (!scored.ok()) return scored.status();
  const std::vector<double> scores(scored->begin(), scored->end());

  const size_t width = static_cast<size_t>(explainer.row_width());
  std::vector<float> row(std::max<size_t>(width, 1));
  std::vector<double> contributions(std::max<size_t>(width, 1));
  std::vector<ShapTree::PathElement> scratch;
  std::vector<std::pair<double, uint32_t>> order;  // (|value|, feature)
  const size_t top_k = request.top_k() == 0 ? width : request.top_k();

  response->set_model_name(version.model());
  response->set_model_version(version.version());
  response->set_query_id(request.query_id());
  response->set_bias(explainer.bias());
  response->mutable_documents()->Reserve(static_cast<int>(num_docs));
  for (size_t i = 0; i < num_docs; ++i) {
    if (absl::Status status = interrupted(); !status.ok()) return status;
    const v1::Document& document = request.documents(static_cast<int>(i));
    FillRow(document, absl::MakeSpan(row.data(), width));
    explainer.Explain(absl::MakeConstSpan(row.data(), width),
                      absl::MakeSpan(contributions.data(), width), &scratch);
    order.clear();
    for (size_t f = 0; f < width; ++f) {
      if (contributions[f] != 0.0) {
        order.emplace_back(std::fabs(contributions[f]),
                           static_cast<uint32_t>(f));
      }
    }
    const size_t kept = std::min(top_k, order.size());
    auto larger = [](const std::pair<double, uint32_t>& a,
                     const std::pair<double, uint32_t>& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    std::partial_sort(order.begin(), order.begin() + kept, order.end(), larger);
    v1::DocumentExplanation* explained = response->add_documents();
    explained->set_id(document.id());
    explained->set_request_index(static_cast<uint32_t>(i));
    explained->set_score(scores[i]);
    explained->mutable_contributions()->Reserve(static_cast<int>(kept));
    for (size_t k = 0; k < kept; ++k) {
      v1::FeatureContribution* contribution = explained->add_contributions();
      contribution->set_feature(order[k].second);
      contribution->set_contribution(contributions[order[k].second]);
    }
  }
  return absl::OkStatus();
}

}  // namespace plrank::server
