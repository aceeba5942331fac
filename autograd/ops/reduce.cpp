// Reductions and softmax. A reduction's backward spreads grad_out back over
// the reduced elements: equally (sum, mean), to the selected one (max/min),
// or weighted by the local derivative (var, norm, softmax).
#include <cmath>

#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

namespace {
// grad_out as it would look with keepdim=true, expanded to the input shape
// (views, with ember ops: they record when backward does).
Tensor expand_back(const Tensor& g, const Shape& in_shape, const Shape& dims, bool keepdim) {
  Tensor gk = g;
  if (!keepdim && !in_shape.empty()) {
    const std::vector<bool> red = reduced_dims(static_cast<int64_t>(in_shape.size()), dims, "sum");
    for (size_t d = 0; d < in_shape.size(); ++d)
      if (red[d]) gk = unsqueeze(gk, static_cast<int64_t>(d));
  }
  return expand(gk, in_shape);
}
int64_t reduced_count(const Shape& in_shape, const Shape& dims) {
  const std::vector<bool> red = reduced_dims(static_cast<int64_t>(in_shape.size()), dims, "mean");
  int64_t n = 1;
  for (size_t d = 0; d < in_shape.size(); ++d)
    if (red[d]) n *= in_shape[d];
  return n;  // 1 for a 0-d tensor: its one element
}
}  // namespace

// ---- sum / mean ----
// every reduced element gets scale * grad_out (scale 1 for sum, 1/K for mean)
struct SumBackward final : Node {
  EMBER_NODE_NAME(SumBackward)
  Shape in_shape, dims;
  bool keepdim;
  double scale;
  SumBackward(Shape s, Shape d, bool k, double sc) : in_shape(std::move(s)), dims(std::move(d)), keepdim(k), scale(sc) {}
  std::vector<Tensor> apply(const Tensor& g) override {
    Tensor gs = scale == 1.0 ? g : g * scale;
    return {expand_back(gs, in_shape, dims, keepdim)};
  }
};
Tensor sum_to(const Tensor& x, const Shape& shape) {
  OpScope scope("sum_to", x);
  if (x.shape() == shape) {
    detail::no_forward_rule_needed();  // x itself, with its tangent
    return x;
  }
  EMBER_CHECK(broadcast_shapes(shape, x.shape(), "sum_to") == x.shape(), "sum_to",
              "shape " << shape_str(x.shape()) << " is not a broadcast of " << shape_str(shape));
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  Shape dims;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d < lead || (shape[static_cast<size_t>(d - lead)] == 1 && x.shape()[static_cast<size_t>(d)] != 1))
      dims.push_back(d);
  Tensor s = dims.empty() ? x : sum(x, dims, /*keepdim=*/true);
  return reshape(s, shape);
}
Tensor sum(const Tensor& x) { return sum(x, {}, false); }
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  OpScope scope("sum", x);
  Tensor out = kernel::sum(x, dims, keepdim);
  if (needs_grad({x})) record(out, std::make_shared<SumBackward>(x.shape(), dims, keepdim, 1.0), {x});
  forward_rule(out, [&] { return sum(dx(x), dims, keepdim); }, x);
  return out;
}
Tensor mean(const Tensor& x) { return mean(x, {}, false); }
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) {
  OpScope scope("mean", x);
  Tensor out = kernel::mean(x, dims, keepdim);
  if (needs_grad({x})) {
    const double scale = 1.0 / static_cast<double>(reduced_count(x.shape(), dims));
    record(out, std::make_shared<SumBackward>(x.shape(), dims, keepdim, scale), {x});
  }
  forward_rule(out, [&] { return mean(dx(x), dims, keepdim); }, x);
  return out;
}

// ---- var ----
// d var = 2 (x - mean) / (K - correction)
struct VarBackward final : Node {
  EMBER_NODE_NAME(VarBackward)
  SavedTensor x;
  Shape dims;
  int64_t correction;
  bool keepdim;
  VarBackward(const Tensor& v, Shape d, int64_t c, bool k) : x(v), dims(std::move(d)), correction(c), keepdim(k) {}
  std::vector<SavedRef> saved() override { return {{"x", &x}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor X = x.get(*this);
    double denom = static_cast<double>(reduced_count(X.shape(), dims) - correction);
    Tensor centered = X - mean(X, dims, true);
    return {expand_back(g, X.shape(), dims, keepdim) * centered * (2.0 / denom)};
  }
};
Tensor var(const Tensor& x, const Shape& dims, int64_t correction, bool keepdim) {
  OpScope scope("var", x);
  Tensor out = kernel::var(x, dims, correction, keepdim);
  if (needs_grad({x})) record(out, std::make_shared<VarBackward>(x, dims, correction, keepdim), {x});
  forward_rule(out, [&] {  // d var = 2/(K - correction) sum((x - mean) dx)
    const double denom = static_cast<double>(reduced_count(x.shape(), dims) - correction);
    return sum((x - mean(x, dims, true)) * dx(x), dims, keepdim) * (2.0 / denom);
  }, x);
  return out;
}

// ---- norm ----
// d ||x||_p = sign(x) |x|^(p-1) / ||x||^(p-1)   (p = 2: x / ||x||; 0 where the norm is 0)
// p = inf: ||x|| = max |x|; sign(x) at the elements that attain it, shared equally among ties
namespace {
// d ||x|| / d x, in x's shape (both rules multiply it: by g, or by dx and sum)
Tensor norm_derivative(const Tensor& X, const Tensor& norm_out, double p, const Shape& dims, bool keepdim) {
  Tensor n = expand_back(norm_out, X.shape(), dims, keepdim);
  Tensor sign = kernel::unary(kernel::Unary::Sign, X);
  Tensor local;
  if (std::isinf(p)) {
    Tensor at_max = kernel::to(eq(abs(X), n), X.dtype());
    local = sign * at_max / expand_back(kernel::sum(at_max, dims, keepdim), X.shape(), dims, keepdim);
  } else {
    local = p == 1.0 ? sign : (p == 2.0 ? X / n : sign * pow(abs(X), p - 1.0) / pow(n, p - 1.0));
  }
  return where(eq(n, 0.0), scalar_tensor(0.0, X.dtype()), local);
}
}  // namespace
struct NormBackward final : Node {
  EMBER_NODE_NAME(NormBackward)
  SavedTensor x, out;
  double p;
  Shape dims;
  bool keepdim;
  NormBackward(const Tensor& v, const Tensor& o, double p_, Shape d, bool k)
      : x(v), out(o), p(p_), dims(std::move(d)), keepdim(k) {}
  std::vector<SavedRef> saved() override { return {{"x", &x}, {"output", &out}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor& X = x.get(*this);
    return {expand_back(g, X.shape(), dims, keepdim) * norm_derivative(X, out.get(*this), p, dims, keepdim)};
  }
};
Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  OpScope scope("norm", x);
  Tensor out = kernel::norm(x, p, dims, keepdim);
  if (needs_grad({x})) record(out, std::make_shared<NormBackward>(x, out, p, dims, keepdim), {x});
  forward_rule(out, [&] { return sum(norm_derivative(x, out, p, dims, keepdim) * dx(x), dims, keepdim); }, x);
  return out;
}

// ---- max / min: the gradient goes to the selected element ----
namespace {
// the forward rule: the tangent at the index that won
Tensor pick(const Tensor& t, int64_t d, bool keepdim, const Tensor& indices) {
  if (t.dim() == 0) return t;
  const int64_t w = wrap_dim(d, t.dim(), "max");
  Tensor at = gather(t, w, keepdim ? indices : unsqueeze(indices, w));
  return keepdim ? at : squeeze(at, w);
}
}  // namespace
// scatter grad_out to the index that won (the first one on ties)
struct MaxBackward final : Node {
  EMBER_NODE_NAME(MaxBackward)
  Shape in_shape;
  int64_t dim;
  bool keepdim;
  SavedTensor indices;
  MaxBackward(Shape s, int64_t d, bool k, const Tensor& i) : in_shape(std::move(s)), dim(d), keepdim(k), indices(i) {}
  std::vector<SavedRef> saved() override { return {{"indices", &indices}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    if (in_shape.empty()) return {g};
    Tensor idx = indices.get(*this), gk = g;
    if (!keepdim) {
      idx = kernel::unsqueeze(idx, dim);
      gk = backward_composes() ? unsqueeze(gk, dim) : kernel::unsqueeze(gk, dim);
    }
    if (backward_composes()) {
      // The same scatter as g times a constant one-hot mask of the winners.
      Tensor ones_at = kernel::scatter_add(in_shape, dim, idx, ones(idx.shape(), g.dtype()));
      return {expand(gk, in_shape) * ones_at};
    }
    return {kernel::scatter_add(in_shape, dim, idx, gk)};
  }
};
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t d, bool keepdim) {
  OpScope scope("max", x);
  auto [values, indices] = kernel::max(x, d, keepdim);
  if (needs_grad({x}))
    record(values, std::make_shared<MaxBackward>(x.shape(), wrap_dim_or_scalar(d, x.dim(), "max"), keepdim, indices), {x});
  forward_rule(values, [&, idx = indices] { return pick(dx(x), d, keepdim, idx); }, x);
  return {values, indices};
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t d, bool keepdim) {
  OpScope scope("min", x);
  auto [values, indices] = kernel::min(x, d, keepdim);
  if (needs_grad({x}))
    record(values, std::make_shared<MaxBackward>(x.shape(), wrap_dim_or_scalar(d, x.dim(), "min"), keepdim, indices), {x});
  forward_rule(values, [&, idx = indices] { return pick(dx(x), d, keepdim, idx); }, x);
  return {values, indices};
}
Tensor max(const Tensor& x) {
  OpScope scope("max", x);
  EMBER_CHECK(x.numel() > 0, "max", "cannot take the max of an empty tensor of shape " << shape_str(x.shape()));
  return reshape(max(reshape(x, {-1}), 0, false).first, {});
}
Tensor min(const Tensor& x) {
  OpScope scope("min", x);
  EMBER_CHECK(x.numel() > 0, "min", "cannot take the min of an empty tensor of shape " << shape_str(x.shape()));
  return reshape(min(reshape(x, {-1}), 0, false).first, {});
}

Tensor argmax(const Tensor& x) {
  OpScope scope("argmax", x);
  detail::no_forward_rule_needed();  // an index: not differentiable
  return kernel::argmax(x, std::nullopt, false);
}
Tensor argmax(const Tensor& x, int64_t d, bool keepdim) {
  OpScope scope("argmax", x);
  detail::no_forward_rule_needed();
  return kernel::argmax(x, d, keepdim);
}

// ---- softmax / log_softmax ----
// softmax:     dx = y * (g - sum(g * y))
// log_softmax: dx = g - exp(y) * sum(g)
struct SoftmaxBackward final : Node {
  EMBER_NODE_NAME(SoftmaxBackward)
  SavedTensor out;
  int64_t dim;
  bool log;
  double scale;  // scaled_softmax: the derivative of scale * x comes out as a factor
  SoftmaxBackward(const Tensor& o, int64_t d, bool l, double s = 1.0) : out(o), dim(d), log(l), scale(s) {}
  std::vector<SavedRef> saved() override { return {{"output", &out}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor y = out.get(*this);
    if (backward_composes()) {  // the formulas above, in ember ops
      if (log) return {g - exp(y) * sum(g, {dim}, true)};
      Tensor dx = y * (g - sum(g * y, {dim}, true));  // masked keys: y = 0, so 0
      return {scale == 1.0 ? dx : dx * scale};
    }
    return {kernel::softmax_backward(y, g, dim, log, scale)};  // fused: see tensor/reduce.cpp
  }
};
Tensor scaled_softmax(const Tensor& x, double scale, bool causal) {
  OpScope scope("scaled_softmax", x);
  Tensor out = kernel::scaled_softmax(x, scale, causal);
  if (needs_grad({x})) record(out, std::make_shared<SoftmaxBackward>(out, x.dim() - 1, false, scale), {x});
  forward_rule(out, [&] {  // masked keys: y = 0, so 0
    Tensor ds = dx(x) * scale;
    return out * (ds - sum(ds * out, {-1}, true));
  }, x);
  return out;
}
Tensor softmax(const Tensor& x, int64_t d) {
  OpScope scope("softmax", x);
  Tensor out = kernel::softmax(x, d);
  if (needs_grad({x})) record(out, std::make_shared<SoftmaxBackward>(out, wrap_dim_or_scalar(d, x.dim(), "softmax"), false), {x});
  forward_rule(out, [&] {
    const int64_t w = wrap_dim_or_scalar(d, x.dim(), "softmax");
    return out * (dx(x) - sum(dx(x) * out, {w}, true));
  }, x);
  return out;
}
Tensor log_softmax(const Tensor& x, int64_t d) {
  OpScope scope("log_softmax", x);
  Tensor out = kernel::log_softmax(x, d);
  if (needs_grad({x}))
    record(out, std::make_shared<SoftmaxBackward>(out, wrap_dim_or_scalar(d, x.dim(), "log_softmax"), true), {x});
  forward_rule(out, [&] {
    const int64_t w = wrap_dim_or_scalar(d, x.dim(), "log_softmax");
    return dx(x) - sum(exp(out) * dx(x), {w}, true);
  }, x);
  return out;
}

}  // namespace ember
