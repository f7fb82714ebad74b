#ifndef PLRANK_CORE_DATA_SIDE_FILES_H_
#define PLRANK_CORE_DATA_SIDE_FILES_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data/dataset.h"

namespace plrank {

// Side files of a LETOR data file D (docs/clicks-training.md is the
// contract; issue 36's join tool writes them): one value per data line of D,
// in D's order, blank lines and '#' comments skipped.
//   D.weight      float >= 0. Per document when it has as many values as D
//                 has documents; per query (in the order queries first appear
//                 in D) when it has as many values as D has queries, and D
//                 has more documents than queries. Anything else is an error.
//   D.position    integer display position >= 1 (1 = top); 0 = a candidate
//                 that was not shown (plrank-logs join's D.all.position).
//   D.propensity  float in (0, 1]: the probability that a click on the
//                 document could be observed (IPS divides by it).
//   D.marginals   k numbers in [0, 1] per line (k may differ from line to
//                 line; a line's sum <= 1): mu(d, j), the probability that
//                 the logging policy showed d at position j = 1..k
//                 (plrank-logs join's D.all.marginals).
// Explicit paths replace the "beside D" look-up; a side file found beside D
// is always read (never silently ignored).
struct SideFileOptions {
  std::string weight_file;
  std::string position_file;
  std::string propensity_file;
  std::string marginals_file;
};

enum class SideKind { kWeight, kPosition, kPropensity };

struct SideValues {
  std::vector<double> values;
  std::vector<int64_t> lines;  // 1-based line of each value
};

// Parses one side file's text; errors name `name` and the 1-based line of
// a value that is not a number or out of range for `kind`.
absl::StatusOr<SideValues> ParseSideValues(std::string_view text,
                                           const std::string& name,
                                           SideKind kind);

// Parses a D.marginals text for `documents` data lines into
// data->marginals (rows in stored order, zero-padded to the longest line);
// errors name `name` and the line.
absl::Status ParseMarginals(std::string_view text, const std::string& name,
                            Dataset* data);

// The same from rows in memory (the Python package's marginals=): row i
// holds mu(d_i, 1..k) of input document i (a shorter row is zero-padded);
// the same checks as the file, errors name `name`[row].
absl::Status AttachMarginals(const std::vector<std::vector<double>>& rows,
                             const std::string& name, Dataset* data);

// The side file ReadSideFiles consults: `given` when non-empty, else
// "<data_path><suffix>" when it exists, else "".
std::string FindSideFile(const std::string& data_path,
                         const std::string& given, const std::string& suffix);

// Reads the side files of `data_path` into data->weights / query_weights /
// positions / propensities (stored document order: data->input_line_order
// is honoured). `notes` (optional) receives one line per file read.
absl::Status ReadSideFiles(const std::string& data_path,
                           const SideFileOptions& options, Dataset* data,
                           std::vector<std::string>* notes);

// The same from values in memory (the Python package): empty = absent.
// `name` names the source in messages (e.g. "sample_weight").
absl::Status AttachSideValues(const std::vector<double>& values,
                              const std::string& name, SideKind kind,
                              bool allow_query_level, Dataset* data);

// A query's weight for metrics: its query-level weight, times the mean of
// its document weights when there are any; 1 without weights.
double QueryMetricWeight(const Dataset& data, size_t query);
// True when some query's metric weight is not 1.
bool HasQueryMetricWeights(const Dataset& data);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_SIDE_FILES_H_
