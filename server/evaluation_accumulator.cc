#include "server/evaluation_accumulator.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/metrics/evaluation.h"
#include "server/lifecycle/echoed_text.h"

namespace plrank::server {

absl::StatusOr<EvaluationAccumulator> EvaluationAccumulator::Create(
    const v1::EvaluateRequest& first, const RequestLimits& limits) {
  EvaluationAccumulator accumulator;
  accumulator.limits_ = limits;
  if (static_cast<uint32_t>(first.ndcg_at_size()) > limits.max_ndcg_cutoffs) {
    return absl::ResourceExhaustedError(absl::StrCat(
        first.ndcg_at_size(), " ndcg_at cut-offs; this server accepts at most ",
        limits.max_ndcg_cutoffs, " per evaluation"));
  }
  std::vector<uint32_t> cutoffs(first.ndcg_at().begin(),
                                first.ndcg_at().end());
  if (cutoffs.empty()) cutoffs = {1, 3, 5, 10};
  for (uint32_t k : cutoffs) {
    if (k == 0 || k > 1000000) {
      return absl::InvalidArgumentError(
          absl::StrCat("ndcg_at ", k, " is not in [1, 1000000]"));
    }
    MetricSpec spec;
    spec.kind = MetricSpec::Kind::kNdcg;
    spec.k = static_cast<int32_t>(k);
    accumulator.specs_.push_back(spec);
  }
  MetricSpec err;
  err.kind = MetricSpec::Kind::kErr;
  MetricSpec map;
  map.kind = MetricSpec::Kind::kMap;
  accumulator.specs_.push_back(err);
  accumulator.specs_.push_back(map);
  switch (first.empty_query_ndcg()) {
    case v1::EMPTY_QUERY_NDCG_UNSPECIFIED:
      accumulator.options_.empty_query = first.skip_empty_queries()
                                             ? EmptyQueryNdcg::kSkip
                                             : EmptyQueryNdcg::kOne;
      break;
    case v1::EMPTY_QUERY_NDCG_ONE:
      accumulator.options_.empty_query = EmptyQueryNdcg::kOne;
      break;
    case v1::EMPTY_QUERY_NDCG_ZERO:
      accumulator.options_.empty_query = EmptyQueryNdcg::kZero;
      break;
    case v1::EMPTY_QUERY_NDCG_SKIP:
      accumulator.options_.empty_query = EmptyQueryNdcg::kSkip;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("empty_query_ndcg ", first.empty_query_ndcg(),
                       " is not one of ONE (1), ZERO (2), SKIP (3)"));
  }
  if (first.skip_empty_queries() &&
      accumulator.options_.empty_query != EmptyQueryNdcg::kSkip) {
    return absl::InvalidArgumentError(
        "skip_empty_queries is set but empty_query_ndcg says otherwise; set "
        "one of them");
  }
  accumulator.per_query_ = first.per_query();
  if (accumulator.per_query_) {
    // What one metric value costs in a QueryMetrics message: its name,
    // the double and the tags and lengths around them.
    for (const MetricSpec& spec : accumulator.specs_) {
      accumulator.per_query_metric_bytes_ += spec.Name().size() + 16;
    }
  }
  accumulator.data_.query_offsets.push_back(0);
  return accumulator;
}

absl::Status EvaluationAccumulator::AddQueries(
    const ServableVersion& version, const v1::EvaluateRequest& request,
    InterruptCheck interrupted) {
  if (static_cast<uint32_t>(request.queries_size()) >
      limits_.max_queries_per_request) {
    return absl::ResourceExhaustedError(absl::StrCat(
        request.queries_size(), " queries in one message; this server "
        "accepts at most ", limits_.max_queries_per_request,
        " (split it or use EvaluateStream)"));
  }
  for (const v1::LabelledQuery& query : request.queries()) {
    const std::string context =
        absl::StrCat("query ", data_.num_queries(), " ('", EchoedText(query.query_id()),
                     "') ");
    const size_t num_docs = static_cast<size_t>(query.documents_size());
    if (num_docs == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(context, "has no documents"));
    }
    if (num_docs > limits_.max_documents_per_request) {
      return absl::ResourceExhaustedError(absl::StrCat(
          context, "has ", num_docs, " documents; this server accepts at "
          "most ", limits_.max_documents_per_request, " per query"));
    }
    if (static_cast<size_t>(query.labels_size()) != num_docs) {
      return absl::InvalidArgumentError(
          absl::StrCat(context, "has ", num_docs, " documents but ",
                       query.labels_size(), " labels"));
    }
    if (data_.labels.size() + num_docs > limits_.max_evaluate_documents) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "more than ", limits_.max_evaluate_documents,
          " documents in one evaluation; evaluate in parts"));
    }
    // The CLIs' limit (core/data/dataset.h): beyond it 2^label - 1 gains
    // overflow and every metric of the request turns NaN.
    for (int i = 0; i < query.labels_size(); ++i) {
      if (query.labels(i) < 0 || query.labels(i) > kMaxLabel) {
        return absl::InvalidArgumentError(absl::StrCat(
            context, "document ", i, ": label ", query.labels(i),
            " outside 0..", kMaxLabel));
      }
    }
    absl::StatusOr<absl::Span<const double>> scores = DocumentScorer::Score(
        version.scorer(), query.documents(), context, interrupted);
    if (!scores.ok()) return scores.status();
    scores_.insert(scores_.end(), scores->begin(), scores->end());
    data_.labels.insert(data_.labels.end(), query.labels().begin(),
                        query.labels().end());
    data_.query_offsets.push_back(static_cast<uint32_t>(data_.labels.size()));
    data_.query_ids.push_back(query.query_id());
    if (per_query_) {
      // Estimated before the response is built: past the largest message
      // the server may send, the call could only fail at the end, after
      // holding every value.
      estimated_response_bytes_ +=
          query.query_id().size() + 8 + per_query_metric_bytes_;
      if (estimated_response_bytes_ > limits_.max_response_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "the per_query response would exceed ",
            limits_.max_response_bytes, " bytes after ", data_.num_queries(),
            " queries x ", specs_.size(), " metrics; evaluate in parts, ask "
            "fewer ndcg_at cut-offs or leave per_query unset"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status EvaluationAccumulator::Finish(
    const ServableVersion& version, v1::EvaluateResponse* response) const {
  if (data_.num_queries() == 0) {
    return absl::InvalidArgumentError("no queries to evaluate");
  }
  if (options_.empty_query == EmptyQueryNdcg::kSkip && data_.max_label() == 0) {
    // Every query would be skipped: the means would be NaN.
    return absl::InvalidArgumentError(
        "skip_empty_queries is set and no query has a label above 0, so no "
        "query is left to average");
  }
  const EvaluationReport report = Evaluate(data_, scores_, specs_, options_);
  // Labels in range and finite scores keep every metric finite; a NaN must
  // never reach a client as a metric value.
  for (size_t m = 0; m < specs_.size(); ++m) {
    if (!std::isfinite(report.means[m])) {
      return absl::InternalError(absl::StrCat(
          "metric ", specs_[m].Name(), " is not finite (", report.means[m],
          ")"));
    }
  }
  response->set_model_name(version.model());
  response->set_model_version(version.version());
  response->set_query_count(static_cast<uint32_t>(data_.num_queries()));
  response->set_document_count(data_.labels.size());
  switch (options_.empty_query) {
    case EmptyQueryNdcg::kOne:
      response->set_empty_query_ndcg(v1::EMPTY_QUERY_NDCG_ONE);
      break;
    case EmptyQueryNdcg::kZero:
      response->set_empty_query_ndcg(v1::EMPTY_QUERY_NDCG_ZERO);
      break;
    case EmptyQueryNdcg::kSkip:
      response->set_empty_query_ndcg(v1::EMPTY_QUERY_NDCG_SKIP);
      break;
  }
  for (size_t m = 0; m < specs_.size(); ++m) {
    v1::MetricValue* metric = response->add_metrics();
    metric->set_name(specs_[m].Name());
    metric->set_value(report.means[m]);
  }
  if (per_query_) {
    for (size_t q = 0; q < data_.num_queries(); ++q) {
      v1::QueryMetrics* query = response->add_per_query();
      query->set_query_id(data_.query_ids[q]);
      for (size_t m = 0; m < specs_.size(); ++m) {
        const double value = report.per_query[m][q];
        if (std::isnan(value)) continue;  // left out (skip_empty_queries)
        v1::MetricValue* metric = query->add_metrics();
        metric->set_name(specs_[m].Name());
        metric->set_value(value);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace plrank::server
