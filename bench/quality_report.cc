#include "bench/quality_report.h"

#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/score_evaluation.h"
#include "nlohmann/json.hpp"

namespace plrank::bench {
namespace {

// Whether the candidate's NDCG@10 is at least the best peer's, and whether
// the best peer is significantly better. False/false without a comparison.
struct Verdict {
  bool available = false;
  bool at_least_best_peer = false;
  bool significantly_worse = false;
};

Verdict Judge(const QualityResults& results, const QualitySetResult& set) {
  Verdict verdict;
  if (set.best_peer < 0 || set.systems.empty() ||
      set.systems[results.candidate].failed) {
    return verdict;
  }
  const QualitySystemResult& peer = set.systems[set.best_peer];
  verdict.available = true;
  verdict.at_least_best_peer = peer.delta_ndcg10 <= 0;
  verdict.significantly_worse = peer.mark > 0;
  return verdict;
}

std::string Header(const QualityConfig& config, const QualityResults& results,
                   const QualityRunInfo& info) {
  std::string md = "# Ranking quality over data regimes (plrank-bench-quality)\n\n";
  absl::StrAppend(&md, "- command: `", info.command, "`\n");
  absl::StrAppend(&md, "- commit: ", info.git_commit, "; date: ", info.date,
                  "\n");
  absl::StrAppendFormat(
      &md,
      "- machine: %u CPUs, load average %.2f at start; wall time %.1f min\n",
      std::thread::hardware_concurrency(), results.load_average,
      results.wall_seconds / 60);
  absl::StrAppendFormat(
      &md,
      "- settings, the same for every system: %d leaves, learning rate %g, "
      "%d bins, %d threads per run, %d run(s) at a time; trees and minimum "
      "documents per leaf per set (below). XGBoost: hist, lossguide, "
      "max_leaves, no depth cap; it has no minimum document count per leaf "
      "(min_child_weight is a hessian sum) and keeps its default there. No "
      "early stopping; seed = the split's seed (1 on real data).\n",
      config.leaves, config.learning_rate, config.max_bin, config.num_threads,
      config.jobs);
  for (const QualitySystem& system : results.systems) {
    if (system.xgboost && !system.extra_flags.empty()) {
      absl::StrAppend(&md, "- ", system.name,
                      ": its flags (below) override those XGBoost settings\n");
    }
  }
  if (config.plrank_auto_learning_rate) {
    md +=
        "- learning rate: the PLRank variants got no --learning_rate and used "
        "plrank-train's own (auto) rate; the peers the rate above.\n";
  }
  md +=
      "- metrics: means over all test queries, pooled over folds / seeds (one "
      "value per test query). NDCG gain 2^r - 1; a query without a relevant "
      "document counts NDCG = 1 and ERR = 0; ERR's top grade is each test "
      "file's largest label. Δ and p: NDCG@10 of the row minus the "
      "candidate's, two-sided paired t-test over test queries; better / "
      "worse = significant at 95%. Training seconds are informative only.\n";
  absl::StrAppend(&md, "- candidate: **", results.systems[results.candidate].name,
                  "**\n- systems:\n");
  for (const QualitySystem& system : results.systems) {
    absl::StrAppend(
        &md, "  - ", system.name, ": `",
        system.xgboost ? "plrank-xgb-peer --objective=" : "plrank-train --objective=",
        system.objective,
        system.extra_flags.empty() ? "" : " ",
        absl::StrJoin(system.extra_flags, " "), "`\n");
  }
  for (const std::string& note : results.notes) absl::StrAppend(&md, "- note: ", note, "\n");
  return md + "\n";
}

std::string Summary(const QualityResults& results) {
  std::string md = "## Summary: NDCG@10 per set (best peer in bold)\n\n| set |";
  std::string rule = "| --- |";
  for (const QualitySystem& system : results.systems) {
    absl::StrAppend(&md, " ", system.name, " |");
    rule += " ---: |";
  }
  md += " candidate >= best peer (Δ) | not significantly worse (p) |\n";
  md += rule + " :---: | :---: |\n";
  for (const QualitySetResult& set : results.sets) {
    absl::StrAppend(&md, "| ", set.data.name, " |");
    if (!set.error.empty()) {
      for (size_t i = 0; i < results.systems.size(); ++i) md += " |";
      md += " data failed | |\n";
      continue;
    }
    for (size_t i = 0; i < set.systems.size(); ++i) {
      const QualitySystemResult& row = set.systems[i];
      if (row.failed) {
        md += " failed |";
      } else if (static_cast<int>(i) == set.best_peer) {
        absl::StrAppendFormat(&md, " **%.4f** |", row.means[kBenchNdcg10]);
      } else {
        absl::StrAppendFormat(&md, " %.4f |", row.means[kBenchNdcg10]);
      }
    }
    const Verdict verdict = Judge(results, set);
    if (!verdict.available) {
      md += " n/a | n/a |\n";
      continue;
    }
    const QualitySystemResult& peer = set.systems[set.best_peer];
    absl::StrAppendFormat(
        &md, " %s (%+.4f) | %s (p %.3g) |\n",
        verdict.at_least_best_peer ? "yes" : "no", -peer.delta_ndcg10,
        verdict.significantly_worse ? "**no**" : "yes", peer.p_value);
  }
  return md + "\n";
}

std::string SetTable(const QualityResults& results, const QualitySetResult& set) {
  std::string md = absl::StrCat("### ", set.data.name, ": ", set.data.title, "\n\n");
  if (!set.error.empty()) return absl::StrCat(md, "Data failed: ", set.error, "\n\n");
  absl::StrAppendFormat(
      &md,
      "%d split(s); train %d queries / %d documents, test %d queries / %d "
      "documents (summed over splits; %d test queries without a relevant "
      "document); %d trees, min %d documents per leaf.\n\n",
      static_cast<int>(set.data.splits.size()), set.train_queries,
      set.train_documents, set.test_queries, set.test_documents,
      set.empty_test_queries, set.trees, set.min_data_in_leaf);
  for (const std::string& note : set.data.notes) {
    absl::StrAppend(&md, "- ", note, "\n");
  }
  if (!set.data.notes.empty()) md += "\n";
  md += "| system | NDCG@1 | NDCG@3 | NDCG@10 | ERR | Δ NDCG@10 | p | vs "
        "candidate | train s |\n";
  md += "| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: |\n";
  for (size_t i = 0; i < set.systems.size(); ++i) {
    const QualitySystemResult& row = set.systems[i];
    const std::string& name = results.systems[i].name;
    if (row.failed) {
      absl::StrAppend(&md, "| ", name, " | failed: ", row.error.substr(0, 120),
                      " | | | | | | | |\n");
      continue;
    }
    const bool candidate = static_cast<int>(i) == results.candidate;
    absl::StrAppendFormat(&md, "| %s | %.4f | %.4f | %.4f | %.4f |",
                          candidate ? absl::StrCat("**", name, "** (candidate)")
                                    : name,
                          row.means[0], row.means[1], row.means[2], row.means[3]);
    if (candidate) {
      md += " | | |";
    } else {
      absl::StrAppendFormat(&md, " %+.4f | %.3g | %s |", row.delta_ndcg10,
                            row.p_value,
                            row.mark > 0 ? "better" : row.mark < 0 ? "worse" : "n.s.");
    }
    absl::StrAppendFormat(&md, " %.2f |\n", row.train_seconds);
  }
  return md + "\n";
}

nlohmann::json Number(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

}  // namespace

std::string FormatQualityReport(const QualityConfig& config,
                                const QualityResults& results,
                                const QualityRunInfo& info) {
  std::string md = Header(config, results, info) + Summary(results);
  md += "## Per set\n\n";
  for (const QualitySetResult& set : results.sets) md += SetTable(results, set);
  return md;
}

std::string QualityJson(const QualityConfig& config,
                        const QualityResults& results,
                        const QualityRunInfo& info) {
  nlohmann::json root;
  root["info"] = {{"command", info.command},
                  {"git_commit", info.git_commit},
                  {"date", info.date},
                  {"load_average", results.load_average},
                  {"wall_seconds", results.wall_seconds}};
  root["settings"] = {
      {"leaves", config.leaves},
      {"learning_rate", config.learning_rate},
      {"plrank_auto_learning_rate", config.plrank_auto_learning_rate},
      {"max_bin", config.max_bin},
      {"num_threads", config.num_threads},
      {"jobs", config.jobs},
      {"seeds", config.data.seeds},
      {"first_seed", config.data.first_seed},
      {"gen_flags", config.data.gen_flags},
      {"significance_level", config.significance_level}};
  root["candidate"] = results.systems[results.candidate].name;
  root["systems"] = nlohmann::json::array();
  for (const QualitySystem& system : results.systems) {
    root["systems"].push_back({{"name", system.name},
                               {"program", system.xgboost ? "plrank-xgb-peer"
                                                          : "plrank-train"},
                               {"objective", system.objective},
                               {"flags", system.extra_flags},
                               {"plrank_variant", system.plrank_variant}});
  }
  root["notes"] = results.notes;
  root["sets"] = nlohmann::json::array();
  for (const QualitySetResult& set : results.sets) {
    nlohmann::json out = {{"name", set.data.name}, {"title", set.data.title},
                          {"error", set.error}, {"trees", set.trees},
                          {"min_data_in_leaf", set.min_data_in_leaf},
                          {"splits", set.data.splits.size()},
                          {"train_queries", set.train_queries},
                          {"train_documents", set.train_documents},
                          {"test_queries", set.test_queries},
                          {"test_documents", set.test_documents},
                          {"empty_test_queries", set.empty_test_queries},
                          {"notes", set.data.notes}};
    const Verdict verdict = Judge(results, set);
    out["best_peer"] = set.best_peer >= 0
                           ? nlohmann::json(results.systems[set.best_peer].name)
                           : nlohmann::json(nullptr);
    out["candidate_ge_best_peer"] =
        verdict.available ? nlohmann::json(verdict.at_least_best_peer) : nullptr;
    out["candidate_significantly_worse"] =
        verdict.available ? nlohmann::json(verdict.significantly_worse) : nullptr;
    out["systems"] = nlohmann::json::array();
    for (size_t i = 0; i < set.systems.size(); ++i) {
      const QualitySystemResult& row = set.systems[i];
      nlohmann::json system = {{"name", results.systems[i].name},
                               {"failed", row.failed},
                               {"error", row.error},
                               {"train_seconds", row.train_seconds}};
      for (int m = 0; m < kNumBenchMetrics; ++m) {
        system[kBenchMetricNames[m]] = Number(row.failed ? NAN : row.means[m]);
      }
      const bool compared = !row.failed && static_cast<int>(i) != results.candidate &&
                            !set.systems[results.candidate].failed;
      system["delta_ndcg@10"] = compared ? Number(row.delta_ndcg10) : nullptr;
      system["p_value"] = compared ? Number(row.p_value) : nullptr;
      system["mark"] = row.mark > 0 ? "better" : row.mark < 0 ? "worse" : "";
      out["systems"].push_back(system);
    }
    root["sets"].push_back(out);
  }
  return root.dump(2) + "\n";
}

}  // namespace plrank::bench
