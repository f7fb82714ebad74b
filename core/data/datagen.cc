#include "core/data/datagen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/data/random.h"

namespace plrank {
namespace {

// Hidden factors per document; the last one does not affect relevance, so
// features built on it are plausible-looking decoys.
constexpr int kFactors = 10;
// Share of a factor's variance common to all documents of a query.
constexpr double kQueryShare = 0.25;
// How far down a hopeless query's offset is pushed (in offset units).
constexpr double kHopelessShift = 5.0;

// Stream ids of the generator's independent random streams.
constexpr uint64_t kRecipeStream = 1;
constexpr uint64_t kSizeStream = 2;
constexpr uint64_t kFirstQueryStream = 1000;

enum class Kind { kInformative, kCount, kSparse, kCopy, kNoise, kQueryLevel };
enum class Shape { kLinear, kExponential, kLogistic, kRounded };

struct Recipe {
  Kind kind = Kind::kNoise;
  Shape shape = Shape::kLinear;
  int factor_a = 0;
  int factor_b = 0;
  double weight_b = 0;
  double noise = 1;
  double scale = 1;
  double offset = 0;
  double zero_threshold = 0;  // kSparse: zero below this
  int source = 0;             // kCopy: feature copied
  bool has_missing = false;
};

double ApplyShape(Shape shape, double z) {
  switch (shape) {
    case Shape::kLinear:
      return z;
    case Shape::kExponential:
      return std::exp(0.6 * z);
    case Shape::kLogistic:
      return 1.0 / (1.0 + std::exp(-1.5 * z));
    case Shape::kRounded:
      return std::round(z * 4.0) / 4.0;
  }
  return z;
}

std::vector<Recipe> MakeRecipes(int32_t num_features, uint64_t seed) {
  Xoshiro256 rng(seed, kRecipeStream);
  // Kind shares, roughly MSLR-like: many redundant and weak features.
  std::vector<Kind> kinds;
  const auto add = [&](Kind kind, double share) {
    const int count = static_cast<int>(std::lround(share * num_features));
    for (int i = 0; i < count && static_cast<int>(kinds.size()) < num_features;
         ++i) {
      kinds.push_back(kind);
    }
  };
  add(Kind::kInformative, 0.25);
  add(Kind::kCount, 0.15);
  add(Kind::kSparse, 0.15);
  add(Kind::kCopy, 0.20);
  add(Kind::kQueryLevel, 0.10);
  while (static_cast<int>(kinds.size()) < num_features) {
    kinds.push_back(Kind::kNoise);
  }
  kinds[0] = Kind::kInformative;  // tiny widths still carry signal
  for (int i = num_features - 1; i > 1; --i) {  // keep kinds[0] in place
    std::swap(kinds[i], kinds[1 + rng.Below(i)]);
  }

  std::vector<Recipe> recipes(num_features);
  std::vector<int> copy_sources;
  for (int f = 0; f < num_features; ++f) {
    Recipe& r = recipes[f];
    r.kind = kinds[f];
    r.shape = static_cast<Shape>(rng.Below(4));
    r.factor_a = static_cast<int>(rng.Below(kFactors));
    r.factor_b = static_cast<int>(rng.Below(kFactors));
    r.weight_b = rng.Uniform() < 0.5 ? rng.Uniform(-0.6, 0.6) : 0.0;
    r.noise = rng.Uniform(0.3, 1.5);
    r.scale = std::exp(rng.Uniform(-2.0, 4.0));
    r.offset = rng.Uniform() < 0.5 ? 0.0 : rng.Uniform(-1.0, 1.0) * r.scale;
    r.zero_threshold = rng.Uniform(0.0, 1.3);
    if (r.kind == Kind::kInformative || r.kind == Kind::kCount) {
      copy_sources.push_back(f);
    }
  }
  for (Recipe& r : recipes) {
    if (r.kind == Kind::kCopy) {
      r.source = copy_sources[rng.Below(copy_sources.size())];
    }
  }
  // A few informative features get missing values (about one in forty).
  const int num_missing = std::max(1, num_features / 40);
  for (int i = 0; i < num_missing && i < static_cast<int>(copy_sources.size());
       ++i) {
    recipes[copy_sources[rng.Below(copy_sources.size())]].has_missing = true;
  }
  return recipes;
}

// The hidden relevance: nonlinear on purpose (a threshold interaction, a
// product, saturation, a U-shape), so trees beat linear models.
double Relevance(const double* h) {
  return 0.8 * h[0] + 0.7 * std::tanh(1.5 * h[1]) +
         0.9 * ((h[2] > 0.4 && h[3] > 0.0) ? 1.0 : 0.0) + 0.5 * h[4] * h[5] +
         0.35 * std::pow(std::max(h[6], 0.0), 2.0) - 0.5 * std::fabs(h[7]) +
         0.3 * h[8];
}

std::vector<uint32_t> DrawQuerySizes(const DatagenOptions& options) {
  Xoshiro256 rng(options.seed, kSizeStream);
  const double mean = options.mean_docs_per_query;
  const double sigma = options.docs_sigma;
  const double mu = std::log(mean) - 0.5 * sigma * sigma;
  const double cap = std::max(1.0, std::floor(10.0 * mean));
  std::vector<uint32_t> sizes(options.num_queries);
  for (uint32_t& size : sizes) {
    const double draw = std::round(std::exp(mu + sigma * rng.Gaussian()));
    size = static_cast<uint32_t>(std::clamp(draw, 1.0, cap));
  }
  return sizes;
}

class QueryGenerator {
 public:
  QueryGenerator(const DatagenOptions& options,
                 const std::vector<Recipe>& recipes, Dataset* data,
                 std::vector<double>* label_scores)
      : options_(options),
        recipes_(recipes),
        data_(data),
        label_scores_(label_scores) {}

  void Generate(size_t query);

 private:
  // Draws document `doc`'s factors and features; returns its noise-free
  // relevance and sets *score to the relevance plus label noise.
  double GenerateDocument(Xoshiro256& rng, size_t doc, double* score);
  void CopyFeatures(size_t from_doc, size_t to_doc);
  void AssignLabelScores(size_t first_doc, size_t count, double query_offset);

  const DatagenOptions& options_;
  const std::vector<Recipe>& recipes_;
  Dataset* data_;
  std::vector<double>* label_scores_;
  // Per-query scratch, reused so no allocation happens per document.
  double query_factors_[kFactors];
  std::vector<double> query_values_;
  std::vector<double> clean_values_;
  std::vector<double> scores_;
  std::vector<uint32_t> order_;
  // tie_levels > 0: each prototype's document (-1 until drawn) and its
  // noise-free relevance.
  std::vector<int64_t> prototype_doc_;
  std::vector<double> prototype_relevance_;
};

void QueryGenerator::Generate(size_t query) {
  Xoshiro256 rng(options_.seed, kFirstQueryStream + query);
  for (double& factor : query_factors_) factor = rng.Gaussian();
  // A few queries are hopeless (nothing relevant), as in MSLR.
  const bool hopeless = rng.Uniform() < options_.hopeless_share;
  const double query_offset =
      rng.Gaussian() - (hopeless ? kHopelessShift : 0.0);
  const size_t num_features = recipes_.size();
  query_values_.resize(num_features);
  for (size_t f = 0; f < num_features; ++f) {
    const Recipe& r = recipes_[f];
    // Query-level features: query "difficulty" signals, partly telling how
    // many relevant documents to expect.
    query_values_[f] =
        r.scale * ApplyShape(r.shape, 0.6 * query_offset +
                                          0.5 * query_factors_[r.factor_a] +
                                          r.noise * rng.Gaussian()) +
        r.offset;
  }
  const size_t first_doc = data_->query_offsets[query];
  const size_t count = data_->query_offsets[query + 1] - first_doc;
  scores_.resize(count);
  const int32_t levels = options_.tie_levels;
  if (levels == 0) {
    for (size_t i = 0; i < count; ++i) {
      GenerateDocument(rng, first_doc + i, &scores_[i]);
    }
  } else {
    // The first document drawing a prototype becomes it; later ones copy
    // its features and relevance and add their own label noise.
    prototype_doc_.assign(levels, -1);
    prototype_relevance_.assign(levels, 0.0);
    for (size_t i = 0; i < count; ++i) {
      const size_t level = rng.Below(levels);
      if (prototype_doc_[level] < 0) {
        prototype_doc_[level] = static_cast<int64_t>(first_doc + i);
        prototype_relevance_[level] =
            GenerateDocument(rng, first_doc + i, &scores_[i]);
      } else {
        CopyFeatures(prototype_doc_[level], first_doc + i);
        scores_[i] =
            prototype_relevance_[level] + options_.noise * rng.Gaussian();
      }
    }
  }
  AssignLabelScores(first_doc, count, query_offset);
}

double QueryGenerator::GenerateDocument(Xoshiro256& rng, size_t doc,
                                        double* score) {
  double h[kFactors];
  const double own = std::sqrt(1.0 - kQueryShare);
  for (int k = 0; k < kFactors; ++k) {
    h[k] = std::sqrt(kQueryShare) * query_factors_[k] + own * rng.Gaussian();
  }
  const double relevance = Relevance(h);
  *score = relevance + options_.noise * rng.Gaussian();

  const size_t num_features = recipes_.size();
  const size_t num_docs = data_->num_documents();
  clean_values_.resize(num_features);
  // Copies refer to informative/count features, which are all computed in
  // this first pass.
  for (size_t f = 0; f < num_features; ++f) {
    const Recipe& r = recipes_[f];
    const double signal = h[r.factor_a] + r.weight_b * h[r.factor_b];
    double value = 0;
    switch (r.kind) {
      case Kind::kInformative:
        value = r.scale * ApplyShape(r.shape, signal + r.noise * rng.Gaussian()) +
                r.offset;
        break;
      case Kind::kCount:
        value = std::floor(std::exp(0.8 * signal + 0.3 * rng.Gaussian() +
                                    std::log1p(r.scale)));
        break;
      case Kind::kSparse: {
        const double z = signal + 0.7 * rng.Gaussian();
        value = z < r.zero_threshold ? 0.0 : r.scale * std::exp(0.5 * z);
        break;
      }
      case Kind::kNoise:
        value = r.shape == Shape::kExponential
                    ? std::floor(std::exp(1.5 * rng.Gaussian()))
                    : r.scale * rng.Uniform();
        break;
      case Kind::kQueryLevel:
        value = query_values_[f];
        break;
      case Kind::kCopy:
        break;
    }
    clean_values_[f] = value;
  }
  for (size_t f = 0; f < num_features; ++f) {
    const Recipe& r = recipes_[f];
    double value = clean_values_[f];
    if (r.kind == Kind::kCopy) {
      value = clean_values_[r.source] * (1.0 + 0.05 * rng.Gaussian()) +
              0.1 * r.noise * rng.Gaussian();
    }
    if (r.has_missing && rng.Uniform() < options_.missing_rate) {
      value = std::numeric_limits<double>::quiet_NaN();
    }
    data_->features[f * num_docs + doc] = static_cast<float>(value);
  }
  return relevance;
}

void QueryGenerator::CopyFeatures(size_t from_doc, size_t to_doc) {
  const size_t num_docs = data_->num_documents();
  for (size_t f = 0; f < recipes_.size(); ++f) {
    data_->features[f * num_docs + to_doc] =
        data_->features[f * num_docs + from_doc];
  }
}

// Label scores from within-query ranks: each document's normal score (the
// normal quantile of its rank) is blended with the query's offset. Ranks make
// the scores' spread independent of the relevance function's distribution;
// the offset makes queries differ in how many relevant documents they have.
void QueryGenerator::AssignLabelScores(size_t first_doc, size_t count,
                                       double query_offset) {
  order_.resize(count);
  std::iota(order_.begin(), order_.end(), 0);
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    return scores_[a] != scores_[b] ? scores_[a] < scores_[b] : a < b;
  });
  const double own = std::sqrt(1.0 - options_.query_offset_share);
  const double shared = std::sqrt(options_.query_offset_share) * query_offset;
  for (size_t rank = 0; rank < count; ++rank) {
    const double quantile = (rank + 0.5) / static_cast<double>(count);
    (*label_scores_)[first_doc + order_[rank]] =
        own * InverseNormalCdf(quantile) + shared;
  }
}

// Cumulative label shares, rounded to 12 decimals: shares are decimal
// fractions, and the rounding makes 0.51 + 0.32 the same double as 0.83, so
// the default cut points (and bytes) are those of the fixed MSLR table
// earlier versions used.
std::vector<double> CumulativeShares(const std::vector<double>& shares) {
  std::vector<double> cumulative;
  double sum = 0;
  for (size_t k = 0; k + 1 < shares.size(); ++k) {
    sum += shares[k];
    cumulative.push_back(std::round(sum * 1e12) / 1e12);
  }
  return cumulative;
}

// Cuts label scores at their global quantiles, so the label shares match
// `label_shares` exactly (up to rounding and ties) whatever the options.
void CutLabels(const std::vector<double>& label_scores,
               const std::vector<double>& label_shares,
               std::vector<int32_t>* labels) {
  const size_t count = label_scores.size();
  std::vector<double> sorted = label_scores;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<double> cumulative = CumulativeShares(label_shares);
  const int32_t top = static_cast<int32_t>(cumulative.size());
  std::vector<double> thresholds(top);
  for (int32_t k = 0; k < top; ++k) {
    const size_t rank =
        std::min(count - 1, static_cast<size_t>(cumulative[k] * count));
    thresholds[k] = sorted[rank];
  }
  for (size_t i = 0; i < count; ++i) {
    int32_t label = 0;
    while (label < top && label_scores[i] >= thresholds[label]) ++label;
    (*labels)[i] = label;
  }
}

}  // namespace

absl::Status ValidateLabelShares(const std::vector<double>& shares) {
  if (shares.size() < 2 || shares.size() > 32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "label shares need 2..32 grades (labels 0..31), got %d",
        static_cast<int>(shares.size())));
  }
  double sum = 0;
  for (double share : shares) {
    if (!(share >= 0 && share <= 1)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "every label share must be in [0, 1], got %g", share));
    }
    sum += share;
  }
  if (std::fabs(sum - 1.0) > 1e-6) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "label shares must sum to 1 (within 1e-6), got %.9g", sum));
  }
  return absl::OkStatus();
}

absl::Status ValidateDatagenOptions(const DatagenOptions& options) {
  if (options.num_queries <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "number of queries must be positive, got %d", options.num_queries));
  }
  if (!(options.mean_docs_per_query >= 1 &&
        options.mean_docs_per_query <= 1e5)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "mean documents per query must be in [1, 100000], got %g",
        options.mean_docs_per_query));
  }
  if (options.num_features <= 0 || options.num_features > (1 << 20)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "number of features must be in [1, 1048576], got %d",
        options.num_features));
  }
  if (options.num_queries * options.mean_docs_per_query > 4e8) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d queries of %g documents on average is too many documents",
        options.num_queries, options.mean_docs_per_query));
  }
  if (!(options.noise >= 0 && std::isfinite(options.noise))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "noise must be finite and non-negative, got %g", options.noise));
  }
  if (!(options.missing_rate >= 0 && options.missing_rate < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "missing rate must be in [0, 1), got %g", options.missing_rate));
  }
  if (!(options.docs_sigma >= 0 && options.docs_sigma <= 3)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "docs sigma must be in [0, 3], got %g", options.docs_sigma));
  }
  if (absl::Status status = ValidateLabelShares(options.label_shares);
      !status.ok()) {
    return status;
  }
  if (!(options.hopeless_share >= 0 && options.hopeless_share <= 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hopeless share must be in [0, 1], got %g", options.hopeless_share));
  }
  if (!(options.query_offset_share >= 0 && options.query_offset_share < 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("query offset share must be in [0, 1), got %g",
                        options.query_offset_share));
  }
  if (options.tie_levels < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tie levels must be >= 0 (0 = off), got %d", options.tie_levels));
  }
  return absl::OkStatus();
}

Dataset GenerateDataset(const DatagenOptions& options) {
  Dataset data;
  if (!ValidateDatagenOptions(options).ok()) return data;
  const std::vector<uint32_t> sizes = DrawQuerySizes(options);
  data.num_features = options.num_features;
  data.query_offsets.assign(1, 0);
  uint64_t total = 0;
  for (uint32_t size : sizes) {
    total += size;
    data.query_offsets.push_back(static_cast<uint32_t>(total));
  }
  data.labels.assign(total, 0);
  data.features.assign(total * options.num_features, 0.0f);
  data.query_ids.reserve(sizes.size());
  for (size_t q = 0; q < sizes.size(); ++q) {
    data.query_ids.push_back(absl::StrFormat("%d", q + 1));
  }
  const std::vector<Recipe> recipes =
      MakeRecipes(options.num_features, options.seed);
  std::vector<double> label_scores(total);
  QueryGenerator generator(options, recipes, &data, &label_scores);
  for (size_t q = 0; q < sizes.size(); ++q) generator.Generate(q);
  CutLabels(label_scores, options.label_shares, &data.labels);
  return data;
}

}  // namespace plrank
