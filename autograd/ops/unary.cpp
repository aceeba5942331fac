// Unary elementwise ops. Each backward is the derivative times grad_out;
// where a rule would take several passes over memory (tanh, sigmoid, gelu) it
// is one fused map2 call with the formula in a lambda. When backward records
// (create_graph: a derivative of the gradient is wanted) those rules use the
// same formula written with ember ops, which record.
#include <cmath>
#include <numbers>

#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

using kernel::Unary;

namespace {
// grad_in[i] = f(saved[i], g[i]) for float32 / float64.
template <typename F>
Tensor fused(const Tensor& saved, const Tensor& g, const F& f) {
  return EMBER_DISPATCH_FLOAT(g.dtype(), "backward", [&]<typename T>() {
    return detail::map2<T, T, T>(saved, g, [&](T s, T gv) EMBER_INLINE { return static_cast<T>(f(s, gv)); }, "backward");
  });
}

// Most unary rules need one tensor, `kept`: the input x or the output y of
// the op (each rule's comment says which).
struct SavesOne : Node {
  SavedTensor kept;
  explicit SavesOne(const Tensor& t) : kept(t) {}
  std::vector<SavedRef> saved() override { return {{kept.is_output() ? "output" : "x", &kept}}; }
};
}  // namespace

// d(-x) = -g
struct NegBackward final : Node {
  EMBER_NODE_NAME(NegBackward)
  std::vector<Tensor> apply(const Tensor& g) override { return {-g}; }
};
Tensor neg(const Tensor& x) {
  OpScope scope("neg", x);
  Tensor out = kernel::unary(Unary::Neg, x);
  if (needs_grad({x})) record(out, std::make_shared<NegBackward>(), {x});
  forward_rule(out, [&] { return -dx(x); }, x);
  return out;
}

// d exp(x) = exp(x) = y: keeps y
struct ExpBackward final : SavesOne {
  EMBER_NODE_NAME(ExpBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override { return {g * kept.get(*this)}; }
};
Tensor exp(const Tensor& x) {
  OpScope scope("exp", x);
  Tensor out = kernel::unary(Unary::Exp, x);
  if (needs_grad({x})) record(out, std::make_shared<ExpBackward>(out), {x});
  forward_rule(out, [&] { return dx(x) * out; }, x);
  return out;
}

// d log(x) = 1/x: keeps x
struct LogBackward final : SavesOne {
  EMBER_NODE_NAME(LogBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override { return {g / kept.get(*this)}; }
};
Tensor log(const Tensor& x) {
  OpScope scope("log", x);
  Tensor out = kernel::unary(Unary::Log, x);
  if (needs_grad({x})) record(out, std::make_shared<LogBackward>(x), {x});
  forward_rule(out, [&] { return dx(x) / x; }, x);
  return out;
}

// d sqrt(x) = 1 / (2 sqrt(x)) = 0.5 / y: keeps y
struct SqrtBackward final : SavesOne {
  EMBER_NODE_NAME(SqrtBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override { return {g * 0.5 / kept.get(*this)}; }
};
Tensor sqrt(const Tensor& x) {
  OpScope scope("sqrt", x);
  Tensor out = kernel::unary(Unary::Sqrt, x);
  if (needs_grad({x})) record(out, std::make_shared<SqrtBackward>(out), {x});
  forward_rule(out, [&] { return dx(x) * 0.5 / out; }, x);
  return out;
}

// d x^(-1/2) = -x^(-3/2) / 2 = -0.5 y^3: keeps y
struct RsqrtBackward final : SavesOne {
  EMBER_NODE_NAME(RsqrtBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor& y = kept.get(*this);
    return {g * -0.5 * y * y * y};
  }
};
Tensor rsqrt(const Tensor& x) {
  OpScope scope("rsqrt", x);
  Tensor out = kernel::unary(Unary::Rsqrt, x);
  if (needs_grad({x})) record(out, std::make_shared<RsqrtBackward>(out), {x});
  forward_rule(out, [&] { return dx(x) * -0.5 * out * out * out; }, x);
  return out;
}

// d|x| = sign(x) (0 at 0, like PyTorch): keeps x
struct AbsBackward final : SavesOne {
  EMBER_NODE_NAME(AbsBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override { return {g * kernel::unary(Unary::Sign, kept.get(*this))}; }
};
Tensor abs(const Tensor& x) {
  OpScope scope("abs", x);
  Tensor out = kernel::unary(Unary::Abs, x);
  if (needs_grad({x})) record(out, std::make_shared<AbsBackward>(x), {x});
  forward_rule(out, [&] { return dx(x) * kernel::unary(Unary::Sign, x); }, x);
  return out;
}

// d sin(x) = cos(x): keeps x
struct SinBackward final : SavesOne {
  EMBER_NODE_NAME(SinBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override { return {g * cos(kept.get(*this))}; }
};
Tensor sin(const Tensor& x) {
  OpScope scope("sin", x);
  Tensor out = kernel::unary(Unary::Sin, x);
  if (needs_grad({x})) record(out, std::make_shared<SinBackward>(x), {x});
  forward_rule(out, [&] { return dx(x) * cos(x); }, x);
  return out;
}

// d cos(x) = -sin(x): keeps x
struct CosBackward final : SavesOne {
  EMBER_NODE_NAME(CosBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override { return {-g * sin(kept.get(*this))}; }
};
Tensor cos(const Tensor& x) {
  OpScope scope("cos", x);
  Tensor out = kernel::unary(Unary::Cos, x);
  if (needs_grad({x})) record(out, std::make_shared<CosBackward>(x), {x});
  forward_rule(out, [&] { return -dx(x) * sin(x); }, x);
  return out;
}

// d erf(x) = 2/sqrt(pi) exp(-x^2): keeps x
struct ErfBackward final : SavesOne {
  EMBER_NODE_NAME(ErfBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor x = kept.get(*this);
    return {g * (2.0 * std::numbers::inv_sqrtpi) * exp(-(x * x))};
  }
};
Tensor erf(const Tensor& x) {
  OpScope scope("erf", x);
  Tensor out = kernel::unary(Unary::Erf, x);
  if (needs_grad({x})) record(out, std::make_shared<ErfBackward>(x), {x});
  forward_rule(out, [&] { return dx(x) * (2.0 * std::numbers::inv_sqrtpi) * exp(-(x * x)); }, x);
  return out;
}

// d tanh(x) = 1 - tanh(x)^2 = 1 - y^2: keeps y
struct TanhBackward final : SavesOne {
  EMBER_NODE_NAME(TanhBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor y = kept.get(*this);
    if (backward_composes()) return {g * (1.0 - y * y)};
    return {fused(y, g, [](auto yv, auto gv) EMBER_INLINE { return gv * (1 - yv * yv); })};
  }
};
Tensor tanh(const Tensor& x) {
  OpScope scope("tanh", x);
  Tensor out = kernel::unary(Unary::Tanh, x);
  if (needs_grad({x})) record(out, std::make_shared<TanhBackward>(out), {x});
  forward_rule(out, [&] { return dx(x) * (1.0 - out * out); }, x);
  return out;
}

// d sigmoid(x) = y (1 - y): keeps y
struct SigmoidBackward final : SavesOne {
  EMBER_NODE_NAME(SigmoidBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor y = kept.get(*this);
    if (backward_composes()) return {g * y * (1.0 - y)};
    return {fused(y, g, [](auto yv, auto gv) EMBER_INLINE { return gv * yv * (1 - yv); })};
  }
};
Tensor sigmoid(const Tensor& x) {
  OpScope scope("sigmoid", x);
  Tensor out = kernel::unary(Unary::Sigmoid, x);
  if (needs_grad({x})) record(out, std::make_shared<SigmoidBackward>(out), {x});
  forward_rule(out, [&] { return dx(x) * out * (1.0 - out); }, x);
  return out;
}

// d relu(x) = 1 where x > 0, i.e. where y > 0 (0 at 0, like PyTorch): keeps y
struct ReluBackward final : SavesOne {
  EMBER_NODE_NAME(ReluBackward)
  using SavesOne::SavesOne;
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor y = kept.get(*this);
    if (backward_composes()) return {where(gt(y, 0.0), g, scalar_tensor(0.0, g.dtype()))};
    return {fused(y, g, [](auto yv, auto gv) EMBER_INLINE { return yv > 0 ? gv : decltype(gv)(0); })};
  }
};
Tensor relu(const Tensor& x) {
  OpScope scope("relu", x);
  Tensor out = kernel::unary(Unary::Relu, x);
  if (needs_grad({x})) record(out, std::make_shared<ReluBackward>(out), {x});
  forward_rule(out, [&] { return where(gt(out, 0.0), dx(x), scalar_tensor(0.0, out.dtype())); }, x);
  return out;
}

// exact:  gelu(x) = x Phi(x)            -> Phi(x) + x phi(x)
// tanh:   gelu(x) = x/2 (1 + tanh(u)), u = k (x + 0.044715 x^3), k = sqrt(2/pi)
//                                       -> (1 + t)/2 + x/2 (1 - t^2) k (1 + 3*0.044715 x^2)
// (The exact one is kernel::gelu_backward; the tanh one is always inlined,
// so the loop over elements vectorizes.)
template <typename T>
[[gnu::always_inline]] inline T gelu_tanh_grad(T v, T gv) {
  const T k = T(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
  T t = std::tanh(k * (v + T(0.044715) * v * v * v));
  return gv * (T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * k * (T(1) + T(3 * 0.044715) * v * v));
}
namespace {
// gelu'(x), the formulas above in ember ops: for the forward rule, and for
// backward when it records
Tensor gelu_derivative(const Tensor& x, GeluApprox approx) {
  if (approx == GeluApprox::None) {
    Tensor cdf = 0.5 * (1.0 + erf(x * (std::numbers::sqrt2 / 2)));
    Tensor pdf = exp(-0.5 * x * x) * (std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    return cdf + x * pdf;
  }
  const double k = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
  Tensor t = tanh(k * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x * x);
}
}  // namespace
// keeps x
struct GeluBackward final : SavesOne {
  EMBER_NODE_NAME(GeluBackward)
  GeluApprox approx;
  GeluBackward(const Tensor& x, GeluApprox a) : SavesOne(x), approx(a) {}
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor x = kept.get(*this);
    if (backward_composes()) return {g * gelu_derivative(x, approx)};  // the formulas above, in ember ops
    if (approx == GeluApprox::None) return {kernel::gelu_backward(x, g)};  // erf and exp a row at a time
    return {fused(x, g, [](auto v, auto gv) EMBER_INLINE { return gelu_tanh_grad(v, gv); })};
  }
};
Tensor gelu(const Tensor& x, GeluApprox approx) {
  OpScope scope("gelu", x);
  Tensor out = kernel::unary(approx == GeluApprox::Tanh ? Unary::GeluTanh : Unary::Gelu, x);
  if (needs_grad({x})) record(out, std::make_shared<GeluBackward>(x, approx), {x});
  forward_rule(out, [&] { return dx(x) * gelu_derivative(x, approx); }, x);
  return out;
}

namespace {
// v where lo <= x <= hi, else 0: what the derivative 1 (inside) or 0
// (outside) does to a gradient or a tangent
Tensor inside(const Tensor& x, std::optional<double> lo, std::optional<double> hi, const Tensor& v) {
  const Tensor zero = scalar_tensor(0.0, v.dtype());
  return where(ge(x, lo.value_or(-INFINITY)), where(le(x, hi.value_or(INFINITY)), v, zero), zero);
}
}  // namespace
// the gradient passes where lo <= x <= hi: keeps x
struct ClampBackward final : SavesOne {
  EMBER_NODE_NAME(ClampBackward)
  std::optional<double> lo, hi;
  ClampBackward(const Tensor& x, std::optional<double> l, std::optional<double> h) : SavesOne(x), lo(l), hi(h) {}
  std::vector<Tensor> apply(const Tensor& g) override {
    const double l = lo.value_or(-INFINITY), h = hi.value_or(INFINITY);
    const Tensor x = kept.get(*this);
    if (backward_composes()) return {inside(x, lo, hi, g)};
    return {fused(x, g, [l, h](auto v, auto gv) EMBER_INLINE { return v >= l && v <= h ? gv : decltype(gv)(0); })};
  }
};
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  OpScope scope("clamp", x);
  Tensor out = kernel::clamp(x, lo, hi);
  if (needs_grad({x})) record(out, std::make_shared<ClampBackward>(x, lo, hi), {x});
  forward_rule(out, [&] { return inside(x, lo, hi, dx(x)); }, x);
  return out;
}

}  // namespace ember
