#include "core/linear/lbfgs_status.h"

#include <lbfgs.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

TEST(LbfgsStatusText, NamesTheCodesInWordsAndKeepsTheNumber) {
  EXPECT_EQ(LbfgsStatusText(LBFGS_SUCCESS), "converged (0)");
  EXPECT_EQ(LbfgsStatusText(LBFGS_ALREADY_MINIMIZED),
            "already at a minimum: the starting gradient is zero (2)");
  EXPECT_THAT(LbfgsStatusText(LBFGSERR_ROUNDING_ERROR),
              HasSubstr("rounding errors prevent further progress"));
  EXPECT_THAT(LbfgsStatusText(LBFGSERR_ROUNDING_ERROR),
              HasSubstr(absl::StrCat("(", LBFGSERR_ROUNDING_ERROR, ")")));
  EXPECT_THAT(LbfgsStatusText(LBFGSERR_MAXIMUMITERATION),
              HasSubstr("maximum number of iterations"));
  EXPECT_THAT(LbfgsStatusText(LBFGSERR_INVALID_FTOL),
              HasSubstr("invalid L-BFGS parameter"));
  EXPECT_EQ(LbfgsStatusText(12345), "unknown L-BFGS status 12345");
}

TEST(LbfgsStatusText, EveryLibraryCodeHasWords) {
  for (int status = LBFGSERR_UNKNOWNERROR; status <= LBFGSERR_INCREASEGRADIENT;
       ++status) {
    EXPECT_THAT(LbfgsStatusText(status),
                ::testing::Not(HasSubstr("unknown L-BFGS")))
        << status;
  }
  for (int status = LBFGS_SUCCESS; status <= LBFGS_ALREADY_MINIMIZED;
       ++status) {
    EXPECT_THAT(LbfgsStatusText(status),
                ::testing::Not(HasSubstr("unknown L-BFGS")))
        << status;
  }
}

}  // namespace
}  // namespace plrank
