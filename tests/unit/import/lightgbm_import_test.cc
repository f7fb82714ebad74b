#include "core/import/lightgbm_import.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/model/ensemble.h"
#include "core/scoring/forest_scorer.h"
#include "core/model/model_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/random_model.h"
#include "tests/testing/shared_data.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

// One numerical split as LightGBM stores it.
struct Split {
  int column;
  std::string threshold;  // as written in the file
  int decision_type;
  int left;
  int right;
};

// The text of one tree block (without the "Tree=" line).
std::string TreeBlock(const std::vector<Split>& splits,
                      const std::vector<double>& leaves,
                      const std::string& extra = "") {
  std::vector<std::string> features, thresholds, types, lefts, rights, gains,
      values, counts;
  for (const Split& split : splits) {
    features.push_back(absl::StrCat(split.column));
    thresholds.push_back(split.threshold);
    types.push_back(absl::StrCat(split.decision_type));
    lefts.push_back(absl::StrCat(split.left));
    rights.push_back(absl::StrCat(split.right));
    gains.push_back("1.5");
  }
  for (double leaf : leaves) {
    values.push_back(absl::StrFormat("%.17g", leaf));
    counts.push_back("7");
  }
  return absl::StrCat(
      "num_leaves=", leaves.size(),
      "\nnum_cat=0\nsplit_feature=", absl::StrJoin(features, " "),
      "\nsplit_gain=", absl::StrJoin(gains, " "),
      "\nthreshold=", absl::StrJoin(thresholds, " "),
      "\ndecision_type=", absl::StrJoin(types, " "),
      "\nleft_child=", absl::StrJoin(lefts, " "),
      "\nright_child=", absl::StrJoin(rights, " "),
      "\nleaf_value=", absl::StrJoin(values, " "),
      "\nleaf_weight=1 1\nleaf_count=", absl::StrJoin(counts, " "), "\n", extra,
      "is_linear=0\nshrinkage=0.1\n");
}

// A whole model file over columns 0..3 (column 0 unused, as when LightGBM
// reads LETOR files) with `blocks` as its trees.
std::string ModelText(const std::vector<std::string>& blocks,
                      const std::string& extra_header = "") {
  std::vector<std::string> sizes(blocks.size(), "100");
  std::string text = absl::StrCat(
      "tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\n"
      "label_index=0\nmax_feature_idx=3\nobjective=lambdarank\n",
      extra_header,
      "feature_names=Column_0 Column_1 Column_2 Column_3\n"
      "feature_infos=none [0:1] [-2:2] [0:3]\ntree_sizes=",
      absl::StrJoin(sizes, " "), "\n\n");
  for (size_t t = 0; t < blocks.size(); ++t) {
    absl::StrAppend(&text, "Tree=", t, "\n", blocks[t], "\n\n");
  }
  absl::StrAppend(&text,
                  "end of trees\n\nfeature_importances:\nColumn_1=1\n\n"
                  "parameters:\n[boosting: gbdt]\nend of parameters\n");
  return text;
}

// LightGBM's Tree::NumericalDecision (tree.h), in double, on the file's own
// numbers: the reference the import must reproduce for float inputs.
bool LightgbmGoesLeft(double value, double threshold, int decision_type) {
  constexpr double kZeroThreshold = 1e-35f;
  const int missing = (decision_type >> 2) & 3;
  if (std::isnan(value) && missing != 2) value = 0.0;
  if ((missing == 1 && value >= -kZeroThreshold && value <= kZeroThreshold) ||
      (missing == 2 && std::isnan(value))) {
    return (decision_type & 2) != 0;
  }
  return value <= threshold;
}

// LightGBM reads inputs as text and compares doubles; PLRank holds floats.
// The double LightGBM gets for float x is the one nearest x's shortest
// decimal form, the text PLRank's writer prints and data files hold.
double AsLightgbmReadsIt(float x) {
  char text[32];
  *std::to_chars(text, text + sizeof(text) - 1, x).ptr = '\0';
  return std::strtod(text, nullptr);
}

// Thresholds around every boundary that matters: zero, the zero bound,
// values between floats, one double above a short decimal (as LightGBM
// writes them: 0.98 -> 0.98000000000000009), and ordinary ones.
// Beyond float range, "inf" (LightGBM's "every value left, NaN to the
// default side") and -inf.
const std::vector<std::string> kThresholds = {"-1.5",
                                              "-1.0000000180025095e-35",
                                              "-1e-36",
                                              "0",
                                              "-0",
                                              "1e-36",
                                              "1.0000000180025095e-35",
                                              "1e-30",
                                              "0.30000000000000004",
                                              "0.29999999999999999",
                                              "0.98000000000000009",
                                              "2",
                                              "inf",
                                              "-inf",
                                              "1e39",
                                              "-1e39",
                                              "3.4028234663852886e+38",
                                              "-3.4028234663852886e+38",
                                              "3.4028235e+38",
                                              "-3.4028235e+38",
                                              "-3.4028236e+38"};

// Inputs: NaN, both zeros, the zero bound and its neighbours, denormals,
// and each threshold with its float neighbours; all finite (or NaN), as
// readers and the server refuse infinities.
std::vector<float> ProbeValues() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float bound = kZeroAsMissingBound;
  std::vector<float> values = {std::numeric_limits<float>::quiet_NaN(),
                               0.0f,
                               -0.0f,
                               bound,
                               -bound,
                               std::nextafter(bound, kInf),
                               -std::nextafter(bound, kInf),
                               std::nextafter(bound, 0.0f),
                               -std::nextafter(bound, 0.0f),
                               std::numeric_limits<float>::denorm_min(),
                               -std::numeric_limits<float>::denorm_min(),
                               1e-36f,
                               -1e-36f,
                               std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::max()};
  for (const std::string& text : kThresholds) {
    const float t = std::strtof(text.c_str(), nullptr);
    for (float v : {t, std::nextafter(t, kInf), std::nextafter(t, -kInf)}) {
      if (std::isfinite(v)) values.push_back(v);
    }
  }
  return values;
}

// Every missing type (None, Zero, NaN) with both default directions, at every
// threshold: one stump per combination, all on column 2 (our feature 1).
// Each stump's leaves are distinct, so a single wrong branch changes the
// sum; the sums are compared with the reference bit for bit, over batches
// that take QuickScorer, and the lockstep walks.
TEST(LightgbmImportTest, EveryMissingTypeAndDefaultMatchesLightgbm) {
  std::vector<std::string> blocks;
  struct Stump {
    double threshold;
    int type;
    double left, right;
  };
  std::vector<Stump> stumps;
  for (int type : {0, 2, 4, 6, 8, 10}) {
    for (const std::string& threshold : kThresholds) {
      const double left = 1.0 / (3 + stumps.size());
      const double right = -std::sqrt(2.0 + stumps.size());
      blocks.push_back(
          TreeBlock({{2, threshold, type, -1, -2}}, {left, right}));
      stumps.push_back(
          {std::strtod(threshold.c_str(), nullptr), type, left, right});
    }
  }
  absl::StatusOr<Ensemble> model =
      ImportLightgbmModel(ModelText(blocks), "stumps.txt");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->num_features, 3);
  EXPECT_EQ(model->objective, "lightgbm:lambdarank");
  EXPECT_EQ(RequiredFormatVersion(*model), 2);
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();

  const std::vector<float> probes = ProbeValues();
  // Repeated to 8 * k + 5 documents: whole QuickScorer groups and a rest.
  std::vector<float> rows;
  std::vector<double> expected;
  for (int copy = 0; copy < 3; ++copy) {
    for (float probe : probes) {
      rows.insert(rows.end(), {0.5f, probe, 1.0f});
      double sum = 0.0;
      for (const Stump& stump : stumps) {
        sum += LightgbmGoesLeft(AsLightgbmReadsIt(probe), stump.threshold,
                                stump.type)
                   ? stump.left
                   : stump.right;
      }
      expected.push_back(sum);
    }
  }
  while (expected.size() % 8 != 5) {
    rows.insert(rows.end(), {0.5f, 0.0f, 1.0f});
    expected.push_back(expected[1]);
  }
  std::vector<double> scores(expected.size());
  scorer->Score(rows, expected.size(), absl::MakeSpan(scores));
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(scores[i], expected[i])
        << "value " << rows[3 * i + 1] << " (row " << i << ")";
  }
  // The same decisions one stump at a time, to name a wrong one.
  for (size_t t = 0; t < stumps.size(); ++t) {
    for (float probe : probes) {
      const float row[3] = {0.5f, probe, 1.0f};
      const double ours = testing::ReferenceTree(model->trees[t], 0, row);
      const bool left = LightgbmGoesLeft(AsLightgbmReadsIt(probe),
                                         stumps[t].threshold, stumps[t].type);
      EXPECT_EQ(ours, left ? stumps[t].left : stumps[t].right)
          << "decision_type " << stumps[t].type << " threshold "
          << stumps[t].threshold << " value " << probe;
    }
  }
}

// LightGBM's threshold one double above 0.98 keeps "0.98" on the left. The
// float nearest 0.98 (0.98000002) is above that double, so comparing the
// float's exact value would send it right; the import keeps it left, and
// the next float (0.98000008, text "0.9800001") right.
TEST(LightgbmImportTest, ShortDecimalsGoWhereLightgbmSendsTheirText) {
  absl::StatusOr<Ensemble> model = ImportLightgbmModel(
      ModelText(
          {TreeBlock({{1, "0.98000000000000009", 2, -1, -2}}, {1.0, 2.0})}),
      "near.txt");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->trees[0].threshold[0], 0.98f);
  const float rows[] = {0.98f, 0, 0, std::nextafter(0.98f, 1.0f), 0, 0};
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*model);
  ASSERT_TRUE(scorer.ok());
  std::vector<double> out(2);
  scorer->Score(rows, 2, absl::MakeSpan(out));
  EXPECT_EQ(out, (std::vector<double>{1.0, 2.0}));
}

TEST(LightgbmImportTest, CopiesTreesLeavesAndGainsWithoutRescaling) {
  // Node 0: column 3 <= 1.5, left node 1, right leaf 2; node 1: column 1
  // <= 0.25 (NaN left), leaves 0 and 1. shrinkage=0.1 is already in the
  // leaf values and must not be applied again.
  const std::string deep = TreeBlock(
      {{3, "1.5", 8, 1, -3}, {1, "0.25", 10, -1, -2}}, {0.5, -0.25, 2.0});
  const std::string single = absl::StrCat(
      "num_leaves=1\nnum_cat=0\nsplit_feature=\nsplit_gain=\nthreshold=\n"
      "decision_type=\nleft_child=\nright_child=\nleaf_value=0.125\n"
      "leaf_weight=0\nleaf_count=0\ninternal_value=\ninternal_weight=\n"
      "internal_count=\nis_linear=0\nshrinkage=1\n");
  absl::StatusOr<Ensemble> model =
      ImportLightgbmModel(ModelText({deep, single}), "two.txt");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->trees.size(), 2u);
  const Tree& tree = model->trees[0];
  EXPECT_EQ(tree.split_feature, (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(tree.threshold, (std::vector<float>{1.5f, 0.25f}));
  EXPECT_EQ(tree.default_left, (std::vector<uint8_t>{0, 1}));
  EXPECT_TRUE(tree.zero_as_missing.empty());
  EXPECT_EQ(tree.left_child, (std::vector<int32_t>{1, ~0}));
  EXPECT_EQ(tree.right_child, (std::vector<int32_t>{~2, ~1}));
  EXPECT_EQ(tree.leaf_value, (std::vector<double>{0.5, -0.25, 2.0}));
  EXPECT_EQ(tree.leaf_count, (std::vector<int32_t>{7, 7, 7}));
  EXPECT_EQ(tree.split_gain, (std::vector<double>{1.5, 1.5}));
  EXPECT_EQ(model->trees[1].num_leaves(), 1);
  EXPECT_EQ(model->trees[1].leaf_value, (std::vector<double>{0.125}));
  EXPECT_EQ(model->base_score, (std::vector<double>{0.0}));
  EXPECT_EQ(RequiredFormatVersion(*model), 1);
  EXPECT_EQ(model->feature_names,
            (std::vector<std::string>{"Column_1", "Column_2", "Column_3"}));
  EXPECT_EQ(model->parameters.at("source"), "lightgbm v4");
  EXPECT_EQ(model->parameters.at("lightgbm_objective"), "lambdarank");

  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*model);
  ASSERT_TRUE(scorer.ok());
  const std::vector<float> rows = {0.0f, 0, 1.0f, 1.0f, 0, 1.0f,
                                   NAN,  0, 1.0f, 0.0f, 0, 2.0f};
  std::vector<double> out(4);
  scorer->Score(rows, 4, absl::MakeSpan(out));
  EXPECT_EQ(out, (std::vector<double>{0.625, -0.125, 0.625, 2.125}));
}

TEST(LightgbmImportTest, FirstFeatureColumnZeroKeepsColumnNumbers) {
  const std::string text =
      ModelText({TreeBlock({{0, "0.5", 2, -1, -2}}, {1.0, 2.0})});
  absl::StatusOr<Ensemble> shifted = ImportLightgbmModel(text, "c0.txt");
  ASSERT_FALSE(shifted.ok());
  EXPECT_EQ(shifted.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shifted.status().message(), HasSubstr("c0.txt:"));
  EXPECT_THAT(shifted.status().message(), HasSubstr("splits on column 0"));
  EXPECT_THAT(shifted.status().message(),
              HasSubstr("--lightgbm_first_feature_column=0"));

  LightgbmImportOptions options;
  options.first_feature_column = 0;
  absl::StatusOr<Ensemble> model = ImportLightgbmModel(text, "c0.txt", options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->num_features, 4);
  EXPECT_EQ(model->trees[0].split_feature, (std::vector<int32_t>{0}));
  EXPECT_EQ(model->feature_names[0], "Column_0");
  EXPECT_EQ(model->parameters.at("lightgbm_first_feature_column"), "0");
}

void ExpectError(const std::string& text, absl::StatusCode code,
                 const std::string& fragment) {
  absl::StatusOr<Ensemble> model = ImportLightgbmModel(text, "bad.txt");
  ASSERT_FALSE(model.ok()) << fragment;
  EXPECT_EQ(model.status().code(), code) << model.status();
  EXPECT_THAT(model.status().message(), HasSubstr("bad.txt:")) << fragment;
  EXPECT_THAT(model.status().message(), HasSubstr(fragment));
}

TEST(LightgbmImportTest, RefusesWhatPlrankTreesCannotExpress) {
  const auto kUnimplemented = absl::StatusCode::kUnimplemented;
  const std::string stump = TreeBlock({{1, "0.5", 2, -1, -2}}, {1.0, 2.0});
  ExpectError(
      ModelText({absl::StrReplaceAll(stump, {{"is_linear=0", "is_linear=1"}})}),
      kUnimplemented, "linear_tree=true");
  ExpectError(ModelText({absl::StrReplaceAll(
                  stump, {{"decision_type=2", "decision_type=1"}})}),
              kUnimplemented, "categorical split");
  ExpectError(
      ModelText({absl::StrReplaceAll(stump, {{"num_cat=0", "num_cat=1"}})}),
      kUnimplemented, "categorical splits are not supported");
  ExpectError(absl::StrReplaceAll(
                  ModelText({stump}),
                  {{"num_class=1", "num_class=3"},
                   {"num_tree_per_iteration=1", "num_tree_per_iteration=3"}}),
              kUnimplemented, "single-output");
  ExpectError(ModelText({stump}, "average_output\n"), kUnimplemented,
              "average_output");
  ExpectError(
      absl::StrReplaceAll(ModelText({stump}), {{"version=v4", "version=v9"}}),
      kUnimplemented, "version=v9");
}

TEST(LightgbmImportTest, RefusesTheSharedLinearTreeFixture) {
  PLRANK_REQUIRE_SHARED_DATA("lightgbm-models/linear_tree_unsupported.txt");
  const std::string path =
      testing::SharedDataPath("lightgbm-models/linear_tree_unsupported.txt");
  absl::StatusOr<Ensemble> model = ImportLightgbmModelFile(path);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              HasSubstr(path + ":27: LightGBM model: is_linear=1: linear "
                               "trees (linear_tree=true)"));
}

TEST(LightgbmImportTest, RejectsMalformedFilesNamingTheLine) {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  const std::string stump = TreeBlock({{1, "0.5", 2, -1, -2}}, {1.0, 2.0});
  const std::string good = ModelText({stump, stump});
  ASSERT_TRUE(ImportLightgbmModel(good, "good.txt").ok());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  };
  // Not LightGBM text at all.
  ExpectError("", kInvalid, "not a LightGBM text model");
  ExpectError("{\"name\": \"tree\"}", kInvalid, "first line must be");
  // Truncated: before "end of trees", and in the middle of a tree.
  ExpectError(good.substr(0, good.find("end of trees")), kInvalid, "truncated");
  ExpectError(good.substr(0, good.find("leaf_value", good.find("Tree=1"))),
              kInvalid, "tree has no leaf_value");
  ExpectError(good.substr(0, good.find("Tree=0")), kInvalid, "truncated");
  // Bad counts.
  ExpectError(replaced("num_leaves=2", "num_leaves=3"), kInvalid,
              "bad.txt:21: LightGBM model: leaf_value has 2 entries, "
              "expected 3");
  ExpectError(replaced("threshold=0.5", "threshold=0.5 0.7"), kInvalid,
              "threshold has 2 entries, expected 1");
  ExpectError(replaced("num_leaves=2", "num_leaves=0"), kInvalid,
              "num_leaves=0");
  ExpectError(replaced("num_leaves=2", "num_leaves=99999999999999999999"),
              kInvalid, "not an integer");
  ExpectError(replaced("Column_3\n", "\n"), kInvalid,
              "feature_names has 3 entries for max_feature_idx=3");
  ExpectError(replaced("max_feature_idx=3", "max_feature_idx=2147483647"),
              kInvalid, "entries for max_feature_idx=2147483647");
  ExpectError(replaced("tree_sizes=100 100", "tree_sizes=100"), kInvalid,
              "tree_sizes lists 1 trees but the file holds 2");
  ExpectError(replaced("leaf_count=7 7", "leaf_count=7 -7"), kInvalid,
              "negative");
  // Children out of range, shared, or cyclic.
  ExpectError(replaced("left_child=-1", "left_child=5"), kInvalid,
              "node 0 has child 5, outside the 1 nodes and 2 leaves");
  ExpectError(replaced("left_child=-1", "left_child=-9"), kInvalid, "child -9");
  ExpectError(replaced("left_child=-1", "left_child=-2"), kInvalid,
              "leaf 1 is reached twice");
  ExpectError(replaced("left_child=-1", "left_child=0"), kInvalid,
              "node 0 is reached twice");
  // Non-finite and out-of-range numbers.
  for (const char* bad : {"nan", "-nan", "abc", "0.5x", ""}) {
    ExpectError(replaced("threshold=0.5", absl::StrCat("threshold=", bad)),
                kInvalid, "threshold");
  }
  for (const char* bad : {"inf", "-inf", "nan", "1e999", "abc", ""}) {
    ExpectError(replaced("leaf_value=1 2", absl::StrCat("leaf_value=1 ", bad)),
                kInvalid, "leaf_value");
  }
  ExpectError(replaced("split_gain=1.5", "split_gain=nan"), kInvalid,
              "split_gain entry 0");
  ExpectError(
      absl::StrReplaceAll(good, {{"leaf_value=1 2", "leaf_value=1 1.7e308"}}),
      kInvalid, "infinite score");
  ExpectError(replaced("split_feature=1", "split_feature=4"), kInvalid,
              "column 4, outside columns [1, 4)");
  ExpectError(replaced("split_feature=1", "split_feature=-1"), kInvalid,
              "column -1");
  ExpectError(replaced("decision_type=2", "decision_type=12"), kInvalid,
              "decision_type 12");
  ExpectError(replaced("decision_type=2", "decision_type=16"), kInvalid,
              "decision_type 16");
  ExpectError(replaced("decision_type=2", "decision_type=-2"), kInvalid,
              "decision_type -2");
  // Structure of the file.
  ExpectError(replaced("Tree=1", "Tree=7"), kInvalid,
              "Tree=7 where Tree=1 was expected");
  ExpectError(replaced("Tree=1", "Tree=one"), kInvalid, "expected \"Tree=1\"");
  ExpectError(replaced("num_cat=0\n", "num_cat=0\nnum_cat=0\n"), kInvalid,
              "\"num_cat\" appears twice");
  ExpectError(replaced("shrinkage=0.1\n", "shrinkage=0.1\ngarbage\n"), kInvalid,
              "expected key=value");
  ExpectError(replaced("version=v4\n", ""), kInvalid, "header has no version=");
  ExpectError(replaced("max_feature_idx=3", "max_feature_idx=x"), kInvalid,
              "max_feature_idx=x is not an integer");
  ExpectError(replaced("\nTree=0", "\nend of trees\nTree=0"), kInvalid,
              "no trees");
  // Text a model file cannot store (its string fields hold UTF-8 only).
  ExpectError(replaced("Column_3\n", "C\xff\n"), kInvalid,
              "bad.txt:8: LightGBM model: feature_names is not valid UTF-8 "
              "(model files store text as UTF-8)");
  ExpectError(replaced("objective=lambdarank", "objective=lambdar\xe9nk"),
              kInvalid, "bad.txt:7: LightGBM model: objective is not valid");
  EXPECT_TRUE(
      ImportLightgbmModel(replaced("Column_3\n", "caf\xc3\xa9\n"), "utf8.txt")
          .ok());
}

// Arbitrary damage never crashes the importer: every mutated file either
// imports into a model the scorer accepts or fails with a message naming it.
TEST(LightgbmImportTest, DamagedFilesFailCleanly) {
  const std::string good =
      ModelText({TreeBlock({{3, "1.5", 4, 1, -3}, {1, "0.25", 10, -1, -2}},
                           {0.5, -0.25, 2.0}),
                 TreeBlock({{2, "-0.5", 6, -1, -2}}, {1.0, 2.0})});
  std::mt19937_64 rng(99);
  const std::string alphabet = "0123456789-=. \n\r\tTreNaninf";
  int imported = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        default:
          text.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
      // push_back, not = "x": GCC 12 warns falsely (-Wrestrict) on that.
      if (text.empty()) text.push_back('x');
    }
    absl::StatusOr<Ensemble> model = ImportLightgbmModel(text, "fuzz.txt");
    if (model.ok()) {
      ++imported;
      EXPECT_TRUE(ValidateEnsemble(*model).ok());
      EXPECT_TRUE(ForestScorer::Create(*model).ok());
    } else {
      EXPECT_THAT(model.status().message(), HasSubstr("fuzz.txt:"));
    }
  }
  EXPECT_GT(imported, 0);  // harmless edits (e.g. in the parameters) import
}

TEST(LightgbmImportTest, MissingFileIsNotFound) {
  absl::StatusOr<Ensemble> model =
      ImportLightgbmModelFile("/nonexistent/model.txt");
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(model.status().message(), HasSubstr("/nonexistent/model.txt"));
}

// The fixtures LightGBM 4.6 wrote: what the import makes of each (scores
// against LightGBM's predictions are checked end to end in
// tests/e2e/convert_test.cc, through plrank-convert and plrank-eval).
TEST(LightgbmImportTest, SharedFixturesImportNodeForNode) {
  PLRANK_REQUIRE_SHARED_DATA("lightgbm-models/lambdarank_50x31.txt");
  struct Fixture {
    const char* name;
    size_t trees;
    int max_leaves;
    int format_version;
  };
  for (const Fixture& fixture :
       {Fixture{"lambdarank_50x31", 50, 31, 1},
        Fixture{"lambdarank_zero_missing_30x15", 30, 15, 2},
        Fixture{"xendcg_nan_40x63", 40, 63, 1}}) {
    absl::StatusOr<Ensemble> model =
        ImportLightgbmModelFile(testing::SharedDataPath(
            absl::StrCat("lightgbm-models/", fixture.name, ".txt")));
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->trees.size(), fixture.trees) << fixture.name;
    EXPECT_EQ(model->num_features, 300) << fixture.name;
    EXPECT_EQ(model->feature_names.front(), "Column_1") << fixture.name;
    EXPECT_EQ(RequiredFormatVersion(*model), fixture.format_version)
        << fixture.name;
    int max_leaves = 0;
    size_t zero_splits = 0;
    for (const Tree& tree : model->trees) {
      max_leaves = std::max(max_leaves, tree.num_leaves());
      for (uint8_t flag : tree.zero_as_missing) zero_splits += flag;
    }
    EXPECT_EQ(max_leaves, fixture.max_leaves) << fixture.name;
    EXPECT_EQ(zero_splits > 0, fixture.format_version == 2) << fixture.name;
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*model);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
  }
}

}  // namespace
}  // namespace plrank
