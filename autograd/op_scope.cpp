#include "autograd/op_scope.h"

#include <exception>

namespace ember {

void OpScope::undefined(int position, int64_t element) const {
  if (element >= 0)
    EMBER_FAIL(op_, "tensor " << element << " of argument " << position
                              << " is undefined (a default-constructed Tensor, e.g. grad() before any backward)");
  EMBER_FAIL(op_, "argument " << position
                              << " is an undefined tensor (a default-constructed Tensor, e.g. grad() before any backward)");
}

void OpScope::watch_forward_rule() {
  watching_ = true;
  rules_at_start_ = detail::rules_run;
  exceptions_at_start_ = std::uncaught_exceptions();
}

void OpScope::end_watch() noexcept {
  // Not while an exception unwinds the op: that error is the one to report.
  if (detail::rules_run == rules_at_start_ && std::uncaught_exceptions() == exceptions_at_start_ &&
      detail::dual_level_depth != 0 && !detail::op_without_forward_rule)
    detail::op_without_forward_rule = op_;
}

}  // namespace ember
