#ifndef PLRANK_BENCH_REPRO_REPORT_H_
#define PLRANK_BENCH_REPRO_REPORT_H_

// Renders ReproResults in the layout of the paper's tables, as markdown for
// people and as JSON / CSV for scripts.

#include <string>

#include "bench/repro_lib.h"

namespace plrank::bench {

// Settings, data and load, one paragraph.
std::string FormatReproHeader(const ReproResults& results);

// Table 1: system | NDCG@1 | NDCG@3 | NDCG@10 | ERR, means of the fold
// means; "+" / "-" after a value marks a row significantly better / worse
// than the reference row (paired two-tailed t-test over all test queries).
std::string FormatTable1(const ReproResults& results);

// Table 3: PLRank(obj=m) context compression ratio and equivalent
// objectives, for our default truncation and the paper's plain top-K, with
// the paper's Yahoo / MSLR figures where it gives them.
std::string FormatTable3(const ReproResults& results);

// Table 4: training seconds per system summed over folds and the ratio to
// MART (MART-2, the pointwise regression the paper times as "MART"), with
// the paper's MSLR-WEB30K ratios where it gives them.
std::string FormatTable4(const ReproResults& results);

// Header and the three tables.
std::string FormatReproReport(const ReproResults& results);

// Everything above as one JSON object with keys "config", "folds",
// "num_test_queries", "num_empty_test_queries", "load_average", "reference",
// "time_baseline", "table1", "table3", "table4" (NaN is written as null).
std::string ReproJson(const ReproResults& results);

// Long form, one value a line: "table,row,column,value" with a header line.
std::string ReproCsv(const ReproResults& results);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_REPRO_REPORT_H_
