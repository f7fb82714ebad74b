// plrank-datagen's regime flags as scripts call them: default bytes are
// unchanged, a --regime preset is applied with explicit flags on top, the
// summary line reports the set's shape, bad shares fail with a message.
#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;

uint64_t Fnv1a64(const std::string& bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

TEST(DatagenCli, DefaultFlagsKeepTheirBytes) {
  TempDir dir;
  const CommandResult gen =
      RunCommand({BinPath("plrank-datagen"), "--queries=30", "--mean_docs=25",
                  "--out=" + dir.File("d.txt")});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  // The same known answer as tests/unit/data/datagen_test.cc, recorded
  // before the regime flags existed.
  const std::string text = ReadWholeFile(dir.File("d.txt"));
  EXPECT_EQ(text.size(), 1313649u);
  EXPECT_EQ(Fnv1a64(text), 13171003306209151462u);
  EXPECT_THAT(gen.out, HasSubstr("regime mslr: 30 queries"));
}

TEST(DatagenCli, RegimeWithExplicitOverrides) {
  TempDir dir;
  const CommandResult gen = RunCommand(
      {BinPath("plrank-datagen"), "--regime=many_relevant", "--queries=40",
       "--features=7", "--label_shares=0.5,0.5", "--out=" + dir.File("d.txt")});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_THAT(gen.out, HasSubstr("regime many_relevant: 40 queries"));
  EXPECT_THAT(gen.out, HasSubstr("label shares 0.500/0.500"));
  EXPECT_THAT(gen.out, HasSubstr("7 features"));
  // The preset's ~150 documents per query stay.
  EXPECT_THAT(gen.out, HasSubstr("docs/query mean 1"));
  const std::string text = ReadWholeFile(dir.File("d.txt"));
  EXPECT_THAT(text, HasSubstr(" 7:"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr(" 8:")));
}

TEST(DatagenCli, TieLevelsAndSummary) {
  TempDir dir;
  const CommandResult gen = RunCommand(
      {BinPath("plrank-datagen"), "--regime=sparse", "--queries=100",
       "--tie_levels=2", "--out_prefix=" + dir.File("s")});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_THAT(gen.out, HasSubstr("relevant per query mean"));
  EXPECT_THAT(gen.out, HasSubstr("with 0-2 relevant"));
  // Two prototypes per query: every document of more than two repeats one.
  EXPECT_THAT(gen.out, HasSubstr("duplicate vectors 100.0%"));
  EXPECT_THAT(gen.out, HasSubstr("wrote " + dir.File("s") + ".test"));
}

TEST(DatagenCli, BadOptionsFailWithAMessage) {
  TempDir dir;
  for (const std::string& bad :
       {std::string("--label_shares=0.5,0.4"), std::string("--label_shares=x"),
        std::string("--regime=ohsumed"), std::string("--docs_sigma=-1"),
        std::string("--query_offset_share=1"), std::string("--tie_levels=-2"),
        std::string("--hopeless_share=2")}) {
    const CommandResult gen = RunCommand(
        {BinPath("plrank-datagen"), "--queries=10", bad,
         "--out=" + dir.File("d.txt")});
    EXPECT_NE(gen.exit_code, 0) << bad;
    EXPECT_THAT(gen.err, HasSubstr("error")) << bad;
  }
}

}  // namespace
}  // namespace plrank
