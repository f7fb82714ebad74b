// Checks a ForestScorer against the reference walk (random_model.h), bit
// for bit.
#ifndef PLRANK_TESTS_TESTING_SCORER_REFERENCE_H_
#define PLRANK_TESTS_TESTING_SCORER_REFERENCE_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/types/span.h"
#include "core/model/ensemble.h"
#include "core/scoring/forest_scorer.h"
#include "gtest/gtest.h"
#include "tests/testing/random_model.h"

namespace plrank::testing {

// RawScores of docs [0, docs) of `rows` with `requested` trees (0 = all),
// and Score with all trees, equal to the reference bit for bit; stops at
// the first mismatch. Single-output models.
inline void ExpectScoresMatchReference(const ForestScorer& scorer,
                                       const Ensemble& model,
                                       const std::vector<float>& rows,
                                       size_t docs, int32_t requested) {
  const size_t features = static_cast<size_t>(model.num_features);
  const auto doc_rows = absl::MakeConstSpan(rows).subspan(0, docs * features);
  std::vector<double> raw(docs);
  scorer.RawScores(doc_rows, docs, absl::MakeSpan(raw), requested);
  std::vector<double> scores(docs);
  scorer.Score(doc_rows, docs, absl::MakeSpan(scores));
  const size_t used = requested > 0
                          ? std::min<size_t>(model.trees.size(), requested)
                          : model.trees.size();
  for (size_t i = 0; i < docs; ++i) {
    const double expected = ReferenceRaw(model, &rows[i * features], 0, used);
    ASSERT_EQ(std::memcmp(&expected, &raw[i], sizeof(double)), 0)
        << "batch " << docs << " doc " << i << " trees " << used
        << ": expected " << expected << " got " << raw[i];
    const double all =
        ReferenceRaw(model, &rows[i * features], 0, model.trees.size());
    ASSERT_EQ(std::memcmp(&all, &scores[i], sizeof(double)), 0)
        << "Score, batch " << docs << " doc " << i << ": expected " << all
        << " got " << scores[i];
  }
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_SCORER_REFERENCE_H_
