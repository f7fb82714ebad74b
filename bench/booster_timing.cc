// Standalone timing of the gradient-boosting engine (not a test, not built by
// CMake): 290K documents x 136 features of synthetic LETOR-like data, squared
// loss, 31 leaves, and prints milliseconds per tree.
//
//   usage: booster_timing [num_trees=50] [num_threads=2] [newton=0]

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "core/boosting/booster.h"
#include "core/boosting/sampling.h"

namespace {

using plrank::Dataset;

// Squared loss on the labels: g = s - y, h = 1.
class SquaredLoss : public plrank::Objective {
 public:
  std::string name() const override { return "squared"; }
  absl::Status Init(const Dataset& train, uint64_t) override {
    labels_ = &train.labels;
    return absl::OkStatus();
  }
  void ComputeGradients(absl::Span<const double> scores,
                        absl::Span<const uint8_t>, absl::Span<float> gradients,
                        absl::Span<float> hessians) override {
    for (size_t i = 0; i < scores.size(); ++i) {
      gradients[i] = static_cast<float>(scores[i] - (*labels_)[i]);
      hessians[i] = 1.0f;
    }
  }
  double Loss(absl::Span<const double> scores) const override {
    double loss = 0.0;
    for (size_t i = 0; i < scores.size(); ++i) {
      const double d = scores[i] - (*labels_)[i];
      loss += 0.5 * d * d;
    }
    return loss;
  }

 private:
  const std::vector<int32_t>* labels_ = nullptr;
};

// Features of four kinds like MSLR-WEB: small counts, mostly-zero values,
// continuous scores, and a few with many distinct values.
Dataset Generate(size_t num_documents, int32_t num_features) {
  Dataset data;
  data.num_features = num_features;
  data.features.resize(num_documents * num_features);
  data.labels.resize(num_documents);
  plrank::SplitMix64 rng(42);
  auto uniform = [&rng] { return (rng.Next() >> 11) * 0x1.0p-53; };
  for (int32_t f = 0; f < num_features; ++f) {
    float* column = data.features.data() + f * num_documents;
    for (size_t i = 0; i < num_documents; ++i) {
      const double u = uniform();
      switch (f % 4) {
        case 0: column[i] = static_cast<float>(std::floor(u * u * 12)); break;
        case 1: column[i] = u < 0.7 ? 0.0f : static_cast<float>(uniform()); break;
        case 2: column[i] = static_cast<float>(std::log1p(u * 100.0)); break;
        default: column[i] = static_cast<float>(u * 1e5); break;
      }
    }
  }
  for (size_t i = 0; i < num_documents; ++i) {
    double relevance = 0.0;
    for (int32_t f = 0; f < 8; ++f) {
      relevance += data.features[f * num_documents + i] / (f % 4 == 3 ? 1e5 : 5.0);
    }
    relevance += 0.5 * uniform();
    data.labels[i] = static_cast<int32_t>(std::min(4.0, std::floor(relevance)));
  }
  for (size_t begin = 0; begin < num_documents; begin += 120) {
    data.query_offsets.push_back(static_cast<uint32_t>(begin));
    data.query_ids.push_back(std::to_string(data.query_ids.size()));
  }
  data.query_offsets.push_back(static_cast<uint32_t>(num_documents));
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  const int32_t num_trees = argc > 1 ? std::atoi(argv[1]) : 50;
  const int32_t num_threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const bool newton = argc > 3 && std::atoi(argv[3]) != 0;
  const Dataset data = Generate(290000, 136);
  SquaredLoss objective;
  (void)objective.Init(data, 1);

  plrank::BoosterConfig config;
  config.num_trees = num_trees;
  config.num_leaves = 31;
  config.num_threads = num_threads;
  config.split_gain = newton ? plrank::SplitGain::kNewton
                             : plrank::SplitGain::kLeastSquares;
  plrank::BoosterInputs inputs;
  inputs.train = &data;
  inputs.objective = &objective;
  double binning_seconds = 0.0;
  std::clock_t cpu_after_first = 0;
  inputs.on_iteration = [&](const plrank::IterationReport& report) {
    if (report.iteration == 1) {
      binning_seconds = report.elapsed_seconds;
      cpu_after_first = std::clock();
    }
  };
  const auto start = std::chrono::steady_clock::now();
  auto result = plrank::TrainBooster(config, inputs);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
    return 1;
  }
  // CPU time (all threads) is what a loaded machine cannot distort.
  const double cpu_ms = 1e3 * (std::clock() - cpu_after_first) / CLOCKS_PER_SEC;
  const auto& history = result->history;
  const double per_tree_ms =
      (history.back().elapsed_seconds - binning_seconds) * 1e3 /
      std::max<size_t>(history.size() - 1, 1);
  std::printf("threads=%d gain=%s trees=%zu total=%.2fs first_iteration(incl. "
              "binning)=%.2fs  %.1f ms/tree (wall)  %.1f ms/tree (cpu, all threads)  "
              "loss %.1f -> %.1f\n",
              num_threads, newton ? "newton" : "least-squares",
              result->trees.size(), seconds, binning_seconds, per_tree_ms,
              cpu_ms / std::max<size_t>(history.size() - 1, 1),
              history.front().train_loss, history.back().train_loss);
  return 0;
}
