#ifndef PLRANK_BENCH_QUALITY_REPORT_H_
#define PLRANK_BENCH_QUALITY_REPORT_H_

// Renders QualityResults: markdown for people (a summary table of NDCG@10
// per set and system, then one table per set) and JSON for scripts.

#include <string>

#include "bench/quality_run.h"

namespace plrank::bench {

// Where and how the results were made, printed in the report's header.
struct QualityRunInfo {
  std::string command;     // the exact command line
  std::string git_commit;  // "abc1234" or "abc1234 + uncommitted changes"
  std::string date;        // UTC, ISO 8601
};

std::string FormatQualityReport(const QualityConfig& config,
                                const QualityResults& results,
                                const QualityRunInfo& info);

// {"info", "settings", "candidate", "systems", "notes", "sets": [{"name",
// "title", "error", "trees", "min_data_in_leaf", sizes, "best_peer",
// "candidate_ge_best_peer", "candidate_significantly_worse", "notes",
// "systems": [{"name", "failed", "error", "ndcg@1", "ndcg@3", "ndcg@10",
// "err", "delta_ndcg@10", "p_value", "mark", "train_seconds"}]}]}; NaN
// and failed values are null.
std::string QualityJson(const QualityConfig& config,
                        const QualityResults& results,
                        const QualityRunInfo& info);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_QUALITY_REPORT_H_
