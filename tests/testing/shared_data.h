#ifndef PLRANK_TESTS_TESTING_SHARED_DATA_H_
#define PLRANK_TESTS_TESTING_SHARED_DATA_H_

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace plrank::testing {

// Path of a file under ../shared/data, or under $PLRANK_SHARED_DATA_DIR
// when set (ctest uses it to check that tests skip on a clone without data).
inline std::string SharedDataPath(const std::string& relative) {
  const char* dir = std::getenv("PLRANK_SHARED_DATA_DIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir
                                                    : PLRANK_SHARED_DATA_DIR) +
         "/" + relative;
}

inline bool RunningInCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && *ci != '\0' && std::string(ci) != "0" &&
         std::string(ci) != "false";
}

}  // namespace plrank::testing

// Skips the test when ../shared/data is absent on a user's clone, but fails
// it under CI, where the data must be there.
#define PLRANK_REQUIRE_SHARED_DATA(relative)                                  \
  do {                                                                        \
    const std::string plrank_path_ =                                          \
        ::plrank::testing::SharedDataPath(relative);                          \
    if (!std::filesystem::exists(plrank_path_)) {                             \
      if (::plrank::testing::RunningInCi()) {                                 \
        FAIL() << "shared test data missing under CI: " << plrank_path_;      \
      }                                                                       \
      GTEST_SKIP() << "shared test data not found (" << plrank_path_          \
                   << "); clone with ../shared/data to run this test";        \
    }                                                                         \
  } while (0)

#endif  // PLRANK_TESTS_TESTING_SHARED_DATA_H_
