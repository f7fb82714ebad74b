#ifndef PLRANK_TESTS_TESTING_TEXT_FILES_H_
#define PLRANK_TESTS_TESTING_TEXT_FILES_H_

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace plrank::testing {

// `name` in GoogleTest's temporary directory.
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name;
}

// Replaces the file at `path` with exactly `text` (bytes, no translation).
inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_TEXT_FILES_H_
