#include "core/linear/coordinate_ascent.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "core/data/random.h"
#include "core/linear/feature_scaling.h"
#include "core/linear/incremental_ndcg.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank {
namespace {

constexpr double kStepGrid[] = {0.001, 0.003, 0.01, 0.03, 0.1,
                                0.3,   1.0,   3.0,  10.0};

struct RunResult {
  std::vector<double> v;  // standardized-space weights
  double ndcg_sum = 0.0;  // over informative queries
  int32_t rounds = 0;
  std::vector<double> history;  // mean NDCG over all queries
};

double L1Norm(const std::vector<double>& v) {
  double norm = 0.0;
  for (double x : v) norm += std::fabs(x);
  return norm;
}

class CoordinateAscent {
 public:
  CoordinateAscent(const Dataset& data, const CoordinateAscentOptions& options,
                   std::function<void(const std::string&)>& log)
      : data_(data),
        options_(options),
        log_(log),
        scaling_(ComputeFeatureScaling(data)),
        ndcg_(data, options.ndcg_k) {
    for (int32_t f = 0; f < data.num_features; ++f) {
      if (scaling_.active[f]) active_.push_back(f);
    }
    // The uninformative queries' NDCG, constant under any weights.
    const std::vector<double> zeros(data.num_documents(), 0.0);
    const double all = MeanNdcg(data, zeros, options.ndcg_k) *
                       static_cast<double>(data.num_queries());
    ndcg_.Reset(zeros);
    constant_sum_ = all - ndcg_.current_sum();
  }

  const std::vector<int32_t>& active() const { return active_; }

  double Mean(double informative_sum) const {
    return (informative_sum + constant_sum_) /
           static_cast<double>(data_.num_queries());
  }

  RunResult Run(int32_t restart) {
    const size_t m = active_.size();
    Xoshiro256 random(options_.seed, static_cast<uint64_t>(restart));
    RunResult run;
    run.v.assign(m, 1.0 / static_cast<double>(m));
    if (restart > 0) {
      for (double& x : run.v) x = random.Uniform(-1.0, 1.0);
    }
    // The held scores must be those of v itself, so start at ||v||_1 = 1.
    const double initial_norm = L1Norm(run.v);
    for (double& x : run.v) {
      x = initial_norm > 0.0 ? x / initial_norm : 1.0 / static_cast<double>(m);
    }
    ndcg_.Reset(ScoreLinear(data_, RawWeights(run.v)));
    run.ndcg_sum = ndcg_.current_sum();
    run.history.push_back(Mean(run.ndcg_sum));
    std::vector<size_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    for (int32_t round = 1; round <= options_.max_rounds; ++round) {
      const double round_start = run.ndcg_sum;
      for (size_t i = m; i > 1; --i) {
        std::swap(order[i - 1], order[random.Below(i)]);
      }
      for (size_t a : order) {
        const double norm = L1Norm(run.v);
        const double scale =
            std::max(std::fabs(run.v[a]), norm / static_cast<double>(m));
        double best_delta = 0.0;
        double best_sum = run.ndcg_sum;
        auto consider = [&](double delta) {
          // A step that zeroes every weight leaves no ranking at all.
          if (delta == 0.0 ||
              norm - std::fabs(run.v[a]) + std::fabs(run.v[a] + delta) <= 0.0) {
            return;
          }
          const double sum = ndcg_.TrialSum(active_[a], Step(a, delta));
          if (sum > best_sum) {
            best_sum = sum;
            best_delta = delta;
          }
        };
        for (double g : kStepGrid) {
          consider(g * scale);
          consider(-g * scale);
        }
        consider(-run.v[a]);
        if (best_delta != 0.0) {
          ndcg_.Accept(active_[a], Step(a, best_delta));
          run.v[a] += best_delta;
          run.ndcg_sum = ndcg_.current_sum();
        }
      }
      run.rounds = round;
      run.history.push_back(Mean(run.ndcg_sum));
      if (log_) {
        log_(absl::StrFormat("ca restart %d round %d: train ndcg@%d %.6f",
                             restart, round, options_.ndcg_k,
                             run.history.back()));
      }
      if ((run.ndcg_sum - round_start) /
              static_cast<double>(data_.num_queries()) <=
          options_.tolerance) {
        break;
      }
    }
    return run;
  }

  // Raw-feature weights of active-feature weights v, normalized to
  // ||v||_1 = 1 first.
  std::vector<double> RawWeights(const std::vector<double>& v) const {
    const double norm = L1Norm(v);
    std::vector<double> full(data_.num_features, 0.0);
    for (size_t a = 0; a < active_.size(); ++a) {
      full[active_[a]] = norm > 0.0 ? v[a] / norm : 0.0;
    }
    return scaling_.FoldToRaw(full);
  }

 private:
  // A standardized weight change delta moves the scores by
  // delta / stddev times the raw feature.
  double Step(size_t a, double delta) const {
    return delta / scaling_.stddev[active_[a]];
  }

  const Dataset& data_;
  const CoordinateAscentOptions& options_;
  std::function<void(const std::string&)>& log_;
  FeatureScaling scaling_;
  IncrementalNdcg ndcg_;
  std::vector<int32_t> active_;
  double constant_sum_ = 0.0;
};

}  // namespace

absl::StatusOr<LinearModelResult> TrainCoordinateAscent(
    const Dataset& train, const Dataset* valid,
    const CoordinateAscentOptions& options,
    std::function<void(const std::string&)> log) {
  if (options.ndcg_k < 0) {
    return absl::InvalidArgumentError("ca: ndcg_k must be >= 0");
  }
  if (options.restarts < 1 || options.max_rounds < 0) {
    return absl::InvalidArgumentError(
        "ca: restarts must be >= 1 and max_rounds >= 0");
  }
  if (!(options.tolerance >= 0.0)) {
    return absl::InvalidArgumentError("ca: tolerance must be >= 0");
  }
  if (train.num_queries() == 0) {
    return absl::InvalidArgumentError("ca: the training set has no query");
  }
  CoordinateAscent search(train, options, log);
  LinearModelResult result;
  result.weights.assign(train.num_features, 0.0);
  if (!search.active().empty()) {
    RunResult best;
    for (int32_t restart = 0; restart < options.restarts; ++restart) {
      RunResult run = search.Run(restart);
      if (log) {
        log(absl::StrFormat("ca restart %d: train ndcg@%d %.6f after %d rounds",
                            restart, options.ndcg_k, run.history.back(),
                            run.rounds));
      }
      if (restart == 0 || run.ndcg_sum > best.ndcg_sum) best = std::move(run);
    }
    result.weights = search.RawWeights(best.v);
    result.iterations = best.rounds;
    result.history = std::move(best.history);
  }
  result.train_ndcg =
      MeanNdcg(train, ScoreLinear(train, result.weights), options.ndcg_k);
  result.valid_ndcg =
      valid == nullptr ? std::numeric_limits<double>::quiet_NaN()
                       : MeanNdcg(*valid, ScoreLinear(*valid, result.weights),
                                  options.ndcg_k);
  return result;
}

}  // namespace plrank
