/// @file
/// Forward-mode automatic differentiation: a tangent travels with the
/// forward pass.
///
/// A dual tensor is a primal value x with a tangent v of the same shape (a
/// direction). Every differentiable op, beside computing y = f(x), computes
/// the tangent of its output, J_f(x) v: its forward rule (JVP), written in
/// autograd/ops/ next to its backward rule. One forward pass thus gives
/// J v for one v, where one backward pass gives uᵀ J for one u.
///
///   DualLevel level;                             // tangents live inside this scope
///   Tensor x = make_dual(primal, direction);     // a copy of primal, with its tangent
///   Tensor y = sin(x) * x;
///   Tensor jv = tangent(y);                      // cos(x) x v + sin(x) v
///
/// The habit is PyTorch's forward_ad (dual_level, make_dual, unpack_dual),
/// with one difference that keeps the rules simple: the tangent is attached
/// to the tensor's *memory* (its Storage; tensor/storage.h keeps the
/// tangents in a table beside the storages), not to one handle. So a view's
/// tangent is the same view of the tangent, without any rule for views, and
/// an in-place write updates the tangent of every view of that memory. For
/// this, make_dual returns a copy of the primal, in memory of its own.
///
/// One level at a time (opening a second is an error), as in PyTorch, and
/// one thread: while a level is open, no other thread may run ember ops.
/// Closing the level removes every tangent it attached. Forward mode works
/// beside reverse mode: tangents also travel through a backward pass run
/// inside the level, which is how hessian() computes forward-over-reverse.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "autograd/grad_mode.h"
#include "tensor/tangents.h"
#include "tensor/tensor.h"

namespace ember {

/// RAII: the scope in which tensors may carry tangents. On exit every
/// tangent made inside it is dropped.
class DualLevel {
 public:
  DualLevel();
  ~DualLevel();
  DualLevel(const DualLevel&) = delete;
  DualLevel& operator=(const DualLevel&) = delete;
};

/// True while a DualLevel is open.
bool forward_level_active();

/// A copy of `primal` (its own memory, laid out as primal's: a
/// non-contiguous view stays one) whose tangent is `tangent`. Errors: no
/// open level, shapes that differ, a dtype other than float32/float64.
/// Autograd sees a copy: the result's gradient flows back to `primal`.
Tensor make_dual(const Tensor& primal, const Tensor& tangent);

/// The tangent of t (a view of its memory's tangent, in t's shape and
/// strides), or an undefined tensor if t has none.
Tensor tangent(const Tensor& t);

struct UnpackedDual {
  Tensor primal;
  Tensor tangent;  // undefined if there is none
};
/// PyTorch's unpack_dual. `primal` is t itself: a tangent belongs to memory,
/// so the primal keeps it while the level is open.
UnpackedDual unpack_dual(const Tensor& t);

namespace detail {
/// How many levels are open (0 or 1): read inline by forward_rule, so an op
/// pays one load and a branch when forward mode is not in use.
extern int dual_level_depth;
/// True while a forward rule runs (its ops compute plain values).
extern thread_local bool in_forward_rule;

inline bool has_tangent(const Tensor& t) {
  return tangents::count != 0 && t.defined() && t.storage() && tangents::of(t.storage().get());
}
inline bool has_tangent(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (has_tangent(t)) return true;
  return false;
}

/// How many forward rules have run on this thread (OpScope compares it
/// before and after an op whose inputs carry tangents: an op that ran none
/// has no forward rule).
extern thread_local uint64_t rules_run;
/// The op that ended without a forward rule although its inputs carried
/// tangents, or null. The next op, tangent() and jvp() refuse to go on
/// while it is set: an op without a forward rule is an error naming it,
/// never a silent zero tangent.
extern thread_local const char* op_without_forward_rule;
/// Throws the error for op_without_forward_rule (and clears it).
[[noreturn]] void missing_forward_rule();
inline void check_forward_rules() {
  if (dual_level_depth != 0 && op_without_forward_rule) [[unlikely]]
    missing_forward_rule();
}
/// For an op whose output has no tangent by design (a comparison, argmax:
/// not differentiable) or already has its input's (it returned the input
/// itself): says so, as a forward rule would.
inline void no_forward_rule_needed() {
  if (dual_level_depth != 0) ++rules_run;
}

/// True while compile/'s tracer captures a function on this thread: a
/// backward pass inside it (grad()) then runs its rules as ember ops, which
/// the tracer writes down as the backward half of the graph.
extern thread_local bool capture_composes;
/// sign(x) (1, -1, 0; 0 for NaN and for -0) for a backward rule: the kernel,
/// or while compile/ captures, the same values as ember ops (where, gt, lt).
Tensor sign_for_rule(const Tensor& x);

/// True while tangents can appear in what an op computes (a level is open
/// and no forward rule runs): then backward rules take their composed
/// formulas, made of ember ops, so that the gradient gets a tangent too.
inline bool tangents_propagate() { return dual_level_depth > 0 && !in_forward_rule; }
}  // namespace detail

/// True when a backward rule must take its form in ember ops (which record
/// and carry tangents) instead of a fused loop or kernel of its own: backward
/// records (create_graph), or tangents travel through it (forward-over-reverse,
/// inside a DualLevel), or compile/ captures it. The rule helpers of
/// autograd/ (elementwise_rule.h, linear_rule.h, composed_rule.h) ask it, so
/// that an op's rule does not.
inline bool backward_composes() {
  return is_grad_enabled() || detail::tangents_propagate() || detail::capture_composes;
}

namespace detail {

/// Makes `t` the tangent of `out` (converted to out's dtype). If out's
/// memory already has a tangent (out is a view of an input), it is kept:
/// the view already sees its tangent.
void set_tangent(const Tensor& out, const Tensor& t);

/// The tangent of t's memory, made (zeros) if it has none yet: for in-place
/// writes, which update it in place.
Tensor tangent_for_write(const Tensor& t);

/// make_dual's copy: x's memory copied and viewed with x's offset and
/// strides, recorded as an identity (the gradient flows back to x).
Tensor copy_with_layout(const Tensor& x);

/// RAII, around a forward rule: the ops inside compute the tangent as plain
/// values (no tangents of their own, nothing recorded for backward).
class ForwardRuleScope {
 public:
  ForwardRuleScope();
  ~ForwardRuleScope();
  ForwardRuleScope(const ForwardRuleScope&) = delete;
  ForwardRuleScope& operator=(const ForwardRuleScope&) = delete;

 private:
  bool prev_grad_;
  bool prev_rule_;
};
}  // namespace detail

/// The tangent of x, or zeros of x's shape when x has none: what a forward
/// rule reads for each input ("dx(a) * b + a * dx(b)").
Tensor dx(const Tensor& x);

/// One term of a forward rule with several inputs: f(tangent of x) when x
/// has a tangent, else nothing (an undefined tensor). An input without a
/// tangent then adds nothing at all, not 0 * (its partial derivative), which
/// would be NaN where that derivative is infinite.
template <typename F>
inline Tensor term(const Tensor& x, const F& f) {
  return detail::has_tangent(x) ? f(tangent(x)) : Tensor();
}
/// a + b, where an undefined tensor is nothing: how terms are summed.
Tensor plus(const Tensor& a, const Tensor& b);

namespace detail {
// forward_rule's work, out of line and marked cold: the op's own code is as
// small as an op without a forward rule.
template <typename Rule, typename... Inputs>
[[gnu::noinline, gnu::cold]] void run_forward_rule(const Tensor& out, const Rule& rule, const Inputs&... inputs) {
  ++rules_run;
  if (in_forward_rule || !(has_tangent(inputs) || ...)) return;
  Tensor t;
  {
    ForwardRuleScope scope;
    t = rule();
  }
  set_tangent(out, t);
}
}  // namespace detail

/// The forward rule of an op, next to its record(): when a level is open and
/// one of `inputs` has a tangent, runs `rule` (which returns the tangent of
/// `out`) inside a ForwardRuleScope and attaches the result to `out`.
///   forward_rule(out, [&] { return dx(x) * out; }, x);   // d exp(x) = exp(x) dx
template <typename Rule, typename... Inputs>
inline void forward_rule(const Tensor& out, const Rule& rule, const Inputs&... inputs) {
  if (detail::dual_level_depth != 0) [[unlikely]]
    detail::run_forward_rule(out, rule, inputs...);
}

}  // namespace ember
