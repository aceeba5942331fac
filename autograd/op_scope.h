/// @file
/// OpScope: the first line of every public op.
///
///   Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
///     OpScope scope("sum", x, dims, keepdim);
///     ...
///     return scope.out(result);
///
/// It is given every argument of the op, in order, and the result on the way
/// out. It does two things for the op. It checks that every tensor argument
/// is defined: a default-constructed Tensor (e.g. w.grad() before any
/// backward) is an ember::Error naming the op and the argument, never a
/// crash. And it lets an observer (the profiler and trace in inspect/,
/// compile/'s tracer, through autograd/observer.h) see the op begin and, when
/// the scope closes, end; an observer that asks (wants_calls) also gets the
/// arguments and the result, which is how a traced program is written down
/// as a graph of calls. When nothing observes, that costs one load of a
/// pointer and a branch.
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
  explicit OpScope(const char* op, const Args&... args) : op_(op) {
    detail::check_forward_rules();  // the op before this one gave its output a tangent
    int position = 0;
    (check(args, ++position), ...);
    if (detail::dual_level_depth != 0 && !detail::in_forward_rule) [[unlikely]]
      if ((has_tangent(args) || ...)) watch_forward_rule();
    if (AutogradObserver* o = autograd_observer()) {
      observer_ = o;
      std::vector<const Tensor*> inputs;
      (collect(args, inputs), ...);
      o->op_begin(op, inputs);
      if (o->wants_calls()) {
        calls_ = true;
        o->op_call(op, std::vector<OpArg>{OpArg(std::in_place_type<Args>, args)...});
      }
    }
  }
  /// The op's result, handed on (and shown to an observer that asks).
  template <typename T>
  T&& out(T&& result) {
    if (calls_) [[unlikely]] report(result);
    return std::forward<T>(result);
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
  template <typename T>
  void check(const T&, int) const {}  // a dim, a scalar, a flag
  static bool has_tangent(const Tensor& t) { return detail::has_tangent(t); }
  static bool has_tangent(const std::vector<Tensor>& ts) { return detail::has_tangent(ts); }
  template <typename T>
  static bool has_tangent(const T&) { return false; }
  static void collect(const Tensor& t, std::vector<const Tensor*>& out) { out.push_back(&t); }
  static void collect(const std::vector<Tensor>& ts, std::vector<const Tensor*>& out) {
    for (const Tensor& t : ts) out.push_back(&t);
  }
  template <typename T>
  static void collect(const T&, std::vector<const Tensor*>&) {}
  void report(const Tensor& result) const { observer_->op_results(op_, {result}); }
  void report(const TensorPair& result) const { observer_->op_results(op_, {result.first, result.second}); }
  void report(const std::vector<Tensor>& results) const { observer_->op_results(op_, results); }
  [[noreturn]] void undefined(int position, int64_t element) const;
  // Forward mode: an input has a tangent, so some forward rule must run
  // before the op ends (or the op says it needs none).
  void watch_forward_rule();
  void end_watch() noexcept;

  const char* op_;
  AutogradObserver* observer_ = nullptr;
  bool watching_ = false;
  bool calls_ = false;
  uint64_t rules_at_start_ = 0;
  int exceptions_at_start_ = 0;
};

}  // namespace ember
