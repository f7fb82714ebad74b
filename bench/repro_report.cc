#include "bench/repro_report.h"

#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/score_evaluation.h"

namespace plrank::bench {
namespace {

// The paper's Table 3: (ratio, equivalent objectives) on Yahoo and MSLR.
struct PaperCompression {
  int m;
  double yahoo_ratio, yahoo_equivalent, mslr_ratio, mslr_equivalent;
};
constexpr PaperCompression kPaperCompression[] = {
    {3, 0.867, 2.60, 0.899, 2.70},
    {6, 0.759, 4.5, 0.807, 4.84},
    {9, 0.697, 6.27, 0.761, 6.85},
};

// The paper's Table 4: single-core hours on MSLR-WEB30K, MART = 83.
struct PaperTime {
  const char* key;
  const char* ratio;
};
constexpr PaperTime kPaperTimes[] = {
    {"mart2", "1.00"},   {"plrank1", "1.10"}, {"lambdamart", "1.22"},
    {"plrank3", "1.28"}, {"plrank6", "1.52"}, {"mcrank", "> 3.0"},
};

std::string PaperTimeRatio(const std::string& key) {
  for (const PaperTime& t : kPaperTimes) {
    if (key == t.key) return t.ratio;
  }
  return "";
}

std::string MarkOf(int mark) { return mark > 0 ? "+" : mark < 0 ? "-" : ""; }

const ReproSystemResult* Baseline(const ReproResults& results, int index) {
  return index >= 0 ? &results.systems[index] : nullptr;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  return absl::StrFormat("%.10g", value);
}

template <typename T, typename F>
std::string JsonArray(const std::vector<T>& values, F format) {
  std::vector<std::string> parts;
  for (const T& v : values) parts.push_back(format(v));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

std::string JsonMetricObject(const std::vector<double>& values) {
  std::vector<std::string> parts;
  for (int m = 0; m < kNumBenchMetrics; ++m) {
    const double v = m < static_cast<int>(values.size()) ? values[m] : NAN;
    parts.push_back(
        absl::StrCat(JsonString(kBenchMetricNames[m]), ":", JsonNumber(v)));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

double RatioToBaseline(const ReproResults& results,
                       const ReproSystemResult& row) {
  const ReproSystemResult* base = Baseline(results, results.time_baseline);
  if (base == nullptr || row.failed || base->train_seconds <= 0) return NAN;
  return row.train_seconds / base->train_seconds;
}

}  // namespace

std::string FormatReproHeader(const ReproResults& results) {
  const ReproConfig& c = results.config;
  return absl::StrFormat(
      "Data: %s (%s), %d test queries of which %d have no relevant document "
      "(they count NDCG = 1, ERR = 0). %d trees x %d leaves, learning rate %g "
      "(McRank %g x the trees; CA and l-ListMLE are linear), no early "
      "stopping, seed %d, %d threads. Load average at start %.2f on %u CPUs.\n",
      c.folds_dir, absl::StrJoin(results.fold_names, ", "),
      results.num_test_queries, results.num_empty_test_queries, c.trees,
      c.leaves, c.learning_rate, c.mcrank_trees_factor, c.seed, c.num_threads,
      results.load_average, std::thread::hardware_concurrency());
}

std::string FormatTable1(const ReproResults& results) {
  const ReproSystemResult* reference = Baseline(results, results.reference);
  std::string md = "Table 1: test metrics, mean over folds\n\n";
  md += "| system | NDCG@1 | NDCG@3 | NDCG@10 | ERR |\n";
  md += "| --- | ---: | ---: | ---: | ---: |\n";
  for (const ReproSystemResult& row : results.systems) {
    std::string label = row.system.label;
    if (&row == reference) label += " (reference)";
    if (row.failed) {
      absl::StrAppend(&md, "| ", label, " | failed | | | |\n");
      continue;
    }
    absl::StrAppend(&md, "| ", label);
    for (int m = 0; m < kNumBenchMetrics; ++m) {
      absl::StrAppendFormat(&md, " | %.4f%s", row.means[m],
                            MarkOf(row.marks[m]));
    }
    md += " |\n";
  }
  if (reference != nullptr) {
    absl::StrAppendFormat(
        &md,
        "\n+ / -: significantly better / worse than %s at %g%% (paired "
        "two-tailed t-test over all %d test queries of all folds).\n",
        reference->system.label, 100 * (1 - results.config.significance_level),
        results.num_test_queries);
  }
  for (const ReproSystemResult& row : results.systems) {
    if (row.failed)
      absl::StrAppend(&md, row.system.label, " failed: ", row.error, "\n");
  }
  return md;
}

std::string FormatTable3(const ReproResults& results) {
  if (results.compression.empty()) return "";
  std::string md = absl::StrCat(
      "Table 3: PLRank(obj=m) context compression on ",
      results.fold_names.empty() ? "" : results.fold_names.front(),
      "'s training part (distinct / total denominator contexts)\n\n");
  md +=
      "| m | ratio | equivalent objectives | ratio, plain top-K | "
      "equivalent, plain top-K | paper Yahoo | paper MSLR |\n";
  md += "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (size_t i = 0; i < results.compression.size(); i += 2) {
    const CompressionRow& ours = results.compression[i];
    const CompressionRow* plain = i + 1 < results.compression.size()
                                      ? &results.compression[i + 1]
                                      : nullptr;
    auto cells = [](const CompressionRow* row) {
      if (row == nullptr || !row->error.empty())
        return std::string("failed | failed");
      return absl::StrFormat("%.3f | %.2f", row->ratio,
                             row->equivalent_objectives);
    };
    std::string yahoo, mslr;
    for (const PaperCompression& p : kPaperCompression) {
      if (p.m != ours.permutations) continue;
      yahoo = absl::StrFormat("%.3f / %.2f", p.yahoo_ratio, p.yahoo_equivalent);
      mslr = absl::StrFormat("%.3f / %.2f", p.mslr_ratio, p.mslr_equivalent);
    }
    absl::StrAppendFormat(&md, "| %d | %s | %s | %s | %s |\n",
                          ours.permutations, cells(&ours), cells(plain), yahoo,
                          mslr);
  }
  md +=
      "\nratio = distinct / total contexts; equivalent objectives = ratio x m "
      "(the cost of obj=m in units of obj=1). Default: top-K stops at the "
      "last document above the query's lowest label; plain top-K is the "
      "paper's K = 10.\n";
  for (const CompressionRow& row : results.compression) {
    if (!row.error.empty()) {
      absl::StrAppendFormat(&md, "obj=%d failed: %s\n", row.permutations,
                            row.error);
    }
  }
  return md;
}

std::string FormatTable4(const ReproResults& results) {
  const ReproSystemResult* base = Baseline(results, results.time_baseline);
  std::string md = absl::StrFormat(
      "Table 4: training time, sum over %d fold(s) (plrank-train's "
      "train_seconds, data loading excluded)\n\n",
      results.fold_names.size());
  absl::StrAppendFormat(
      &md, "| system | trees | train s | ratio to %s | paper (MSLR) |\n",
      base != nullptr ? base->system.label : "MART");
  md += "| --- | ---: | ---: | ---: | ---: |\n";
  for (const ReproSystemResult& row : results.systems) {
    const std::string trees =
        row.system.linear ? "linear" : absl::StrCat(row.trees);
    if (row.failed) {
      absl::StrAppendFormat(&md, "| %s | %s | failed | | |\n", row.system.label,
                            trees);
      continue;
    }
    const double ratio = RatioToBaseline(results, row);
    absl::StrAppendFormat(
        &md, "| %s | %s | %.2f | %s | %s |\n", row.system.label, trees,
        row.train_seconds,
        std::isfinite(ratio) ? absl::StrFormat("%.2f", ratio) : "-",
        PaperTimeRatio(row.system.key));
  }
  if (base == nullptr) md += "\nNo MART-2 or MART-1 row: ratios need one.\n";
  return md;
}

std::string FormatReproReport(const ReproResults& results) {
  return absl::StrCat(FormatReproHeader(results), "\n", FormatTable1(results),
                      "\n", FormatTable3(results), "\n", FormatTable4(results));
}

std::string ReproJson(const ReproResults& results) {
  const ReproConfig& c = results.config;
  auto quoted = [](const std::string& s) { return JsonString(s); };
  auto number = [](double v) { return JsonNumber(v); };
  std::string json = "{\n";
  absl::StrAppend(
      &json, "\"config\":{\"folds_dir\":", JsonString(c.folds_dir),
      ",\"trees\":", c.trees, ",\"leaves\":", c.leaves,
      ",\"learning_rate\":", JsonNumber(c.learning_rate),
      ",\"mcrank_trees_factor\":", JsonNumber(c.mcrank_trees_factor),
      ",\"num_threads\":", c.num_threads, ",\"seed\":", c.seed,
      ",\"significance_level\":", JsonNumber(c.significance_level),
      ",\"obj_list\":",
      JsonArray(c.obj_list, [](int m) { return absl::StrCat(m); }), "},\n");
  absl::StrAppend(&json, "\"folds\":", JsonArray(results.fold_names, quoted),
                  ",\n");
  absl::StrAppend(
      &json, "\"num_test_queries\":", results.num_test_queries,
      ",\n\"num_empty_test_queries\":", results.num_empty_test_queries,
      ",\n\"load_average\":", JsonNumber(results.load_average), ",\n");
  const ReproSystemResult* reference = Baseline(results, results.reference);
  const ReproSystemResult* base = Baseline(results, results.time_baseline);
  absl::StrAppend(
      &json,
      "\"reference\":", reference ? JsonString(reference->system.key) : "null",
      ",\n\"time_baseline\":", base ? JsonString(base->system.key) : "null",
      ",\n");

  std::vector<std::string> rows;
  for (const ReproSystemResult& row : results.systems) {
    std::vector<double> marks(row.marks.begin(), row.marks.end());
    rows.push_back(absl::StrCat(
        "{\"system\":", JsonString(row.system.key),
        ",\"label\":", JsonString(row.system.label), ",\"trees\":", row.trees,
        ",\"failed\":", row.failed ? "true" : "false", ",\"error\":",
        JsonString(row.error), ",\"means\":", JsonMetricObject(row.means),
        ",\"p_values\":", JsonMetricObject(row.p_values),
        ",\"marks\":", JsonMetricObject(marks), ",\"fold_means\":",
        JsonArray(
            row.fold_means,
            [](const std::vector<double>& v) { return JsonMetricObject(v); }),
        "}"));
  }
  absl::StrAppend(&json, "\"table1\":[\n", absl::StrJoin(rows, ",\n"), "],\n");

  rows.clear();
  for (const CompressionRow& row : results.compression) {
    rows.push_back(absl::StrCat(
        "{\"m\":", row.permutations, ",\"stop_at_lowest_label\":",
        row.stop_at_lowest_label ? "true" : "false",
        ",\"distinct\":", row.distinct, ",\"total\":", row.total,
        ",\"ratio\":", JsonNumber(row.ratio),
        ",\"equivalent_objectives\":", JsonNumber(row.equivalent_objectives),
        ",\"error\":", JsonString(row.error), "}"));
  }
  absl::StrAppend(&json, "\"table3\":[\n", absl::StrJoin(rows, ",\n"), "],\n");

  rows.clear();
  for (const ReproSystemResult& row : results.systems) {
    rows.push_back(absl::StrCat(
        "{\"system\":", JsonString(row.system.key),
        ",\"label\":", JsonString(row.system.label),
        ",\"failed\":", row.failed ? "true" : "false",
        ",\"train_seconds\":", JsonNumber(row.train_seconds),
        ",\"fold_train_seconds\":", JsonArray(row.fold_train_seconds, number),
        ",\"ratio_to_mart\":", JsonNumber(RatioToBaseline(results, row)), "}"));
  }
  absl::StrAppend(&json, "\"table4\":[\n", absl::StrJoin(rows, ",\n"),
                  "]\n}\n");
  return json;
}

std::string ReproCsv(const ReproResults& results) {
  std::string csv = "table,row,column,value\n";
  auto add = [&csv](const std::string& table, const std::string& row,
                    const std::string& column, double value) {
    absl::StrAppend(&csv, table, ",", row, ",", column, ",",
                    std::isfinite(value) ? absl::StrFormat("%.10g", value) : "",
                    "\n");
  };
  for (const ReproSystemResult& row : results.systems) {
    if (row.failed) continue;
    for (int m = 0; m < kNumBenchMetrics; ++m) {
      add("table1", row.system.key, kBenchMetricNames[m], row.means[m]);
      add("table1", row.system.key,
          absl::StrCat(kBenchMetricNames[m], "_p_value"), row.p_values[m]);
      add("table1", row.system.key, absl::StrCat(kBenchMetricNames[m], "_mark"),
          row.marks[m]);
    }
  }
  for (const CompressionRow& row : results.compression) {
    if (!row.error.empty()) continue;
    const std::string name = absl::StrCat(
        "obj", row.permutations, row.stop_at_lowest_label ? "" : "_plain");
    add("table3", name, "distinct", row.distinct);
    add("table3", name, "total", row.total);
    add("table3", name, "ratio", row.ratio);
    add("table3", name, "equivalent_objectives", row.equivalent_objectives);
  }
  for (const ReproSystemResult& row : results.systems) {
    if (row.failed) continue;
    add("table4", row.system.key, "train_seconds", row.train_seconds);
    add("table4", row.system.key, "ratio_to_mart",
        RatioToBaseline(results, row));
  }
  return csv;
}

}  // namespace plrank::bench
