// EchoedText / TruncateForMessage: client strings quoted in errors are
// capped (issue 39 item 8), never inside a UTF-8 character.
#include "server/lifecycle/echoed_text.h"

#include <string>

#include "gtest/gtest.h"

namespace plrank::server {
namespace {

TEST(EchoedTextTest, ShortTextIsUnchanged) {
  EXPECT_EQ(EchoedText("web"), "web");
  EXPECT_EQ(EchoedText(std::string(kMaxEchoedBytes, 'a')),
            std::string(kMaxEchoedBytes, 'a'));
}

TEST(EchoedTextTest, LongTextIsCutWithItsLength) {
  EXPECT_EQ(EchoedText(std::string(1 << 20, 'a')),
            std::string(kMaxEchoedBytes, 'a') + "... (1048576 bytes)");
  EXPECT_EQ(TruncateForMessage("abcdef", 3), "abc... (6 bytes)");
}

TEST(EchoedTextTest, NeverCutsInsideAUtf8Character) {
  // "é" is two bytes: a cut after 3 bytes of "aéé" would split the second.
  EXPECT_EQ(TruncateForMessage("a\xC3\xA9\xC3\xA9", 4), "a\xC3\xA9... (5 bytes)");
  EXPECT_EQ(TruncateForMessage("a\xC3\xA9\xC3\xA9", 2), "a... (5 bytes)");
}

}  // namespace
}  // namespace plrank::server
