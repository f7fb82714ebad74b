#include "core/data/line_chunk_reader.h"

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/text_files.h"

namespace plrank {
namespace {

using ::plrank::testing::TempPath;
using ::plrank::testing::WriteText;

using ::testing::HasSubstr;

// Every chunk of `path` read with `chunk_bytes`; fails the test on an error.
std::vector<std::string> Chunks(const std::string& path, size_t chunk_bytes) {
  absl::StatusOr<LineChunkReader> reader =
      LineChunkReader::Open(path, chunk_bytes);
  EXPECT_TRUE(reader.ok()) << reader.status();
  std::vector<std::string> chunks;
  if (!reader.ok()) return chunks;
  while (true) {
    absl::StatusOr<std::string_view> chunk = reader->Next();
    EXPECT_TRUE(chunk.ok()) << chunk.status();
    if (!chunk.ok() || chunk->empty()) break;
    chunks.emplace_back(*chunk);
  }
  return chunks;
}

TEST(LineChunkReaderTest, ChunksAreWholeLinesAndJoinToTheFile) {
  const std::string text =
      "first line\nsecond\n\na line longer than the chunk size\nx\nlast";
  const std::string path = TempPath("chunks.txt");
  WriteText(path, text);
  for (size_t chunk_bytes : {2, 3, 7, 16, 1000}) {
    const std::vector<std::string> chunks = Chunks(path, chunk_bytes);
    std::string joined;
    for (size_t i = 0; i < chunks.size(); ++i) {
      // Every chunk but the last ends at a line break.
      if (i + 1 < chunks.size()) {
        EXPECT_EQ(chunks[i].back(), '\n') << chunk_bytes << " " << chunks[i];
      }
      joined += chunks[i];
    }
    EXPECT_EQ(joined, text) << chunk_bytes;
    // The last line has no line break: it comes alone, at the end.
    EXPECT_EQ(chunks.back(), "last") << chunk_bytes;
  }
}

TEST(LineChunkReaderTest, CountsBytesAndKnowsTheSizeOfRegularFiles) {
  const std::string path = TempPath("count.txt");
  WriteText(path, "a\nbb\nccc\n");
  absl::StatusOr<LineChunkReader> reader = LineChunkReader::Open(path, 4);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->file_size(), 9);
  std::string joined;
  while (true) {
    absl::StatusOr<std::string_view> chunk = reader->Next();
    ASSERT_TRUE(chunk.ok()) << chunk.status();
    if (chunk->empty()) break;
    joined += std::string(*chunk);
  }
  EXPECT_EQ(joined, "a\nbb\nccc\n");
  EXPECT_EQ(reader->bytes_read(), 9);
  // At the end it stays at the end.
  absl::StatusOr<std::string_view> again = reader->Next();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
}

TEST(LineChunkReaderTest, EmptyFileGivesNoChunk) {
  const std::string path = TempPath("empty-chunks.txt");
  WriteText(path, "");
  EXPECT_TRUE(Chunks(path, 8).empty());
}

TEST(LineChunkReaderTest, ReadsPipesWhoseSizeIsUnknown) {
  const std::string path = TempPath("chunks.fifo");
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "0 qid:1 1:" + std::to_string(i) + "\n";
  std::thread writer([&] { WriteText(path, text); });
  absl::StatusOr<LineChunkReader> reader = LineChunkReader::Open(path, 64);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->file_size(), -1);
  std::string joined;
  while (true) {
    absl::StatusOr<std::string_view> chunk = reader->Next();
    ASSERT_TRUE(chunk.ok()) << chunk.status();
    if (chunk->empty()) break;
    EXPECT_EQ(chunk->back(), '\n');
    joined += std::string(*chunk);
  }
  writer.join();
  EXPECT_EQ(joined, text);
}

TEST(LineChunkReaderTest, ErrorsNameThePath) {
  absl::StatusOr<LineChunkReader> absent =
      LineChunkReader::Open(TempPath("absent-chunks.txt"));
  ASSERT_FALSE(absent.ok());
  EXPECT_THAT(absent.status().message(), HasSubstr("absent-chunks.txt"));
  absl::StatusOr<LineChunkReader> directory =
      LineChunkReader::Open(::testing::TempDir());
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.status().message(), HasSubstr("is a directory"));
}

}  // namespace
}  // namespace plrank
