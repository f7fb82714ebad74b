// Fuzzes the XGBoost JSON model importer (core/model/xgboost_import.h:
// ImportXgboostJsonModel; plrank-convert's path). The whole input is the
// JSON text.
// Invariants: no exception escapes (libFuzzer reports an uncaught one as a
// crash); an imported model passes ValidateEnsemble, serializes, parses
// back, flattens, and scores an all-zero and an all-missing row finite.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/forest_scorer.h"
#include "core/model/model_io.h"
#include "core/model/xgboost_import.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<plrank::Ensemble> model =
      plrank::ImportXgboostJsonModel(json);
  if (!model.ok()) {
    PLRANK_FUZZ_CHECK(!model.status().message().empty(),
                      "an error without a message");
    return 0;
  }
  PLRANK_FUZZ_CHECK(plrank::ValidateEnsemble(*model).ok(),
                    "the importer returned an invalid model");
  absl::StatusOr<std::string> bytes = plrank::SerializeModel(*model);
  PLRANK_FUZZ_CHECK(bytes.ok(), bytes.status().ToString());
  absl::StatusOr<plrank::Ensemble> reread =
      plrank::ParseModel(*bytes, "imported.pb");
  PLRANK_FUZZ_CHECK(reread.ok(), reread.status().ToString());

  absl::StatusOr<plrank::ForestScorer> scorer =
      plrank::ForestScorer::Create(*model);
  PLRANK_FUZZ_CHECK(scorer.ok(), scorer.status().ToString());
  const size_t width = static_cast<size_t>(scorer->num_features());
  std::vector<float> rows(2 * width, 0.0f);
  for (size_t f = 0; f < width; ++f) rows[width + f] = NAN;
  std::vector<double> scores(2);
  scorer->Score(rows, 2, absl::MakeSpan(scores));
  PLRANK_FUZZ_CHECK(std::isfinite(scores[0]) && std::isfinite(scores[1]),
                    "an imported model scored a non-finite value");
  return 0;
}
