#include "core/pipeline/training_history.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace plrank {
namespace {

using Json = nlohmann::ordered_json;

Json Number(double value) {
  return std::isfinite(value) ? Json(value) : Json();
}

// {"ndcg@1": v, ...} for every cut-off; null where a value is missing.
Json Cutoffs(const std::map<std::string, double>& values,
                       const std::vector<int32_t>& eval_at) {
  Json out = Json::object();
  for (int32_t k : eval_at) {
    const std::string name = absl::StrCat("ndcg@", k);
    auto it = values.find(name);
    out[name] = it == values.end() ? Json() : Number(it->second);
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
  Json doc;
  doc["format"] = "plrank-history-1";
  doc["objective"] = model.objective;
  doc["eval_at"] = info.eval_at;
  Json metrics = Json::array();
  for (int32_t k : info.eval_at) metrics.push_back(absl::StrCat("ndcg@", k));
  doc["metrics"] = metrics;
  doc["trees"] = info.trees;
  doc["iterations"] = model.history.size();
  doc["train_queries"] = info.train_queries;
  doc["valid_queries"] = info.valid_queries;
  doc["early_stopping_rounds"] = info.early_stopping_rounds;
  doc["best_iteration"] = info.best_iteration;
  doc["best_metric"] = info.eval_at.empty()
                           ? Json()
                           : Json(metrics.front());
  doc["best_score"] =
      info.eval_at.empty()
          ? Json()
          : Number(ValidScoreAt(model, info.eval_at.front(),
                                info.best_iteration));
  Json history = Json::array();
  for (size_t i = 0; i < model.history.size(); ++i) {
    const IterationMetrics& entry = model.history[i];
    Json record;
    record["iteration"] = entry.iteration;
    record["train_loss"] =
        info.trees > 0 ? Number(entry.train_loss) : Json();
    record["valid_loss"] = i < info.valid_loss.size()
                               ? Number(info.valid_loss[i])
                               : Json();
    record["train"] = Cutoffs(entry.train, info.eval_at);
    record["valid"] = info.valid_queries > 0
                          ? Cutoffs(entry.valid, info.eval_at)
                          : Json::object();
    history.push_back(std::move(record));
  }
  doc["history"] = std::move(history);
  return doc.dump(1) + "\n";
}

}  // namespace plrank
