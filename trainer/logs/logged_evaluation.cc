#include "trainer/logs/logged_evaluation.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/data/letor_reader.h"
#include "core/data/line_chunk_reader.h"
#include "core/data/ranking_order.h"
#include "core/scoring/forest_scorer.h"

namespace plrank::logs {
namespace {

// Calls `line_fn(line, line_number)` for every line of a side file.
template <typename LineFn>
absl::Status ForEachLine(const std::string& path, LineFn line_fn) {
  absl::StatusOr<LineChunkReader> reader = LineChunkReader::Open(path);
  if (!reader.ok()) return reader.status();
  int64_t line_number = 0;
  while (true) {
    absl::StatusOr<std::string_view> chunk = reader->Next();
    if (!chunk.ok()) return chunk.status();
    if (chunk->empty()) return absl::OkStatus();
    absl::string_view text(chunk->data(), chunk->size());
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      ++line_number;
      if (absl::Status status = line_fn(line, line_number); !status.ok()) {
        return status;
      }
    }
  }
}

}  // namespace

absl::StatusOr<CounterfactualEstimate> EvaluateLogged(
    const std::string& joined, const Ensemble& candidate, size_t dcg_at) {
  const std::string all = joined + ".all";
  ReadOptions read_options;
  read_options.num_features = candidate.num_features;
  read_options.num_features_origin = "the candidate model's feature count";
  absl::StatusOr<Dataset> data = ReadLetorFile(all, read_options);
  if (!data.ok()) return data.status();
  const size_t n_docs = data->num_documents();
  std::vector<uint32_t> shown_at;
  shown_at.reserve(n_docs);
  absl::Status status = ForEachLine(
      all + ".position", [&](absl::string_view line, int64_t number) {
        uint32_t position = 0;
        if (!absl::SimpleAtoi(line, &position)) {
          return absl::InvalidArgumentError(absl::StrCat(
              all, ".position:", number, ": not a position: '", line, "'"));
        }
        shown_at.push_back(position);
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  std::vector<std::vector<double>> rows;
  rows.reserve(n_docs);
  status = ForEachLine(
      all + ".marginals", [&](absl::string_view line, int64_t number) {
        std::vector<double>& row = rows.emplace_back();
        for (absl::string_view token :
             absl::StrSplit(line, ' ', absl::SkipEmpty())) {
          double value = 0;
          if (!absl::SimpleAtod(token, &value) || !(value >= 0) ||
              value > 1) {
            return absl::InvalidArgumentError(
                absl::StrCat(all, ".marginals:", number,
                             ": not a probability: '", token, "'"));
          }
          row.push_back(value);
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  if (shown_at.size() != n_docs || rows.size() != n_docs) {
    return absl::InvalidArgumentError(absl::StrCat(
        all, " has ", n_docs, " documents but ", all, ".position ",
        shown_at.size(), " lines and ", all, ".marginals ", rows.size(),
        " (not written by one plrank-logs join)"));
  }
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(candidate);
  if (!scorer.ok()) return scorer.status();
  const std::vector<double> scores = scorer->ScoreDataset(*data);

  std::vector<LoggedRanking> logged(data->num_queries());
  std::vector<std::vector<uint32_t>> orders(data->num_queries());
  for (size_t q = 0; q < data->num_queries(); ++q) {
    const uint32_t begin = data->query_begin(q);
    const uint32_t end = data->query_end(q);
    const size_t n = end - begin;
    LoggedRanking& ranking = logged[q];
    ranking.num_positions = rows[begin].size();
    ranking.marginals.resize(ranking.num_positions * n);
    for (size_t d = 0; d < n; ++d) {
      const std::vector<double>& row = rows[begin + d];
      if (row.size() != ranking.num_positions) {
        return absl::InvalidArgumentError(absl::StrCat(
            all, ".marginals:", begin + d + 1, ": ", row.size(),
            " positions where its request has ", ranking.num_positions));
      }
      for (size_t j = 0; j < row.size(); ++j) {
        ranking.marginals[j * n + d] = row[j];
      }
      ranking.shown_at.push_back(shown_at[begin + d]);
      ranking.clicked.push_back(data->labels[begin + d] > 0 ? 1 : 0);
    }
    std::vector<uint32_t>& order = orders[q];
    order.resize(n);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return RanksBefore(scores[begin + a], 0, a, scores[begin + b], 0, b);
    });
  }
  return EstimateCandidate(
      logged, orders,
      dcg_at == 0 ? std::numeric_limits<size_t>::max() : dcg_at);
}

std::string FormatLoggedEstimate(const std::string& joined,
                                 const CounterfactualEstimate& estimate,
                                 size_t dcg_at) {
  const std::string dcg =
      dcg_at == 0 ? std::string("click-DCG") : absl::StrCat("click-DCG@", dcg_at);
  std::string out = absl::StrFormat(
      "%s: %zu logged rankings, %llu candidate placements\n"
      "%-34s %10s  %s\n",
      joined, estimate.rankings,
      static_cast<unsigned long long>(estimate.placements), "estimate",
      "value", "95% confidence interval");
  auto row = [&out](const std::string& name, const Interval& interval) {
    absl::StrAppendFormat(&out, "%-34s %10.5f  [%.5f, %.5f]\n", name,
                          interval.value, interval.low, interval.high);
  };
  row("logging policy clicks (observed)", estimate.logged_clicks);
  row("candidate clicks (IPS)", estimate.ips_clicks);
  row("candidate clicks (SNIPS)", estimate.snips_clicks);
  row(absl::StrCat("logging policy ", dcg, " (observed)"),
      estimate.logged_dcg);
  row(absl::StrCat("candidate ", dcg, " (IPS)"), estimate.ips_dcg);
  row(absl::StrCat("candidate ", dcg, " (SNIPS)"), estimate.snips_dcg);
  absl::StrAppendFormat(&out, "mean importance weight %.4f (1 expected)\n",
                        estimate.mean_weight);
  return out;
}

}  // namespace plrank::logs
