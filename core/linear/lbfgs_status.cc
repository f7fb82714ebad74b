#include "core/linear/lbfgs_status.h"

#include <lbfgs.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace plrank {
namespace {

const char* LbfgsStatusWords(int status) {
  switch (status) {
    case LBFGS_SUCCESS:  // == LBFGS_CONVERGENCE
      return "converged";
    case LBFGS_STOP:
      return "stopped: the objective stopped improving";
    case LBFGS_ALREADY_MINIMIZED:
      return "already at a minimum: the starting gradient is zero";
    case LBFGSERR_UNKNOWNERROR:
      return "unknown error";
    case LBFGSERR_LOGICERROR:
      return "logic error";
    case LBFGSERR_OUTOFMEMORY:
      return "out of memory";
    case LBFGSERR_CANCELED:
      return "canceled by the progress callback";
    case LBFGSERR_INVALID_N:
    case LBFGSERR_INVALID_N_SSE:
    case LBFGSERR_INVALID_X_SSE:
      return "invalid number of variables";
    case LBFGSERR_INVALID_EPSILON:
    case LBFGSERR_INVALID_TESTPERIOD:
    case LBFGSERR_INVALID_DELTA:
    case LBFGSERR_INVALID_LINESEARCH:
    case LBFGSERR_INVALID_MINSTEP:
    case LBFGSERR_INVALID_MAXSTEP:
    case LBFGSERR_INVALID_FTOL:
    case LBFGSERR_INVALID_WOLFE:
    case LBFGSERR_INVALID_GTOL:
    case LBFGSERR_INVALID_XTOL:
    case LBFGSERR_INVALID_MAXLINESEARCH:
    case LBFGSERR_INVALID_ORTHANTWISE:
    case LBFGSERR_INVALID_ORTHANTWISE_START:
    case LBFGSERR_INVALID_ORTHANTWISE_END:
    case LBFGSERR_INVALIDPARAMETERS:
      return "invalid L-BFGS parameter";
    case LBFGSERR_OUTOFINTERVAL:
      return "line search: the step left the interval of uncertainty";
    case LBFGSERR_INCORRECT_TMINMAX:
      return "line search: the interval of uncertainty became too small";
    case LBFGSERR_ROUNDING_ERROR:
      return "line search: rounding errors prevent further progress "
             "(usually: at the optimum within double precision)";
    case LBFGSERR_MINIMUMSTEP:
      return "line search reached its minimum step";
    case LBFGSERR_MAXIMUMSTEP:
      return "line search reached its maximum step";
    case LBFGSERR_MAXIMUMLINESEARCH:
      return "line search reached its maximum number of evaluations";
    case LBFGSERR_MAXIMUMITERATION:
      return "reached the maximum number of iterations";
    case LBFGSERR_WIDTHTOOSMALL:
      return "line search: the interval width became too small";
    case LBFGSERR_INCREASEGRADIENT:
      return "the search direction does not decrease the objective";
    default:
      return nullptr;
  }
}

}  // namespace

std::string LbfgsStatusText(int status) {
  const char* words = LbfgsStatusWords(status);
  if (words == nullptr) return absl::StrCat("unknown L-BFGS status ", status);
  return absl::StrCat(words, " (", status, ")");
}

}  // namespace plrank
