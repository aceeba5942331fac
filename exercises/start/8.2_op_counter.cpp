// Exercise 8.2: An observer that counts ops (chapter 8, docs/book/08_watching_it_work.md)
//
// The instruments of inspect/ are built on one hook: a pointer to an
// AutogradObserver (autograd/observer.h) that every OpScope calls with
// op_begin(name, inputs) and op_end(name). Write the smallest instrument:
//   * OpCounter, an AutogradObserver whose op_begin counts calls by name;
//   * count_ops(f): installs a counter (set_autograd_observer(&counter)),
//     runs f, uninstalls it (store(nullptr)) -- also when f throws -- and
//     returns the counts.
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
  // TODO: override op_begin
};

std::map<std::string, int64_t> count_ops(const std::function<void()>& f) {
  (void)f;
  TODO("install an OpCounter, run f, uninstall it (also on an exception), return its counts");
}

}  // namespace ex8_2
