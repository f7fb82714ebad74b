// WriteFileAtomically, the one writer of every output file: it replaces
// regular files whole and refuses targets that are not regular files.
#include "core/data/file_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/file-io-XXXXXX";
    dir_ = mkdtemp(pattern.data());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string Read(const std::string& path) const {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

TEST_F(FileIoTest, CreatesAndReplacesRegularFilesWithNoTemporaryLeft) {
  const std::string path = Path("out.txt");
  ASSERT_TRUE(WriteFileAtomically(path, "first\n").ok());
  EXPECT_EQ(Read(path), "first\n");
  ASSERT_TRUE(WriteFileAtomically(path, "second\n").ok());
  EXPECT_EQ(Read(path), "second\n");
  // A symlink to a regular file is a regular target (the link is replaced).
  std::filesystem::create_symlink(path, Path("link"));
  ASSERT_TRUE(WriteFileAtomically(Path("link"), "third\n").ok());
  EXPECT_EQ(Read(Path("link")), "third\n");
  EXPECT_THAT(Entries(), ::testing::ElementsAre("link", "out.txt"));
}

// Issue 39 item 11: a writer killed between creating and renaming its
// temporary left `<path>.tmp.<pid>.<random>` forever. The next write of the
// same path removes those no live writer holds (flock); a temporary a live
// writer holds, other files' temporaries and look-alike names stay.
TEST_F(FileIoTest, RemovesTemporariesOfDeadWritersOnly) {
  const std::string path = Path("model.pb");
  const auto create = [&](const std::string& name) {
    std::ofstream(Path(name)) << "partial";
  };
  create("model.pb.tmp.123.00000000deadbeef");     // a dead writer's
  create("model.pb.tmp.4567890.0123456789abcdef");  // another dead one
  create("model.pb.tmp.12.0123456789ABCDEF");      // not our form (upper case)
  create("model.pb.tmp.12.0123456789abcde");       // not our form (15 digits)
  create("model.pb.tmp.x.0123456789abcdef");       // not our form
  create("other.pb.tmp.123.00000000deadbeef");     // another target's
  // A live writer's: the lock is taken through another open file
  // description, as another process's would be.
  create("model.pb.tmp.99.feedfacefeedface");
  const int held = ::open(Path("model.pb.tmp.99.feedfacefeedface").c_str(),
                          O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  std::filesystem::create_directory(Path("model.pb.tmp.7.abcdefabcdefabcd"));

  ASSERT_TRUE(WriteFileAtomically(path, "model\n").ok());
  EXPECT_EQ(Read(path), "model\n");
  EXPECT_EQ(Entries(),
            (std::vector<std::string>{
                "model.pb", "model.pb.tmp.12.0123456789ABCDEF",
                "model.pb.tmp.12.0123456789abcde",
                "model.pb.tmp.7.abcdefabcdefabcd",
                "model.pb.tmp.99.feedfacefeedface",
                "model.pb.tmp.x.0123456789abcdef",
                "other.pb.tmp.123.00000000deadbeef"}));
  // Once its writer is gone, the next write removes it.
  ::close(held);
  ASSERT_TRUE(WriteFileAtomically(path, "again\n").ok());
  EXPECT_FALSE(std::filesystem::exists(Path("model.pb.tmp.99.feedfacefeedface")));
}

TEST_F(FileIoTest, RefusesTargetsThatAreNotRegularFiles) {
  struct Target {
    std::string path;
    std::string kind;
  };
  std::vector<Target> targets;
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0644), 0);
  targets.push_back({Path("fifo"), "a FIFO"});
  std::filesystem::create_directory(Path("dir"));
  targets.push_back({Path("dir"), "a directory"});
  std::filesystem::create_symlink(Path("fifo"), Path("link-to-fifo"));
  targets.push_back({Path("link-to-fifo"), "a FIFO"});
  // A private node with /dev/full's numbers, where mknod is allowed (root).
  if (mknod(Path("full").c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) {
    targets.push_back({Path("full"), "a character device"});
  }
  for (const Target& target : targets) {
    struct stat before;
    ASSERT_EQ(lstat(target.path.c_str(), &before), 0);
    for (const absl::Status& status :
         {CheckOutputTarget(target.path),
          WriteFileAtomically(target.path, "data\n")}) {
      EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition)
          << target.path << ": " << status;
      EXPECT_THAT(status.message(),
                  HasSubstr(target.path + ": exists and is " + target.kind +
                            ", not a regular file"));
    }
    struct stat after;
    ASSERT_EQ(lstat(target.path.c_str(), &after), 0);
    EXPECT_EQ(after.st_mode, before.st_mode) << target.path;
    EXPECT_EQ(after.st_ino, before.st_ino) << target.path;
  }
  for (const std::string& name : Entries()) {
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
  }
}

TEST_F(FileIoTest, ReadWholeFileHonoursItsByteBound) {
  const std::string path = Path("bounded.txt");
  ASSERT_TRUE(WriteFileAtomically(path, "0123456789").ok());
  absl::StatusOr<std::string> whole = ReadWholeFile(path);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(*whole, "0123456789");
  absl::StatusOr<std::string> at_limit = ReadWholeFile(path, 10);
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(*at_limit, "0123456789");
  absl::StatusOr<std::string> over = ReadWholeFile(path, 9);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.status().message(), HasSubstr(path));
  EXPECT_THAT(over.status().message(), HasSubstr("9 bytes"));
  // An endless device stops at the bound instead of filling memory.
  absl::StatusOr<std::string> endless = ReadWholeFile("/dev/zero", 1 << 20);
  ASSERT_FALSE(endless.ok());
  EXPECT_EQ(endless.status().code(), absl::StatusCode::kResourceExhausted);
  absl::StatusOr<std::string> empty = ReadWholeFile("/dev/null", 0);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
}

// Issue 39 item 11: fopen() opens a directory, and its size was taken for
// the contents (std::bad_alloc, rc 134, in plrank-convert).
TEST_F(FileIoTest, ReadWholeFileRefusesADirectory) {
  const absl::StatusOr<std::string> read = ReadWholeFile(dir_);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(read.status().message(), HasSubstr("is a directory"));
  EXPECT_THAT(read.status().message(), HasSubstr(dir_));
}

TEST_F(FileIoTest, MissingDirectoryIsNamed) {
  const absl::Status status =
      WriteFileAtomically(Path("no/such/dir/out.txt"), "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("no/such/dir/out.txt"));
  EXPECT_TRUE(CheckOutputTarget(Path("absent.txt")).ok());
}

}  // namespace
}  // namespace plrank
