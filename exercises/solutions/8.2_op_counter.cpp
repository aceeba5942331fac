// Exercise 8.2: An observer that counts ops, a reference solution.
#include <functional>
#include <map>
#include <string>

#include "exercises/exercise.h"

using namespace ember;

namespace ex8_2 {

struct OpCounter : AutogradObserver {
  std::map<std::string, int64_t> calls;
  void op_begin(const char* op, const std::vector<const Tensor*>&) override { ++calls[op]; }
};

std::map<std::string, int64_t> count_ops(const std::function<void()>& f) {
  OpCounter counter;
  struct Installed {  // uninstalls when it goes out of scope, exception or not
    explicit Installed(AutogradObserver* o) { set_autograd_observer(o); }
    ~Installed() { set_autograd_observer(nullptr); }
  } installed(&counter);
  f();
  return counter.calls;
}

}  // namespace ex8_2
