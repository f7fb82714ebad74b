#include "core/model/model_io.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model/checksum.h"
#include "core/scoring/forest_scorer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plrank/v1/model.pb.h"
#include "tests/testing/random_model.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ModelIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/model_io_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    std::mt19937_64 rng(42);
    model_ = testing::RandomEnsemble(rng, 20, 15, 12);
    model_.linear_weights.assign(12, 0.0);
    model_.linear_weights[3] = 0.5;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  static std::string ReadBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }
  static void WriteBytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  std::vector<std::string> DirectoryEntries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  // Re-wraps a mutated payload with a correct checksum, so only the
  // structural validation can reject it.
  static std::string Rewrap(const v1::Model& payload, uint32_t version) {
    v1::ModelFile file;
    file.set_format_version(version);
    file.set_payload(payload.SerializeAsString());
    file.set_checksum(Fnv1a64(file.payload()));
    file.set_checksum_algorithm(std::string(kChecksumAlgorithm));
    return file.SerializeAsString();
  }
  v1::Model PayloadOf(const Ensemble& model) const {
    absl::StatusOr<std::string> bytes = SerializeModel(model);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    v1::ModelFile file;
    EXPECT_TRUE(file.ParseFromString(*bytes));
    v1::Model payload;
    EXPECT_TRUE(payload.ParseFromString(file.payload()));
    return payload;
  }

  std::string dir_;
  Ensemble model_;
};

TEST_F(ModelIoTest, SerializeParseRoundTripIsIdentical) {
  absl::StatusOr<std::string> bytes = SerializeModel(model_);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<Ensemble> parsed = ParseModel(*bytes, "memory");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  testing::ExpectSameEnsemble(model_, *parsed);

  // Deterministic bytes: serializing the parsed model reproduces them.
  absl::StatusOr<std::string> again = SerializeModel(*parsed);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*bytes, *again);

  absl::StatusOr<ForestScorer> a = ForestScorer::Create(model_);
  absl::StatusOr<ForestScorer> b = ForestScorer::Create(*parsed);
  ASSERT_TRUE(a.ok() && b.ok());
  std::mt19937_64 rng(7);
  const size_t docs = 200;
  std::vector<float> rows = testing::RandomRows(rng, docs, 12);
  std::vector<double> sa(docs), sb(docs);
  a->Score(rows, docs, absl::MakeSpan(sa));
  b->Score(rows, docs, absl::MakeSpan(sb));
  EXPECT_EQ(sa, sb);
}

// FNV-1a 64 reference values (the algorithm's published test vectors), and
// the continuing form the sharded dataset digest uses.
TEST(ChecksumTest, Fnv1a64MatchesReferenceValuesAndContinues) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(Fnv1a64("", kFnv1a64Basis), Fnv1a64(""));
  EXPECT_EQ(Fnv1a64("bar", Fnv1a64("foo")), Fnv1a64("foobar"));
}

TEST_F(ModelIoTest, ParseModelFileReportsTheVerifiedEnvelope) {
  absl::StatusOr<std::string> bytes = SerializeModel(model_);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  v1::ModelFile envelope;
  ASSERT_TRUE(envelope.ParseFromString(*bytes));
  absl::StatusOr<ParsedModelFile> parsed = ParseModelFile(*bytes, "memory");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->checksum, envelope.checksum());
  EXPECT_EQ(parsed->checksum, Fnv1a64(envelope.payload()));
  EXPECT_EQ(parsed->format_version, envelope.format_version());
  testing::ExpectSameEnsemble(model_, parsed->model);
  // Same refusals as ParseModel.
  std::string corrupt = *bytes;
  corrupt[corrupt.size() / 2] ^= 0x40;
  EXPECT_FALSE(ParseModelFile(corrupt, "flipped").ok());
}

TEST_F(ModelIoTest, MultiOutputRoundTrip) {
  std::mt19937_64 rng(3);
  Ensemble model = testing::RandomEnsemble(rng, 4, 8, 5, /*num_outputs=*/3);
  absl::StatusOr<std::string> bytes = SerializeModel(model);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<Ensemble> parsed = ParseModel(*bytes, "memory");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  testing::ExpectSameEnsemble(model, *parsed);
}

// Version 1 stays the stamp of every model that does not use a newer
// feature, so builds that only read version 1 keep reading them; a model
// that treats zero as missing is stamped 2 and round-trips exactly.
TEST_F(ModelIoTest, FormatVersionIsTheLowestThatExpressesTheModel) {
  auto stamped_version = [](const std::string& bytes) {
    v1::ModelFile file;
    EXPECT_TRUE(file.ParseFromString(bytes));
    v1::Model payload;
    EXPECT_TRUE(payload.ParseFromString(file.payload()));
    EXPECT_EQ(payload.format_version(), file.format_version());
    return file.format_version();
  };
  absl::StatusOr<std::string> plain = SerializeModel(model_);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(stamped_version(*plain), 1u);
  EXPECT_EQ(RequiredFormatVersion(model_), 1);

  // All-zero flags express nothing new: still version 1.
  Ensemble unflagged = model_;
  for (Tree& tree : unflagged.trees) {
    tree.zero_as_missing.assign(tree.num_internal_nodes(), 0);
  }
  absl::StatusOr<std::string> unflagged_bytes = SerializeModel(unflagged);
  ASSERT_TRUE(unflagged_bytes.ok());
  EXPECT_EQ(*unflagged_bytes, *plain);

  Ensemble flagged = model_;
  std::mt19937_64 rng(11);
  testing::AddZeroAsMissing(rng, 0.5, &flagged);
  for (Tree& tree : flagged.trees) {
    // The artifact stores a tree's flags only when one is set.
    if (std::none_of(tree.zero_as_missing.begin(), tree.zero_as_missing.end(),
                     [](uint8_t flag) { return flag != 0; })) {
      tree.zero_as_missing.clear();
    }
  }
  EXPECT_EQ(RequiredFormatVersion(flagged), 2);
  absl::StatusOr<std::string> bytes = SerializeModel(flagged);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(stamped_version(*bytes), 2u);
  absl::StatusOr<Ensemble> parsed = ParseModel(*bytes, "memory");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  testing::ExpectSameEnsemble(flagged, *parsed);
  EXPECT_THAT(DumpModel(flagged), HasSubstr("format version 2"));
  EXPECT_THAT(DumpModel(flagged), HasSubstr("missing or zero -> "));
  EXPECT_THAT(DumpModel(model_), HasSubstr("format version 1"));

  // Stamped 1 but using the version-2 field: a version-1 build would ignore
  // the flags and mis-score, so the file is refused.
  v1::ModelFile file;
  ASSERT_TRUE(file.ParseFromString(*bytes));
  v1::Model payload;
  ASSERT_TRUE(payload.ParseFromString(file.payload()));
  payload.set_format_version(1);
  WriteBytes(Path("old_stamp.pb"), Rewrap(payload, 1));
  absl::StatusOr<Ensemble> read = ReadModelFile(Path("old_stamp.pb"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.status().message(), HasSubstr("old_stamp.pb"));
  EXPECT_THAT(read.status().message(), HasSubstr("needs format version 2"));
}

TEST_F(ModelIoTest, FileRoundTripLeavesNoTempFiles) {
  const std::string path = Path("model.pb");
  ASSERT_TRUE(WriteModelFile(model_, path).ok());
  // Overwrite in place: the rename replaces the previous file.
  ASSERT_TRUE(WriteModelFile(model_, path).ok());
  EXPECT_THAT(DirectoryEntries(), ::testing::ElementsAre("model.pb"));
  absl::StatusOr<Ensemble> read = ReadModelFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  testing::ExpectSameEnsemble(model_, *read);
}

TEST_F(ModelIoTest, MissingFileIsNotFoundAndNamed) {
  absl::StatusOr<Ensemble> read = ReadModelFile(Path("absent.pb"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr("absent.pb"));
}

TEST_F(ModelIoTest, EmptyAndGarbageFilesAreRejected) {
  WriteBytes(Path("empty.pb"), "");
  absl::StatusOr<Ensemble> empty = ReadModelFile(Path("empty.pb"));
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(empty.status().message(), HasSubstr("empty.pb"));
  EXPECT_THAT(empty.status().message(), HasSubstr("empty"));

  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    std::string garbage(1 + rng() % 300, '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    WriteBytes(Path("garbage.pb"), garbage);
    absl::StatusOr<Ensemble> read = ReadModelFile(Path("garbage.pb"));
    EXPECT_FALSE(read.ok()) << "trial " << trial;
    EXPECT_THAT(read.status().message(), HasSubstr("garbage.pb"));
  }
  WriteBytes(Path("text.pb"), "this is not a model\n");
  EXPECT_FALSE(ReadModelFile(Path("text.pb")).ok());
}

TEST_F(ModelIoTest, TruncatedFilesAreRejectedAtEveryLength) {
  const std::string path = Path("model.pb");
  ASSERT_TRUE(WriteModelFile(model_, path).ok());
  const std::string bytes = ReadBytes(path);
  ASSERT_GT(bytes.size(), 100u);
  // Every prefix length near both ends plus a sweep through the middle.
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 64; ++n) lengths.push_back(n);
  for (size_t n = 64; n < bytes.size(); n += 37) lengths.push_back(n);
  for (size_t n = bytes.size() - 32; n < bytes.size(); ++n) lengths.push_back(n);
  for (size_t length : lengths) {
    WriteBytes(Path("cut.pb"), bytes.substr(0, length));
    absl::StatusOr<Ensemble> read = ReadModelFile(Path("cut.pb"));
    ASSERT_FALSE(read.ok()) << "length " << length;
    EXPECT_THAT(read.status().message(), HasSubstr("cut.pb"));
  }
}

TEST_F(ModelIoTest, FlippedPayloadByteFailsChecksum) {
  absl::StatusOr<std::string> bytes = SerializeModel(model_);
  ASSERT_TRUE(bytes.ok());
  // Bytes well inside the payload (the envelope header is a few bytes).
  for (size_t offset : {size_t{20}, bytes->size() / 2, bytes->size() - 40}) {
    std::string corrupt = *bytes;
    corrupt[offset] ^= 0x04;
    absl::StatusOr<Ensemble> read = ParseModel(corrupt, "flipped");
    ASSERT_FALSE(read.ok()) << "offset " << offset;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(read.status().message(), HasSubstr("checksum mismatch"));
  }
}

TEST_F(ModelIoTest, UnknownFormatVersionNamesBothVersions) {
  WriteBytes(Path("future.pb"), Rewrap(PayloadOf(model_), 7));
  absl::StatusOr<Ensemble> read = ReadModelFile(Path("future.pb"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(read.status().message(), HasSubstr("future.pb"));
  EXPECT_THAT(read.status().message(), HasSubstr("version 7"));
  EXPECT_THAT(read.status().message(),
              HasSubstr(absl::StrCat("reads versions ",
                                     kOldestModelFormatVersion, " to ",
                                     kModelFormatVersion)));
}

TEST_F(ModelIoTest, ValidChecksumButInvalidStructureIsRejected) {
  struct Case {
    const char* name;
    void (*mutate)(v1::Model*);
    const char* expected;
  };
  const Case cases[] = {
      {"child out of range",
       [](v1::Model* m) { m->mutable_trees(2)->set_left_child(0, 999); },
       "tree 2 node 0"},
      {"cycle",
       [](v1::Model* m) {
         v1::Tree* tree = m->mutable_trees(3);
         // Point some child back at the root.
         if (tree->right_child(0) >= 0) {
           tree->set_right_child(tree->right_child(0), 0);
         } else {
           tree->set_right_child(0, 0);
         }
       },
       "tree 3 node"},
      {"feature out of range",
       [](v1::Model* m) { m->mutable_trees(4)->set_split_feature(0, 12); },
       "split feature 12"},
      {"NaN leaf",
       [](v1::Model* m) {
         m->mutable_trees(5)->set_leaf_value(0, std::nan(""));
       },
       "not finite"},
      {"outputs inconsistent with transform",
       [](v1::Model* m) { m->set_num_outputs(3); },
       "transform"},
      {"tree count not whole iterations",
       [](v1::Model* m) {
         m->set_num_outputs(3);
         m->set_transform(v1::SCORE_TRANSFORM_EXPECTED_RELEVANCE);
         m->clear_base_score();
         m->clear_linear_weights();
       },
       "not a multiple"},
      {"unknown transform",
       [](v1::Model* m) { m->set_transform(static_cast<v1::ScoreTransform>(9)); },
       "unknown score transform"},
  };
  for (const Case& c : cases) {
    // Large enough trees that node 0 has an internal child.
    Ensemble model = model_;
    for (Tree& tree : model.trees) {
      if (tree.num_internal_nodes() < 3) {
        std::mt19937_64 rng(5);
        tree = testing::RandomTree(rng, 6, 12);
      }
    }
    v1::Model payload = PayloadOf(model);
    c.mutate(&payload);
    WriteBytes(Path("bad.pb"), Rewrap(payload, payload.format_version()));
    absl::StatusOr<Ensemble> read = ReadModelFile(Path("bad.pb"));
    ASSERT_FALSE(read.ok()) << c.name;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument)
        << c.name;
    EXPECT_THAT(read.status().message(), HasSubstr("bad.pb")) << c.name;
    EXPECT_THAT(read.status().message(), HasSubstr(c.expected)) << c.name;
  }
}

TEST_F(ModelIoTest, FailedWritesKeepOldFileAndLeaveNoTemp) {
  const std::string path = Path("model.pb");
  ASSERT_TRUE(WriteModelFile(model_, path).ok());
  const std::string good = ReadBytes(path);

  // An invalid model is refused before anything touches the disk.
  Ensemble invalid = model_;
  invalid.trees[0].leaf_value[0] = std::nan("");
  absl::Status status = WriteModelFile(invalid, path);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("model.pb"));
  EXPECT_EQ(ReadBytes(path), good);

  // Rename onto a non-empty directory fails after the temp file was written.
  std::filesystem::create_directory(Path("occupied"));
  WriteBytes(Path("occupied/keep"), "x");
  status = WriteModelFile(model_, Path("occupied"));
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("occupied"));

  // A nonexistent directory.
  status = WriteModelFile(model_, Path("no/such/dir/model.pb"));
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("no/such/dir/model.pb"));

  std::vector<std::string> entries = DirectoryEntries();
  std::sort(entries.begin(), entries.end());
  EXPECT_THAT(entries, ::testing::ElementsAre("model.pb", "occupied"));
  EXPECT_EQ(ReadBytes(path), good);
}

TEST_F(ModelIoTest, DumpMentionsEveryTreeAndHeader) {
  const std::string dump = DumpModel(model_);
  EXPECT_THAT(dump, HasSubstr("objective: plrank"));
  EXPECT_THAT(dump, HasSubstr("learning_rate = 0.1"));
  EXPECT_THAT(dump, HasSubstr("best iteration 10"));
  for (size_t t = 0; t < model_.trees.size(); ++t) {
    EXPECT_THAT(dump, HasSubstr(absl::StrCat("tree ", t, " (")));
    // Every leaf of every tree is printed once.
    const Tree& tree = model_.trees[t];
    EXPECT_EQ(tree.num_leaves(), tree.num_internal_nodes() + 1);
  }
  size_t leaf_lines = 0;
  for (size_t pos = dump.find("leaf "); pos != std::string::npos;
       pos = dump.find("leaf ", pos + 1)) {
    ++leaf_lines;
  }
  size_t total_leaves = 0;
  for (const Tree& tree : model_.trees) total_leaves += tree.num_leaves();
  EXPECT_EQ(leaf_lines, total_leaves);
  EXPECT_THAT(dump, HasSubstr("feature_3"));
}

TEST_F(ModelIoTest, SerializeRefusesInvalidModel) {
  Ensemble model = model_;
  model.trees.clear();
  model.linear_weights.clear();
  EXPECT_FALSE(SerializeModel(model).ok());
}

}  // namespace
}  // namespace plrank
