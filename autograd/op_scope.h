/// @file
/// OpScope: the first line of every public op.
///
///   Tensor mul(const Tensor& a, const Tensor& b) {
///     OpScope scope("mul", a, b);
///     ...
///
/// It does two things for the op. It checks that every tensor argument is
/// defined: a default-constructed Tensor (e.g. w.grad() before any backward)
/// is an ember::Error naming the op and the argument, never a crash. And it
/// lets an observer (the profiler and trace in inspect/, through
/// autograd/observer.h) see the op begin and, when the scope closes, end.
/// When nothing observes, that costs one load of a pointer and a branch.
/// While forward mode runs, it also refuses to start after an op that
/// recorded a node but gave its output no tangent (autograd/forward.h).
#pragma once

#include <vector>

#include "autograd/forward.h"
#include "autograd/observer.h"
#include "tensor/tensor.h"

namespace ember {

class OpScope {
 public:
  template <typename... Args>
  explicit OpScope(const char* op, const Args&... tensors) : op_(op) {
    detail::check_forward_rules();  // the op before this one gave its output a tangent
    int position = 0;
    (check(tensors, ++position), ...);
    if (detail::dual_level_depth != 0 && !detail::in_forward_rule) [[unlikely]]
      if ((detail::has_tangent(tensors) || ...)) watch_forward_rule();
    if (AutogradObserver* o = autograd_observer()) {
      observer_ = o;
      std::vector<const Tensor*> inputs;
      (collect(tensors, inputs), ...);
      o->op_begin(op, inputs);
    }
  }
  ~OpScope() {
    if (watching_) [[unlikely]] end_watch();
    if (observer_) observer_->op_end(op_);
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  void check(const Tensor& t, int position) const {
    if (!t.defined()) undefined(position, -1);
  }
  void check(const std::vector<Tensor>& ts, int position) const {
    for (size_t i = 0; i < ts.size(); ++i)
      if (!ts[i].defined()) undefined(position, static_cast<int64_t>(i));
  }
  static void collect(const Tensor& t, std::vector<const Tensor*>& out) { out.push_back(&t); }
  static void collect(const std::vector<Tensor>& ts, std::vector<const Tensor*>& out) {
    for (const Tensor& t : ts) out.push_back(&t);
  }
  [[noreturn]] void undefined(int position, int64_t element) const;
  // Forward mode: an input has a tangent, so some forward rule must run
  // before the op ends (or the op says it needs none).
  void watch_forward_rule();
  void end_watch() noexcept;

  const char* op_;
  AutogradObserver* observer_ = nullptr;
  bool watching_ = false;
  uint64_t rules_at_start_ = 0;
  int exceptions_at_start_ = 0;
};

}  // namespace ember
