// Unary elementwise ops. Each backward is the derivative times grad_out;
// where a rule would take several passes over memory (tanh, sigmoid, gelu) it
// is one fused map2 call with the formula in a lambda.
#include <cmath>
#include <numbers>

#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/fast_math.h"
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
}  // namespace

struct NegBackward;
Tensor neg(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Neg, x);
  record<NegBackward>(out, {x});
  return out;
}
struct NegBackward final : Node {
  EMBER_NODE_NAME(NegBackward)
  std::vector<Tensor> apply(const Tensor& g) override { return {kernel::unary(Unary::Neg, g)}; }
};

struct ExpBackward;
Tensor exp(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Exp, x);
  record<ExpBackward>(out, {x}, out);
  return out;
}
// d exp(x) = exp(x): saves the output
struct ExpBackward final : Node {
  EMBER_NODE_NAME(ExpBackward)
  SavedTensor out;
  explicit ExpBackward(const Tensor& o) : out(o) {}
  std::vector<SavedTensor*> saved() override { return {&out}; }
  std::vector<Tensor> apply(const Tensor& g) override { return {g * out.get(*this)}; }
};

struct LogBackward;
Tensor log(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Log, x);
  record<LogBackward>(out, {x}, x);
  return out;
}
// d log(x) = 1/x
struct LogBackward final : Node {
  EMBER_NODE_NAME(LogBackward)
  SavedTensor x;
  explicit LogBackward(const Tensor& v) : x(v) {}
  std::vector<SavedTensor*> saved() override { return {&x}; }
  std::vector<Tensor> apply(const Tensor& g) override { return {g / x.get(*this)}; }
};

struct SqrtBackward;
Tensor sqrt(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Sqrt, x);
  record<SqrtBackward>(out, {x}, out, -1.0);
  return out;
}
Tensor rsqrt(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Rsqrt, x);
  record<SqrtBackward>(out, {x}, out, 1.0);
  return out;
}
// d sqrt(x) = 1 / (2 sqrt(x));  d x^(-1/2) = -x^(-3/2) / 2 = -out^3 / 2
struct SqrtBackward final : Node {
  EMBER_NODE_NAME(SqrtBackward)
  SavedTensor out;
  double power;  // -1: sqrt, +1: rsqrt
  SqrtBackward(const Tensor& o, double p) : out(o), power(p) {}
  std::vector<SavedTensor*> saved() override { return {&out}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor& y = out.get(*this);
    if (power < 0) return {g * 0.5 / y};
    return {g * -0.5 * y * y * y};
  }
};

struct AbsBackward;
Tensor abs(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Abs, x);
  record<AbsBackward>(out, {x}, x);
  return out;
}
// d|x| = sign(x) (0 at 0, like PyTorch)
struct AbsBackward final : Node {
  EMBER_NODE_NAME(AbsBackward)
  SavedTensor x;
  explicit AbsBackward(const Tensor& v) : x(v) {}
  std::vector<SavedTensor*> saved() override { return {&x}; }
  std::vector<Tensor> apply(const Tensor& g) override { return {g * kernel::unary(Unary::Sign, x.get(*this))}; }
};

struct SinBackward;
Tensor sin(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Sin, x);
  record<SinBackward>(out, {x}, x);
  return out;
}
// d sin(x) = cos(x)
struct SinBackward final : Node {
  EMBER_NODE_NAME(SinBackward)
  SavedTensor x;
  explicit SinBackward(const Tensor& v) : x(v) {}
  std::vector<SavedTensor*> saved() override { return {&x}; }
  std::vector<Tensor> apply(const Tensor& g) override { return {g * cos(x.get(*this))}; }
};

struct CosBackward;
Tensor cos(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Cos, x);
  record<CosBackward>(out, {x}, x);
  return out;
}
// d cos(x) = -sin(x)
struct CosBackward final : Node {
  EMBER_NODE_NAME(CosBackward)
  SavedTensor x;
  explicit CosBackward(const Tensor& v) : x(v) {}
  std::vector<SavedTensor*> saved() override { return {&x}; }
  std::vector<Tensor> apply(const Tensor& g) override { return {-g * sin(x.get(*this))}; }
};

struct TanhBackward;
Tensor tanh(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Tanh, x);
  record<TanhBackward>(out, {x}, out);
  return out;
}
// d tanh(x) = 1 - tanh(x)^2
struct TanhBackward final : Node {
  EMBER_NODE_NAME(TanhBackward)
  SavedTensor out;
  explicit TanhBackward(const Tensor& o) : out(o) {}
  std::vector<SavedTensor*> saved() override { return {&out}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    return {fused(out.get(*this), g, [](auto y, auto gv) EMBER_INLINE { return gv * (1 - y * y); })};
  }
};

struct SigmoidBackward;
Tensor sigmoid(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Sigmoid, x);
  record<SigmoidBackward>(out, {x}, out);
  return out;
}
// d sigmoid(x) = s (1 - s)
struct SigmoidBackward final : Node {
  EMBER_NODE_NAME(SigmoidBackward)
  SavedTensor out;
  explicit SigmoidBackward(const Tensor& o) : out(o) {}
  std::vector<SavedTensor*> saved() override { return {&out}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    return {fused(out.get(*this), g, [](auto s, auto gv) EMBER_INLINE { return gv * s * (1 - s); })};
  }
};

struct ReluBackward;
Tensor relu(const Tensor& x) {
  Tensor out = kernel::unary(Unary::Relu, x);
  record<ReluBackward>(out, {x}, out);
  return out;
}
// d relu(x) = 1 where x > 0 (0 at 0, like PyTorch)
struct ReluBackward final : Node {
  EMBER_NODE_NAME(ReluBackward)
  SavedTensor out;
  explicit ReluBackward(const Tensor& o) : out(o) {}
  std::vector<SavedTensor*> saved() override { return {&out}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    return {fused(out.get(*this), g, [](auto y, auto gv) EMBER_INLINE { return y > 0 ? gv : decltype(gv)(0); })};
  }
};

struct GeluBackward;
Tensor gelu(const Tensor& x, GeluApprox approx) {
  Tensor out = kernel::unary(approx == GeluApprox::Tanh ? Unary::GeluTanh : Unary::Gelu, x);
  record<GeluBackward>(out, {x}, x, approx);
  return out;
}
// exact:  gelu(x) = x Phi(x)            -> Phi(x) + x phi(x)
// tanh:   gelu(x) = x/2 (1 + tanh(u)), u = k (x + 0.044715 x^3), k = sqrt(2/pi)
//                                       -> (1 + t)/2 + x/2 (1 - t^2) k (1 + 3*0.044715 x^2)
// (Always inlined, so the loop over elements vectorizes.)
template <typename T>
[[gnu::always_inline]] inline T gelu_grad(T v, T gv) {
  T cdf = T(0.5) * (T(1) + detail::erf_t(v * T(std::numbers::sqrt2 / 2)));
  T pdf = detail::exp_t(T(-0.5) * v * v) * T(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
  return gv * (cdf + v * pdf);
}
template <typename T>
[[gnu::always_inline]] inline T gelu_tanh_grad(T v, T gv) {
  const T k = T(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
  T t = std::tanh(k * (v + T(0.044715) * v * v * v));
  return gv * (T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * k * (T(1) + T(3 * 0.044715) * v * v));
}
struct GeluBackward final : Node {
  EMBER_NODE_NAME(GeluBackward)
  SavedTensor x;
  GeluApprox approx;
  GeluBackward(const Tensor& v, GeluApprox a) : x(v), approx(a) {}
  std::vector<SavedTensor*> saved() override { return {&x}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    if (approx == GeluApprox::None) return {fused(x.get(*this), g, [](auto v, auto gv) EMBER_INLINE { return gelu_grad(v, gv); })};
    return {fused(x.get(*this), g, [](auto v, auto gv) EMBER_INLINE { return gelu_tanh_grad(v, gv); })};
  }
};

struct ClampBackward;
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  Tensor out = kernel::clamp(x, lo, hi);
  record<ClampBackward>(out, {x}, x, lo, hi);
  return out;
}
// gradient passes where lo <= x <= hi
struct ClampBackward final : Node {
  EMBER_NODE_NAME(ClampBackward)
  SavedTensor x;
  std::optional<double> lo, hi;
  ClampBackward(const Tensor& v, std::optional<double> l, std::optional<double> h) : x(v), lo(l), hi(h) {}
  std::vector<SavedTensor*> saved() override { return {&x}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const double l = lo.value_or(-INFINITY), h = hi.value_or(INFINITY);
    return {fused(x.get(*this), g, [l, h](auto v, auto gv) EMBER_INLINE { return v >= l && v <= h ? gv : decltype(gv)(0); })};
  }
};

}  // namespace ember
