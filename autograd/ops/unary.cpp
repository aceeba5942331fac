// Unary elementwise ops. Each node states the op's derivative once, as d:
// what a small change v of the input does to the output, given x (the input)
// and y (the output). Backward is d applied to grad_out
// (autograd/elementwise_rule.h); forward mode (chapter 14: skip it on a first
// reading) applies the same d to the tangent. A d written with
// `auto` runs on plain numbers too, and its backward is then one fused loop.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "autograd/batching.h"
#include "autograd/composed_rule.h"
#include "autograd/elementwise_rule.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/kernels.h"

namespace ember {

using kernel::Unary;

Tensor detail::sign_for_rule(const Tensor& x) {
  if (!capture_composes) return kernel::unary(Unary::Sign, x);
  const Tensor zero = scalar_tensor(0.0, x.dtype());
  return where(gt(x, 0.0), scalar_tensor(1.0, x.dtype()), where(lt(x, 0.0), scalar_tensor(-1.0, x.dtype()), zero));
}

// d(-x) = -dx
struct NegBackward final : UnaryBackward<NegBackward, Keep::Nothing> {
  EMBER_NODE_NAME(NegBackward)
  static Tensor d(const Tensor& v, const Tensor&, const Tensor&) { return -v; }
};
Tensor neg(const Tensor& x) {
  OpScope scope("neg", x);
  return scope.out(unary_rules<NegBackward>(kernel::unary(Unary::Neg, x), x));
}

// d exp(x) = exp(x) dx = y dx
struct ExpBackward final : UnaryBackward<ExpBackward, Keep::Output> {
  EMBER_NODE_NAME(ExpBackward)
  static Tensor d(const Tensor& v, const Tensor&, const Tensor& y) { return v * y; }
};
Tensor exp(const Tensor& x) {
  OpScope scope("exp", x);
  return scope.out(unary_rules<ExpBackward>(kernel::unary(Unary::Exp, x), x));
}

// d log(x) = dx / x
struct LogBackward final : UnaryBackward<LogBackward, Keep::Input> {
  EMBER_NODE_NAME(LogBackward)
  static Tensor d(const Tensor& v, const Tensor& x, const Tensor&) { return v / x; }
};
Tensor log(const Tensor& x) {
  OpScope scope("log", x);
  return scope.out(unary_rules<LogBackward>(kernel::unary(Unary::Log, x), x));
}

// d sqrt(x) = dx / (2 sqrt(x)) = 0.5 dx / y
struct SqrtBackward final : UnaryBackward<SqrtBackward, Keep::Output> {
  EMBER_NODE_NAME(SqrtBackward)
  static Tensor d(const Tensor& v, const Tensor&, const Tensor& y) { return v * 0.5 / y; }
};
Tensor sqrt(const Tensor& x) {
  OpScope scope("sqrt", x);
  return scope.out(unary_rules<SqrtBackward>(kernel::unary(Unary::Sqrt, x), x));
}

// d x^(-1/2) = -x^(-3/2) / 2 dx = -0.5 y^3 dx
struct RsqrtBackward final : UnaryBackward<RsqrtBackward, Keep::Output> {
  EMBER_NODE_NAME(RsqrtBackward)
  static Tensor d(const Tensor& v, const Tensor&, const Tensor& y) { return v * -0.5 * y * y * y; }
};
Tensor rsqrt(const Tensor& x) {
  OpScope scope("rsqrt", x);
  return scope.out(unary_rules<RsqrtBackward>(kernel::unary(Unary::Rsqrt, x), x));
}

// d|x| = sign(x) dx (0 at 0, like PyTorch)
struct AbsBackward final : UnaryBackward<AbsBackward, Keep::Input> {
  EMBER_NODE_NAME(AbsBackward)
  static Tensor d(const Tensor& v, const Tensor& x, const Tensor&) { return v * detail::sign_for_rule(x); }
};
Tensor abs(const Tensor& x) {
  OpScope scope("abs", x);
  return scope.out(unary_rules<AbsBackward>(kernel::unary(Unary::Abs, x), x));
}

// d sin(x) = cos(x) dx
struct SinBackward final : UnaryBackward<SinBackward, Keep::Input> {
  EMBER_NODE_NAME(SinBackward)
  static Tensor d(const Tensor& v, const Tensor& x, const Tensor&) { return v * cos(x); }
};
Tensor sin(const Tensor& x) {
  OpScope scope("sin", x);
  return scope.out(unary_rules<SinBackward>(kernel::unary(Unary::Sin, x), x));
}

// d cos(x) = -sin(x) dx
struct CosBackward final : UnaryBackward<CosBackward, Keep::Input> {
  EMBER_NODE_NAME(CosBackward)
  static Tensor d(const Tensor& v, const Tensor& x, const Tensor&) { return -v * sin(x); }
};
Tensor cos(const Tensor& x) {
  OpScope scope("cos", x);
  return scope.out(unary_rules<CosBackward>(kernel::unary(Unary::Cos, x), x));
}

// d erf(x) = 2/sqrt(pi) exp(-x^2) dx
struct ErfBackward final : UnaryBackward<ErfBackward, Keep::Input> {
  EMBER_NODE_NAME(ErfBackward)
  static Tensor d(const Tensor& v, const Tensor& x, const Tensor&) {
    return v * (2.0 * std::numbers::inv_sqrtpi) * exp(-(x * x));
  }
};
Tensor erf(const Tensor& x) {
  OpScope scope("erf", x);
  return scope.out(unary_rules<ErfBackward>(kernel::unary(Unary::Erf, x), x));
}

// d tanh(x) = (1 - tanh(x)^2) dx = (1 - y^2) dx
struct TanhBackward final : UnaryBackward<TanhBackward, Keep::Output, Loop::Fused> {
  EMBER_NODE_NAME(TanhBackward)
  static auto d(const auto& v, const auto&, const auto& y) { return v * (1 - y * y); }
};
Tensor tanh(const Tensor& x) {
  OpScope scope("tanh", x);
  return scope.out(unary_rules<TanhBackward>(kernel::unary(Unary::Tanh, x), x));
}

// d sigmoid(x) = y (1 - y) dx
struct SigmoidBackward final : UnaryBackward<SigmoidBackward, Keep::Output, Loop::Fused> {
  EMBER_NODE_NAME(SigmoidBackward)
  static auto d(const auto& v, const auto&, const auto& y) { return v * y * (1 - y); }
};
Tensor sigmoid(const Tensor& x) {
  OpScope scope("sigmoid", x);
  return scope.out(unary_rules<SigmoidBackward>(kernel::unary(Unary::Sigmoid, x), x));
}

// d relu(x) = dx where x > 0, i.e. where y > 0 (0 at 0, like PyTorch)
struct ReluBackward final : UnaryBackward<ReluBackward, Keep::Output, Loop::Fused> {
  EMBER_NODE_NAME(ReluBackward)
  static auto d(const auto& v, const auto&, const auto& y) { return when(gt(y, 0.0), v); }
};
Tensor relu(const Tensor& x) {
  OpScope scope("relu", x);
  return scope.out(unary_rules<ReluBackward>(kernel::unary(Unary::Relu, x), x));
}

// d clamp(x) = dx where lo <= x <= hi, else 0
struct ClampBackward final : UnaryBackward<ClampBackward, Keep::Input, Loop::Fused> {
  EMBER_NODE_NAME(ClampBackward)
  double lo, hi;
  ClampBackward(std::optional<double> l, std::optional<double> h) : lo(l.value_or(-INFINITY)), hi(h.value_or(INFINITY)) {}
  auto d(const auto& v, const auto& x, const auto&) const { return when(ge(x, lo), when(le(x, hi), v)); }
};
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  OpScope scope("clamp", x, lo, hi);
  return scope.out(unary_rules(kernel::clamp(x, lo, hi), x, ClampBackward(lo, hi)));
}

// d softplus(x) = sigmoid(x) dx, softplus(x) = log(1 + e^x)
struct SoftplusBackward final : UnaryBackward<SoftplusBackward, Keep::Input> {
  EMBER_NODE_NAME(SoftplusBackward)
  static Tensor d(const Tensor& v, const Tensor& x, const Tensor&) { return v * sigmoid(x); }
};
Tensor softplus(const Tensor& x) {
  OpScope scope("softplus", x);
  // as max(x, 0) + log(1 + e^-|x|), where e^-|x| <= 1 cannot overflow
  Tensor out = detail::map_floats(x, "softplus", [](auto v) {
    return std::max(v, decltype(v)(0)) + std::log1p(std::exp(-std::abs(v)));
  });
  return scope.out(unary_rules<SoftplusBackward>(out, x));
}

// ---- gelu: a fused op (autograd/composed_rule.h) ----
// Its composed fallback is its definition:
//   exact:  gelu(x) = x Phi(x) = x/2 (1 + erf(x / sqrt 2))
//   tanh:   gelu(x) = x/2 (1 + tanh(k (x + 0.044715 x^3))),  k = sqrt(2/pi)
Tensor composed::gelu(const Tensor& x, GeluApprox approx) {
  if (approx == GeluApprox::None) return 0.5 * x * (1.0 + erf(x * (std::numbers::sqrt2 / 2)));
  const double k = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
  return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}
// The fast backward, g * gelu'(x): kernel::gelu_backward and
// kernel::gelu_tanh_backward, one pass each (float32 at the CPU's SIMD width).
struct GeluBackward final : ComposedBackward {
  EMBER_NODE_NAME(GeluBackward)
  SavedTensor x;
  GeluApprox approx;
  GeluBackward(const Tensor& x_, GeluApprox a) : x(x_), approx(a) {}
  std::vector<SavedRef> saved() override { return {{"x", &x}}; }
  std::vector<Tensor> fast_backward(const Tensor& g) override {
    if (approx == GeluApprox::None) return {kernel::gelu_backward(x.get(*this), g)};
    return {kernel::gelu_tanh_backward(x.get(*this), g)};
  }
  std::vector<Tensor> backward_as_op(const Tensor& g) override { return {gelu_backward(g, x.get(*this), approx)}; }
  Tensor fallback(const std::vector<Tensor>& in) const override { return composed::gelu(in[0], approx); }
  std::vector<Tensor> fallback_inputs() override { return {x.get(*this)}; }
};
// The backward kernel as an op of its own, which a captured backward pass
// calls (compile/).
Tensor gelu_backward(const Tensor& grad, const Tensor& x, GeluApprox approx) {
  OpScope scope("gelu_backward", grad, x, approx);
  refuse_to_record("gelu_backward", {grad, x});
  return scope.out(approx == GeluApprox::None ? kernel::gelu_backward(x, grad) : kernel::gelu_tanh_backward(x, grad));
}
Tensor gelu(const Tensor& x, GeluApprox approx) {
  OpScope scope("gelu", x, approx);
  Tensor out = kernel::unary(approx == GeluApprox::Tanh ? Unary::GeluTanh : Unary::Gelu, x);
  if (needs_grad({x})) record(out, std::make_shared<GeluBackward>(x, approx), {x});
  composed_forward_rule(out, [&] { return composed::gelu(x, approx); }, x);
  return scope.out(out);
}

// ---- vmap (autograd/batching.h): elementwise, so the batch rides along ----
namespace {
// gelu_backward(grad, x): both of one shape, so both carry the batch
batching::Result gelu_backward_batched(const batching::Call& c) {
  return batching::batched({gelu_backward(batching::with_batch(c.tensor(0), c.batched[0], c.size),
                                          batching::with_batch(c.tensor(1), c.batched[1], c.size),
                                          std::get<GeluApprox>(c.args[2]))});
}
}  // namespace
void batching::detail::add_unary_batching_rules(Rules& r) {
  r.add({"neg", "exp", "log", "sqrt", "rsqrt", "abs", "sin", "cos", "erf", "tanh", "sigmoid", "relu", "clamp",
         "softplus", "gelu"},
        &same);
  r.add("gelu_backward", &gelu_backward_batched);
}

}  // namespace ember
