#ifndef PLRANK_FUZZ_ACCEPTED_MODEL_H_
#define PLRANK_FUZZ_ACCEPTED_MODEL_H_

// The invariants every model a reader accepts must keep, whichever reader
// accepted it (the artifact parser, the XGBoost or LightGBM importers): it
// passes ValidateEnsemble; it serializes, parses back and re-serializes to
// the same bytes; it flattens (ForestScorer::Create); an all-zero and an
// all-missing row score finite (the validator bounds every path's leaf
// sum). A violation aborts, so libFuzzer saves the input.

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/model/ensemble.h"
#include "core/scoring/forest_scorer.h"
#include "core/model/model_io.h"
#include "fuzz/fuzz_util.h"

namespace plrank::fuzz {

// `source` names the reader in the abort message ("ParseModel", "the
// XGBoost importer", ...).
inline void CheckAcceptedModel(const Ensemble& model, const char* source) {
  PLRANK_FUZZ_CHECK(ValidateEnsemble(model).ok(),
                    std::string(source) + " accepted an invalid model");
  absl::StatusOr<std::string> bytes = SerializeModel(model);
  PLRANK_FUZZ_CHECK(bytes.ok(), bytes.status().ToString());
  absl::StatusOr<Ensemble> reread = ParseModel(*bytes, "fuzz-again.pb");
  PLRANK_FUZZ_CHECK(reread.ok(), reread.status().ToString());
  absl::StatusOr<std::string> again = SerializeModel(*reread);
  PLRANK_FUZZ_CHECK(again.ok() && *again == *bytes,
                    "serialization is not stable across a round trip");

  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  PLRANK_FUZZ_CHECK(scorer.ok(), scorer.status().ToString());
  const size_t width = static_cast<size_t>(scorer->num_features());
  std::vector<float> rows(2 * width, 0.0f);
  for (size_t f = 0; f < width; ++f) rows[width + f] = NAN;
  std::vector<double> scores(2);
  scorer->Score(rows, 2, absl::MakeSpan(scores));
  PLRANK_FUZZ_CHECK(std::isfinite(scores[0]) && std::isfinite(scores[1]),
                    std::string(source) +
                        " accepted a model that scores a non-finite value");
}

}  // namespace plrank::fuzz

#endif  // PLRANK_FUZZ_ACCEPTED_MODEL_H_
