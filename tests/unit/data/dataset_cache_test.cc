// The binary dataset cache must give exactly what parsing gives, be used only
// for the bytes it was built from, and treat a damaged cache file as
// untrusted input: rebuilt, never trusted, never a crash.

#include "core/data/dataset_cache.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/data/content_hash.h"
#include "core/data/letor_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/same_dataset.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/text_files.h"

namespace plrank {
namespace {

using ::plrank::testing::WriteText;

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kText[] =
    "2 qid:7 1:0.5 2:nan 3:-1 # a comment\n"
    "0 qid:7 2:4\n"
    "1 qid:9 1:1e3 3:2.5\n"
    "0 qid:7 1:8 2:9 3:10\n"  // qid 7 again: regrouped
    "1 qid:9 3:-0\n";

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/dataset_cache_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

ReadOptions Regrouping() {
  ReadOptions options;
  options.allow_noncontiguous_queries = true;
  return options;
}

using ::plrank::testing::ExpectSameDataset;

TEST(ContentHashTest, DoesNotDependOnHowTheInputIsCut) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>(i * 37 + 11);
  const uint64_t whole = HashContent(text);
  for (size_t step : {1, 3, 7, 8, 31, 32, 33, 100, 999}) {
    ContentHasher hasher;
    for (size_t at = 0; at < text.size(); at += step) {
      hasher.Update(std::string_view(text).substr(at, step));
    }
    EXPECT_EQ(hasher.Finish(), whole) << "step " << step;
  }
}

// Empty pieces (a default string_view holds a null pointer, which memcpy
// must not get: UBSan found it) change nothing, wherever they come.
TEST(ContentHashTest, EmptyPiecesChangeNothing) {
  const std::string text = "some bytes of a file, more than one block long";
  ContentHasher hasher;
  hasher.Update(std::string_view());
  hasher.Update(std::string_view(text).substr(0, 5));
  hasher.Update(std::string_view());
  hasher.Update(std::string_view(text).substr(5));
  hasher.Update(std::string_view());
  EXPECT_EQ(hasher.Finish(), HashContent(text));
  ContentHasher empty;
  empty.Update(std::string_view());
  EXPECT_EQ(empty.Finish(), HashContent(""));
}

TEST(ContentHashTest, SeesEveryByteAndTheLength) {
  const std::string text(100, 'x');
  const uint64_t base = HashContent(text);
  for (size_t at = 0; at < text.size(); ++at) {
    std::string changed = text;
    changed[at] = 'y';
    EXPECT_NE(HashContent(changed), base) << at;
  }
  // A zero byte appended must differ from the zero padding of the tail.
  EXPECT_NE(HashContent(std::string("ab")), HashContent(std::string("ab\0", 3)));
  EXPECT_NE(HashContent(""), HashContent(std::string(1, '\0')));
}

TEST(DatasetCacheTest, SecondReadComesFromTheCacheAndEqualsParsing) {
  const std::string dir = FreshDir("roundtrip");
  const std::string source = dir + "/train.txt";
  WriteText(source, kText);
  ReadStats parsed_stats;
  absl::StatusOr<Dataset> parsed =
      ReadLetorFile(source, Regrouping(), &parsed_stats);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_FALSE(parsed->input_line_order.empty());

  absl::StatusOr<CachedDataset> first =
      ReadLetorFileCached(source, Regrouping(), "");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->from_cache);
  EXPECT_THAT(first->note, StartsWith("wrote " + source + ".plrank.bin"));
  EXPECT_TRUE(std::filesystem::exists(source + ".plrank.bin"));
  ExpectSameDataset(first->data, *parsed);

  absl::StatusOr<CachedDataset> second =
      ReadLetorFileCached(source, Regrouping(), "");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->note, "read " + source + ".plrank.bin");
  ExpectSameDataset(second->data, *parsed);
  EXPECT_EQ(second->stats.lines, parsed_stats.lines);
  EXPECT_EQ(second->stats.bytes, parsed_stats.bytes);
  EXPECT_EQ(second->stats.missing_values, parsed_stats.missing_values);
  EXPECT_EQ(second->stats.source_checksum, HashContent(kText));
}

TEST(DatasetCacheTest, MatchesParsingOnRealLetorFiles) {
  for (const char* name :
       {"MQ2008/S1.txt", "lightgbm-example/rank.train"}) {
    PLRANK_REQUIRE_SHARED_DATA(name);
    const std::string shared = testing::SharedDataPath(name);
    const std::string dir = FreshDir("real");
    absl::StatusOr<Dataset> parsed = ReadLetorFile(shared, ReadOptions());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    // The shared directory is read-only: the cache goes to `dir`.
    ASSERT_TRUE(ReadLetorFileCached(shared, ReadOptions(), dir).ok());
    absl::StatusOr<CachedDataset> cached =
        ReadLetorFileCached(shared, ReadOptions(), dir);
    ASSERT_TRUE(cached.ok()) << cached.status();
    EXPECT_TRUE(cached->from_cache) << name << ": " << cached->note;
    ExpectSameDataset(cached->data, *parsed);
  }
}

TEST(DatasetCacheTest, AnyChangeToTheSourceRebuildsTheCache) {
  const std::string dir = FreshDir("stale");
  const std::string source = dir + "/train.txt";
  WriteText(source, kText);
  ASSERT_TRUE(ReadLetorFileCached(source, Regrouping(), "").ok());
  // Same size, one digit changed.
  std::string changed = kText;
  changed[changed.find("0.5")] = '9';
  WriteText(source, changed);
  absl::StatusOr<CachedDataset> reread =
      ReadLetorFileCached(source, Regrouping(), "");
  ASSERT_TRUE(reread.ok()) << reread.status();
  EXPECT_FALSE(reread->from_cache);
  EXPECT_THAT(reread->note, HasSubstr("the source changed"));
  EXPECT_EQ(reread->data.value(0, 0), 9.5f);
  absl::StatusOr<CachedDataset> again =
      ReadLetorFileCached(source, Regrouping(), "");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->data.value(0, 0), 9.5f);
}

TEST(DatasetCacheTest, OtherReadingOptionsRebuildTheCache) {
  const std::string dir = FreshDir("options");
  const std::string source = dir + "/train.txt";
  WriteText(source, kText);
  ASSERT_TRUE(ReadLetorFileCached(source, Regrouping(), "").ok());
  ReadOptions wider = Regrouping();
  wider.num_features = 5;
  absl::StatusOr<CachedDataset> reread =
      ReadLetorFileCached(source, wider, "");
  ASSERT_TRUE(reread.ok()) << reread.status();
  EXPECT_FALSE(reread->from_cache);
  EXPECT_THAT(reread->note, HasSubstr("other reading options"));
  EXPECT_EQ(reread->data.num_features, 5);
}

TEST(DatasetCacheTest, AChangedGroupFileRebuildsTheCache) {
  const std::string dir = FreshDir("groups");
  const std::string source = dir + "/rank.train";
  WriteText(source, "1 1:1\n0 1:2\n2 1:3\n0 1:4\n");
  WriteText(source + ".query", "2\n2\n");
  ASSERT_TRUE(ReadLetorFileCached(source, ReadOptions(), "").ok());
  WriteText(source + ".query", "1\n3\n");
  absl::StatusOr<CachedDataset> reread =
      ReadLetorFileCached(source, ReadOptions(), "");
  ASSERT_TRUE(reread.ok()) << reread.status();
  EXPECT_FALSE(reread->from_cache);
  EXPECT_EQ(reread->data.query_offsets, (std::vector<uint32_t>{0, 1, 4}));
}

// Each damage is detected, the data still equals parsing, and the cache is
// written afresh.
TEST(DatasetCacheTest, ADamagedCacheIsRebuiltNeverTrusted) {
  const std::string dir = FreshDir("damaged");
  const std::string source = dir + "/train.txt";
  const std::string cache = source + ".plrank.bin";
  WriteText(source, kText);
  absl::StatusOr<Dataset> parsed = ReadLetorFile(source, Regrouping());
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(ReadLetorFileCached(source, Regrouping(), "").ok());
  const std::string good = ReadBytes(cache);
  ASSERT_GT(good.size(), 120u);

  struct Damage {
    std::string name;
    std::string bytes;
    std::string expected_reason;
  };
  std::vector<Damage> damages;
  damages.push_back({"empty", "", "not a PLRank dataset cache"});
  damages.push_back({"truncated", good.substr(0, good.size() - 9),
                     "do not match its size"});
  std::string flipped = good;
  flipped[good.size() - 20] ^= 0x40;  // inside the feature values
  damages.push_back({"flipped feature byte", flipped, "checksum"});
  std::string huge = good;
  // num_documents (after magic 8, version/byte order 8, 4 x 8 fingerprint,
  // num_features 8) set to 2^32 - 1: a size the file does not hold.
  const size_t num_documents_at = 8 + 8 + 32 + 8;
  const uint64_t many = 0xffffffffULL;
  std::memcpy(huge.data() + num_documents_at, &many, sizeof(many));
  damages.push_back({"huge document count", huge, "do not match its size"});
  damages.push_back({"text", std::string(good.size(), 'x'),
                     "not a PLRank dataset cache"});
  std::string future = good;
  future[8] = 9;  // format version 9
  damages.push_back({"future version", future, "not a PLRank dataset cache"});

  for (const Damage& damage : damages) {
    WriteText(cache, damage.bytes);
    absl::StatusOr<CachedDataset> reread =
        ReadLetorFileCached(source, Regrouping(), "");
    ASSERT_TRUE(reread.ok()) << damage.name << ": " << reread.status();
    EXPECT_FALSE(reread->from_cache) << damage.name;
    EXPECT_THAT(reread->note, HasSubstr(damage.expected_reason)) << damage.name;
    ExpectSameDataset(reread->data, *parsed);
    EXPECT_EQ(ReadBytes(cache), good) << damage.name << ": not rewritten";
  }
}

TEST(DatasetCacheTest, AnUnwritableCacheIsANoteNotAnError) {
  const std::string dir = FreshDir("unwritable");
  const std::string source = dir + "/train.txt";
  WriteText(source, kText);
  // A directory below a regular file can never be made.
  absl::StatusOr<CachedDataset> read =
      ReadLetorFileCached(source, Regrouping(), source + "/cache");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->from_cache);
  EXPECT_THAT(read->note, HasSubstr("cannot write the dataset cache"));
  EXPECT_THAT(read->note, HasSubstr("cannot make the directory"));
  EXPECT_EQ(read->data.num_documents(), 5u);
}

TEST(DatasetCacheTest, AMissingCacheDirectoryIsMade) {
  const std::string dir = FreshDir("missing_cache_dir");
  const std::string source = dir + "/train.txt";
  WriteText(source, kText);
  const std::string cache_dir = dir + "/not/yet/there";
  absl::StatusOr<CachedDataset> first =
      ReadLetorFileCached(source, Regrouping(), cache_dir);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(first->note, HasSubstr("wrote " + cache_dir + "/"));
  absl::StatusOr<CachedDataset> second =
      ReadLetorFileCached(source, Regrouping(), cache_dir);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->from_cache) << second->note;
  ExpectSameDataset(second->data, first->data);
}

TEST(DatasetCacheTest, ParseErrorsStillNameFileAndLine) {
  const std::string dir = FreshDir("errors");
  const std::string source = dir + "/bad.txt";
  WriteText(source, "1 qid:1 1:1\n0 qid:1 1:x\n");
  absl::StatusOr<CachedDataset> read =
      ReadLetorFileCached(source, ReadOptions(), "");
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(std::string(read.status().message()), HasSubstr(source + ":2"));
  EXPECT_FALSE(std::filesystem::exists(source + ".plrank.bin"));
  EXPECT_FALSE(
      ReadLetorFileCached(dir + "/absent.txt", ReadOptions(), "").ok());
}

TEST(DatasetCacheTest, CacheDirectoryNamesDifferPerSourcePath) {
  const std::string a = DatasetCachePath("/data/a/train.txt", "/cache");
  const std::string b = DatasetCachePath("/data/b/train.txt", "/cache");
  EXPECT_THAT(a, StartsWith("/cache/train.txt."));
  EXPECT_THAT(a, ::testing::EndsWith(".plrank.bin"));
  EXPECT_NE(a, b);
  EXPECT_EQ(DatasetCachePath("x/train.txt", ""), "x/train.txt.plrank.bin");
}

}  // namespace
}  // namespace plrank
