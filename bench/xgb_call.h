#ifndef PLRANK_BENCH_XGB_CALL_H_
#define PLRANK_BENCH_XGB_CALL_H_

#include <xgboost/c_api.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace plrank::bench {

// Turns an XGBoost C API return code into a Status carrying XGBGetLastError.
inline absl::Status XgbCall(int return_code, const char* what) {
  if (return_code == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("XGBoost ", what, " failed: ", XGBGetLastError()));
}

// Owners of XGBoost C API handles.
struct XgbBoosterDeleter {
  void operator()(void* handle) const { XGBoosterFree(handle); }
};
struct XgbDMatrixDeleter {
  void operator()(void* handle) const { XGDMatrixFree(handle); }
};
using BoosterPtr = std::unique_ptr<void, XgbBoosterDeleter>;
using DMatrixPtr = std::unique_ptr<void, XgbDMatrixDeleter>;

}  // namespace plrank::bench

// Evaluates an XGBoost C call and returns its error status from the
// enclosing function when it fails.
#define PLRANK_XGB_RETURN_IF_ERROR(call)                                  \
  do {                                                                    \
    absl::Status plrank_xgb_status = ::plrank::bench::XgbCall(call, #call); \
    if (!plrank_xgb_status.ok()) return plrank_xgb_status;                \
  } while (0)

#endif  // PLRANK_BENCH_XGB_CALL_H_
