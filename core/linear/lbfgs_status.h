#ifndef PLRANK_CORE_LINEAR_LBFGS_STATUS_H_
#define PLRANK_CORE_LINEAR_LBFGS_STATUS_H_

#include <string>

namespace plrank {

// liblbfgs's return code in words, with the number kept for searching its
// documentation: "converged (0)", "line search reached its minimum step
// (-998)", ... Unknown codes read "unknown L-BFGS status N".
std::string LbfgsStatusText(int status);

}  // namespace plrank

#endif  // PLRANK_CORE_LINEAR_LBFGS_STATUS_H_
