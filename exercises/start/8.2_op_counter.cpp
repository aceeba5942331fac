// Exercise 8.2: An observer that counts ops (chapter 8, docs/book/08_watching_it_work.md)
//
// The instruments of inspect/ are built on one hook: a pointer to an
// AutogradObserver (autograd/observer.h), installed with
// set_autograd_observer, that every op calls as it begins and as it ends.
// Write the smallest instrument:
//   * OpCounter, an AutogradObserver that counts each op by its name;
//   * count_ops(f): installs a counter, runs f, uninstalls it, and returns
//     the counts.
//
// Think about:
//   * each op calls the observer twice: which of the calls is the one to count?
//   * how do you make sure your function really overrides the base class's,
//     and not declares a new one the library never calls?
//   * if f throws, the lines after f() do not run: what still runs when a
//     function is left by an exception?
// The checker compares your counts with the profiler's events.
//
// Check it:  bash scripts/exercise.sh 8.2
#include <functional>
#include <map>
#include <string>

#include "exercises/exercise.h"

using namespace ember;

namespace ex8_2 {

struct OpCounter : AutogradObserver {
  std::map<std::string, int64_t> calls;
  // TODO: the hook that counts
};

std::map<std::string, int64_t> count_ops(const std::function<void()>& f) {
  (void)f;
  TODO("install an OpCounter, run f, uninstall it however f ends, return its counts");
}

}  // namespace ex8_2
