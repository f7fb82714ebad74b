// --model, the PLRank model artifact a program reads (plrank-eval scores
// and dumps it, plrank-convert exports it): one definition for both.
#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, model, "", "PLRank model artifact (model.pb) to read.");
