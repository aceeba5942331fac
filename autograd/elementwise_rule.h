/// @file
/// An elementwise op's derivative, stated once.
///
/// For y = f(x) applied element by element, a small change v of x changes y
/// by f'(x) v. That one linear map is the op's `d`, and it is both of the
/// op's rules: backward applies it to grad_out (the Jacobian is diagonal, so
/// it is its own transpose) and the forward rule applies it to x's tangent.
/// A node states d; the helpers below derive the two rules from it (PyTorch's
/// derivatives.yaml calls this auto_element_wise). d reads the input x, the
/// output y, or both, and the node keeps what its Keep says:
///
///   // d exp(x) = exp(x) dx = y dx
///   struct ExpBackward final : UnaryBackward<ExpBackward, Keep::Output> {
///     EMBER_NODE_NAME(ExpBackward)
///     static Tensor d(const Tensor& v, const Tensor& x, const Tensor& y) { return v * y; }
///   };
///   Tensor exp(const Tensor& x) {
///     OpScope scope("exp", x);
///     return unary_rules<ExpBackward>(kernel::unary(Unary::Exp, x), x);
///   }
///
/// A binary op states one map per operand, d_a and d_b: backward returns
/// (d_a(g), d_b(g)) and the forward rule d_a(da) + d_b(db).
///
/// A d written with `auto` parameters, arithmetic, when() and the comparisons
/// below runs on plain numbers as well as on tensors. Loop::Fused then makes
/// its backward one pass over memory (a map2 loop with d inlined, instead of
/// one kernel and one temporary per ember op of the formula); when backward
/// records or tangents travel through it, the same d runs on tensors.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"

namespace ember {

/// What d reads, and so what the node keeps for backward.
enum class Keep { Nothing, Input, Output, Both };
/// How backward runs when nothing records: ember ops, or one fused loop.
enum class Loop { Ops, Fused };

// ---- the vocabulary of a d that runs on numbers and on tensors ----
/// v where cond holds, else 0 (a derivative that is 1 or 0: relu, clamp).
/// Selecting, not multiplying by 0/1, keeps an infinite v out of NaN.
inline Tensor when(const Tensor& cond, const Tensor& v) { return where(cond, v, scalar_tensor(0.0, v.dtype())); }
template <std::floating_point T>
[[gnu::always_inline]] inline T when(bool cond, T v) { return cond ? v : T(0); }
template <std::floating_point T>
[[gnu::always_inline]] inline bool gt(T a, double b) { return a > b; }
template <std::floating_point T>
[[gnu::always_inline]] inline bool ge(T a, double b) { return a >= b; }
template <std::floating_point T>
[[gnu::always_inline]] inline bool le(T a, double b) { return a <= b; }

namespace detail {
// grad_in[i] = f(kept[i], g[i]), one pass, for float32 / float64.
template <typename F>
Tensor fused_backward(const Tensor& kept, const Tensor& g, const F& f) {
  return EMBER_DISPATCH_FLOAT(g.dtype(), "backward", [&]<typename T>() {
    return map2<T, T, T>(kept, g, [&](T k, T gv) EMBER_INLINE { return static_cast<T>(f(k, gv)); }, "backward");
  });
}
}  // namespace detail

/// The node of a unary elementwise op; Self states d(v, x, y).
template <typename Self, Keep keep, Loop loop = Loop::Ops>
struct UnaryBackward : Node {
  static_assert(loop == Loop::Ops || keep == Keep::Input || keep == Keep::Output,
                "a fused loop reads one saved tensor beside the gradient");
  SavedTensor x, y;  // what d reads (Keep)

  std::vector<SavedRef> saved() override {
    std::vector<SavedRef> s;
    if constexpr (keep == Keep::Input || keep == Keep::Both) s.push_back({"x", &x});
    if constexpr (keep == Keep::Output || keep == Keep::Both) s.push_back({"output", &y});
    return s;
  }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Self& self = static_cast<const Self&>(*this);
    const Tensor X = x.defined() ? x.get(*this) : Tensor(), Y = y.defined() ? y.get(*this) : Tensor();
    if constexpr (loop == Loop::Fused) {
      if (!backward_composes()) {
        if constexpr (keep == Keep::Input)
          return {detail::fused_backward(X, g, [&](auto xv, auto gv) EMBER_INLINE { return self.d(gv, xv, xv); })};
        else
          return {detail::fused_backward(Y, g, [&](auto yv, auto gv) EMBER_INLINE { return self.d(gv, yv, yv); })};
      }
    }
    return {self.d(g, X, Y)};
  }
  // Keeps x and out as the rule needs them: before record(), which makes out
  // part of the graph (SavedTensor keeps the output as an alias).
  void keep_for_backward(const Tensor& in, const Tensor& out) {
    if constexpr (keep == Keep::Input || keep == Keep::Both) x = in;
    if constexpr (keep == Keep::Output || keep == Keep::Both) y = out;
  }
};

/// Records node's backward for out = f(x) when a gradient is needed, and runs
/// its forward rule, both from node.d. Returns out.
template <typename N>
Tensor unary_rules(Tensor out, const Tensor& x, N node = N()) {
  forward_rule(out, [&] { return node.d(dx(x), x, out); }, x);
  if (needs_grad({x})) {
    auto n = std::make_shared<N>(node);
    n->keep_for_backward(x, out);
    record(out, std::move(n), {x});
  }
  return out;
}

/// What a binary op's d_a or d_b reads (a bit set).
enum Reads : unsigned { kA = 1, kB = 2, kOut = 4 };

/// The node of a binary elementwise op with broadcasting; Self states
/// d_a(v, a, b, y), reading `reads_a`, and d_b(v, a, b, y), reading
/// `reads_b`. A tensor is kept only if the rule of an operand that needs a
/// gradient reads it (mul keeps b for a's gradient, and a only if b needs one).
/// Gradients come in the broadcast shape; the engine sums them back.
template <typename Self, unsigned reads_a, unsigned reads_b>
struct BinaryBackward : Node {
  SavedTensor a, b, y;

  std::vector<SavedRef> saved() override {
    std::vector<SavedRef> s;
    if constexpr (((reads_a | reads_b) & kA) != 0) s.push_back({"a", &a});
    if constexpr (((reads_a | reads_b) & kB) != 0) s.push_back({"b", &b});
    if constexpr (((reads_a | reads_b) & kOut) != 0) s.push_back({"output", &y});
    return s;
  }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Self& self = static_cast<const Self&>(*this);
    const Tensor A = a.defined() ? a.get(*this) : Tensor(), B = b.defined() ? b.get(*this) : Tensor(),
                 Y = y.defined() ? y.get(*this) : Tensor();
    return {next[0].defined() ? self.d_a(g, A, B, Y) : Tensor(), next[1].defined() ? self.d_b(g, A, B, Y) : Tensor()};
  }
  void keep_for_backward(const Tensor& in_a, const Tensor& in_b, const Tensor& out) {
    const unsigned reads = (in_a.requires_grad() ? reads_a : 0u) | (in_b.requires_grad() ? reads_b : 0u);
    if (reads & kA) a = in_a;
    if (reads & kB) b = in_b;
    if (reads & kOut) y = out;
  }
};

/// unary_rules for out = f(a, b): backward (d_a(g), d_b(g)), forward rule
/// d_a(da) + d_b(db), where an operand without a tangent adds no term.
template <typename N>
Tensor binary_rules(Tensor out, const Tensor& a, const Tensor& b, N node = N()) {
  forward_rule(out, [&] {
    return plus(term(a, [&](const Tensor& da) { return node.d_a(da, a, b, out); }),
                term(b, [&](const Tensor& db) { return node.d_b(db, a, b, out); }));
  }, a, b);
  if (needs_grad({a, b})) {
    auto n = std::make_shared<N>(node);
    n->keep_for_backward(a, b, out);
    record(out, std::move(n), {a, b});
  }
  return out;
}

}  // namespace ember
