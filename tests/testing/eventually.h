#ifndef PLRANK_TESTS_TESTING_EVENTUALLY_H_
#define PLRANK_TESTS_TESTING_EVENTUALLY_H_

#include <chrono>
#include <thread>

namespace plrank::testing {

// Polls `condition` until it holds or `seconds` pass, and returns whether it
// held. Tests wait on an observable state this way, never on a fixed sleep;
// the deadline only bounds a failing run on a busy machine.
template <typename Condition>
bool Eventually(Condition condition, int seconds = 60) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < give_up) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_EVENTUALLY_H_
