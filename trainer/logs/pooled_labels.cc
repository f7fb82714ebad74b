#include "trainer/logs/pooled_labels.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/data/dataset.h"

namespace plrank::logs {
namespace {

void AppendDouble(std::string& out, double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

}  // namespace

absl::Status ValidatePooledLabelOptions(const PooledLabelOptions& options) {
  if (options.grades < 1 || options.grades > static_cast<uint32_t>(kMaxLabel)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pooled_grades must be in 1..", kMaxLabel, " (0: no pooled file)"));
  }
  if (options.curve.empty()) {
    return absl::InvalidArgumentError(
        "--pooled_grades needs --position_propensities (the examination "
        "curve theta_1,theta_2,...; plrank-train --estimate_propensities "
        "estimates it from D)");
  }
  for (double theta : options.curve) {
    if (!(theta > 0.0 && theta <= 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--position_propensities: ", theta, " is not in (0, 1]"));
    }
  }
  if (!(options.prior_exposure >= 0.0 && std::isfinite(options.prior_exposure))) {
    return absl::InvalidArgumentError(
        "--pooled_prior_exposure must be a finite number >= 0");
  }
  return absl::OkStatus();
}

uint32_t PooledGrade(double clicks, double exposure, double prior, double a,
                     uint32_t grades) {
  if (!(clicks > 0.0)) return 0;
  const double denominator = exposure + a;
  const double r =
      denominator > 0.0 ? std::min(1.0, (clicks + a * prior) / denominator)
                        : 1.0;
  return static_cast<uint32_t>(std::floor(grades * r + 0.5));
}

PooledLabels::PooledLabels(PooledLabelOptions options)
    : options_(std::move(options)) {}

double PooledLabels::Theta(size_t position) const {
  return options_.curve[std::min(position, options_.curve.size()) - 1];
}

void PooledLabels::BeginRequest(const std::string& query) {
  auto [it, added] = query_index_.try_emplace(query, queries_.size());
  if (added) {
    queries_.emplace_back();
    queries_.back().key = query;
  }
  current_ = it->second;
  ++queries_[current_].requests;
}

void PooledLabels::Add(const std::string& doc, const std::string& features,
                       uint32_t position, const double* marginals, size_t k,
                       size_t stride, bool clicked) {
  Query& query = queries_[current_];
  auto [it, added] = query.index.try_emplace(doc, query.docs.size());
  if (added) {
    query.docs.emplace_back();
    query.docs.back().id = doc;
  }
  Doc& entry = query.docs[it->second];
  entry.features = features;
  double exposure = 0.0;
  if (options_.expected_exposure) {
    for (size_t j = 0; j < k; ++j) exposure += marginals[j * stride] * Theta(j + 1);
  } else if (position != 0) {
    exposure = Theta(position);
  }
  entry.exposure += exposure;
  entry.clicks += clicked ? 1.0 : 0.0;
  total_exposure_ += exposure;
  total_clicks_ += clicked ? 1.0 : 0.0;
}

size_t PooledLabels::documents() const {
  size_t n = 0;
  for (const Query& query : queries_) n += query.docs.size();
  return n;
}

double PooledLabels::prior() const {
  return total_exposure_ > 0.0 ? total_clicks_ / total_exposure_ : 0.0;
}

std::string PooledLabels::Letor() const {
  const double p = prior();
  std::string out;
  for (size_t q = 0; q < queries_.size(); ++q) {
    const Query& query = queries_[q];
    for (const Doc& doc : query.docs) {
      absl::StrAppend(&out,
                      PooledGrade(doc.clicks, doc.exposure, p,
                                  options_.prior_exposure, options_.grades),
                      " qid:", q + 1, doc.features.empty() ? "" : " ",
                      doc.features, " # query=", query.key, " doc=", doc.id,
                      " clicks=", doc.clicks, " exposure=");
      AppendDouble(out, doc.exposure);
      absl::StrAppend(&out, " requests=", query.requests, "\n");
    }
  }
  return out;
}

}  // namespace plrank::logs
