#include "core/data/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace plrank {
namespace {

TEST(IsValidUtf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("Column_7 ndcg@10"));
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));  // NUL is a code point
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9"));           // U+00E9
  EXPECT_TRUE(IsValidUtf8("\xe2\x82\xac"));          // U+20AC
  EXPECT_TRUE(IsValidUtf8("\xed\x9f\xbf"));          // U+D7FF, below surrogates
  EXPECT_TRUE(IsValidUtf8("\xee\x80\x80"));          // U+E000, above them
  EXPECT_TRUE(IsValidUtf8("\xf0\x90\x80\x80"));      // U+10000
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));      // U+10FFFF
}

TEST(IsValidUtf8Test, RejectsMalformedText) {
  EXPECT_FALSE(IsValidUtf8("C\xff"));             // never a UTF-8 byte
  EXPECT_FALSE(IsValidUtf8("caf\xe9"));           // Latin-1
  EXPECT_FALSE(IsValidUtf8("\x80"));              // lone continuation
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // cut short
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // cut short
  EXPECT_FALSE(IsValidUtf8("\xc3\x28"));          // bad continuation
  EXPECT_FALSE(IsValidUtf8("\xe2\x28\xa1"));      // bad second byte
  EXPECT_FALSE(IsValidUtf8("\xe2\x82\x28"));      // bad third byte
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xc1\xbf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xe0\x9f\xbf"));      // overlong 3-byte
  EXPECT_FALSE(IsValidUtf8("\xf0\x8f\xbf\xbf"));  // overlong 4-byte
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // U+D800, a surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xf5\x80\x80\x80"));  // lead byte past F4
  EXPECT_FALSE(IsValidUtf8("\xf0\x90\x80\x28"));  // bad fourth byte
}

}  // namespace
}  // namespace plrank
