#include "core/pipeline/training_history.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace plrank {
namespace {

nlohmann::ordered_json Number(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
}

// {"ndcg@1": v, ...} for every cut-off; null where a value is missing.
nlohmann::ordered_json Cutoffs(const std::map<std::string, double>& values,
                       const std::vector<int32_t>& eval_at) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (int32_t k : eval_at) {
    const std::string name = absl::StrCat("ndcg@", k);
    auto it = values.find(name);
    out[name] = it == values.end() ? nlohmann::ordered_json() : Number(it->second);
  }
  return out;
}

}  // namespace

double ValidScoreAt(const Ensemble& model, int32_t first_cutoff,
                    int32_t iteration) {
  const std::string name = absl::StrCat("ndcg@", first_cutoff);
  for (const IterationMetrics& metrics : model.history) {
    if (metrics.iteration != iteration) continue;
    auto it = metrics.valid.find(name);
    if (it != metrics.valid.end()) return it->second;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::string TrainingHistoryJson(const Ensemble& model,
                                const HistoryInfo& info) {
  nlohmann::ordered_json doc;
  doc["format"] = "plrank-history-1";
  doc["objective"] = model.objective;
  doc["eval_at"] = info.eval_at;
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
  for (int32_t k : info.eval_at) metrics.push_back(absl::StrCat("ndcg@", k));
  doc["metrics"] = metrics;
  doc["trees"] = info.trees;
  doc["iterations"] = model.history.size();
  doc["train_queries"] = info.train_queries;
  doc["valid_queries"] = info.valid_queries;
  doc["early_stopping_rounds"] = info.early_stopping_rounds;
  doc["best_iteration"] = info.best_iteration;
  doc["best_metric"] = info.eval_at.empty()
                           ? nlohmann::ordered_json()
                           : nlohmann::ordered_json(metrics.front());
  doc["best_score"] =
      info.eval_at.empty()
          ? nlohmann::ordered_json()
          : Number(ValidScoreAt(model, info.eval_at.front(),
                                info.best_iteration));
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (size_t i = 0; i < model.history.size(); ++i) {
    const IterationMetrics& entry = model.history[i];
    nlohmann::ordered_json record;
    record["iteration"] = entry.iteration;
    record["train_loss"] =
        info.trees > 0 ? Number(entry.train_loss) : nlohmann::ordered_json();
    record["valid_loss"] = i < info.valid_loss.size()
                               ? Number(info.valid_loss[i])
                               : nlohmann::ordered_json();
    record["train"] = Cutoffs(entry.train, info.eval_at);
    record["valid"] = info.valid_queries > 0
                          ? Cutoffs(entry.valid, info.eval_at)
                          : nlohmann::ordered_json::object();
    history.push_back(std::move(record));
  }
  doc["history"] = std::move(history);
  return doc.dump(1) + "\n";
}

}  // namespace plrank
