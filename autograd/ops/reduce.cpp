// Reductions and softmax. A reduction's backward spreads grad_out back over
// the reduced elements: equally (sum, mean), to the selected one (max/min),
// or weighted by the local derivative (var, norm, softmax).
#include <cmath>

#include "autograd/batching.h"
#include "autograd/forward.h"
#include "autograd/linear_rule.h"
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
  OpScope scope("sum_to", x, shape);
  if (x.shape() == shape) {
    detail::no_forward_rule_needed();  // x itself, with its tangent
    return scope.out(x);
  }
  EMBER_CHECK(broadcast_shapes(shape, x.shape(), "sum_to") == x.shape(), "sum_to",
              "shape " << shape_str(x.shape()) << " is not a broadcast of " << shape_str(shape));
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  Shape dims;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d < lead || (shape[static_cast<size_t>(d - lead)] == 1 && x.shape()[static_cast<size_t>(d)] != 1))
      dims.push_back(d);
  Tensor s = dims.empty() ? x : sum(x, dims, /*keepdim=*/true);
  return scope.out(reshape(s, shape));
}
Tensor sum(const Tensor& x) { return sum(x, {}, false); }
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  OpScope scope("sum", x, dims, keepdim);
  Tensor out = kernel::sum(x, dims, keepdim);
  if (needs_grad({x})) record(out, std::make_shared<SumBackward>(x.shape(), dims, keepdim, 1.0), {x});
  forward_rule(out, [&] { return sum(dx(x), dims, keepdim); }, x);
  return scope.out(out);
}
Tensor mean(const Tensor& x) { return mean(x, {}, false); }
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) {
  OpScope scope("mean", x, dims, keepdim);
  Tensor out = kernel::mean(x, dims, keepdim);
  if (needs_grad({x})) {
    const double scale = 1.0 / static_cast<double>(reduced_count(x.shape(), dims));
    record(out, std::make_shared<SumBackward>(x.shape(), dims, keepdim, scale), {x});
  }
  forward_rule(out, [&] { return mean(dx(x), dims, keepdim); }, x);
  return scope.out(out);
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
  OpScope scope("var", x, dims, correction, keepdim);
  Tensor out = kernel::var(x, dims, correction, keepdim);
  if (needs_grad({x})) record(out, std::make_shared<VarBackward>(x, dims, correction, keepdim), {x});
  forward_rule(out, [&] {  // d var = 2/(K - correction) sum((x - mean) dx)
    const double denom = static_cast<double>(reduced_count(x.shape(), dims) - correction);
    return sum((x - mean(x, dims, true)) * dx(x), dims, keepdim) * (2.0 / denom);
  }, x);
  return scope.out(out);
}

// ---- norm ----
// d ||x||_p = sign(x) |x|^(p-1) / ||x||^(p-1)   (p = 2: x / ||x||; 0 where the norm is 0)
// p = inf: ||x|| = max |x|; sign(x) at the elements that attain it, shared equally among ties
namespace {
// d ||x|| / d x, in x's shape (both rules multiply it: by g, or by dx and sum)
Tensor norm_derivative(const Tensor& X, const Tensor& norm_out, double p, const Shape& dims, bool keepdim) {
  Tensor n = expand_back(norm_out, X.shape(), dims, keepdim);
  Tensor sign = detail::sign_for_rule(X);
  Tensor local;
  if (std::isinf(p)) {
    Tensor at_max = to(eq(abs(X), n), X.dtype());
    local = sign * at_max / expand_back(sum(at_max, dims, keepdim), X.shape(), dims, keepdim);
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
  OpScope scope("norm", x, p, dims, keepdim);
  Tensor out = kernel::norm(x, p, dims, keepdim);
  if (needs_grad({x})) record(out, std::make_shared<NormBackward>(x, out, p, dims, keepdim), {x});
  forward_rule(out, [&] { return sum(norm_derivative(x, out, p, dims, keepdim) * dx(x), dims, keepdim); }, x);
  return scope.out(out);
}

// ---- max / min: linear in x given the winners (autograd/linear_rule.h) ----
namespace {
// L v: v at the index that won (the first one on ties)
Tensor pick(const Tensor& v, int64_t dim, bool keepdim, const Tensor& indices) {
  if (v.dim() == 0) return v;
  Tensor at = gather(v, dim, keepdim ? indices : unsqueeze(indices, dim));
  return keepdim ? at : squeeze(at, dim);
}
}  // namespace
// Lᵀ g: grad_out scattered to the index that won
struct MaxBackward final : LinearBackward {
  EMBER_NODE_NAME(MaxBackward)
  Shape in_shape;
  int64_t dim;
  bool keepdim;
  SavedTensor indices;
  MaxBackward(Shape s, int64_t d, bool k, const Tensor& i) : in_shape(std::move(s)), dim(d), keepdim(k), indices(i) {}
  std::vector<SavedRef> saved() override { return {{"indices", &indices}}; }
  Tensor linear(const Tensor& v) const override { return pick(v, dim, keepdim, indices.get(*this)); }
  Tensor transposed(const Tensor& g) const override {
    if (in_shape.empty()) return g;
    const Tensor idx = indices.get(*this);
    return kernel::scatter_add(in_shape, dim, keepdim ? idx : kernel::unsqueeze(idx, dim),
                               keepdim ? g : kernel::unsqueeze(g, dim));
  }
  Tensor transposed_by_ops(const Tensor& g) const override {
    if (in_shape.empty()) return g;
    const Tensor idx = indices.get(*this);
    return scatter_add(zeros(in_shape, g.dtype()), dim, keepdim ? idx : unsqueeze(idx, dim), keepdim ? g : unsqueeze(g, dim));
  }
};
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t d, bool keepdim) {
  OpScope scope("max", x, d, keepdim);
  auto [values, indices] = kernel::max(x, d, keepdim);
  const int64_t w = wrap_dim_or_scalar(d, x.dim(), "max");
  if (needs_grad({x})) record(values, std::make_shared<MaxBackward>(x.shape(), w, keepdim, indices), {x});
  forward_rule(values, [&, idx = indices] { return pick(dx(x), w, keepdim, idx); }, x);
  return scope.out(TensorPair{values, indices});
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t d, bool keepdim) {
  OpScope scope("min", x, d, keepdim);
  auto [values, indices] = kernel::min(x, d, keepdim);
  const int64_t w = wrap_dim_or_scalar(d, x.dim(), "min");
  if (needs_grad({x})) record(values, std::make_shared<MaxBackward>(x.shape(), w, keepdim, indices), {x});
  forward_rule(values, [&, idx = indices] { return pick(dx(x), w, keepdim, idx); }, x);
  return scope.out(TensorPair{values, indices});
}
Tensor max(const Tensor& x) {
  OpScope scope("max", x);
  EMBER_CHECK(x.numel() > 0, "max", "cannot take the max of an empty tensor of shape " << shape_str(x.shape()));
  return scope.out(reshape(max(reshape(x, {-1}), 0, false).first, {}));
}
Tensor min(const Tensor& x) {
  OpScope scope("min", x);
  EMBER_CHECK(x.numel() > 0, "min", "cannot take the min of an empty tensor of shape " << shape_str(x.shape()));
  return scope.out(reshape(min(reshape(x, {-1}), 0, false).first, {}));
}

Tensor argmax(const Tensor& x) {
  OpScope scope("argmax", x);
  detail::no_forward_rule_needed();  // an index: not differentiable
  return scope.out(kernel::argmax(x, std::nullopt, false));
}
Tensor argmax(const Tensor& x, int64_t d, bool keepdim) {
  OpScope scope("argmax", x, d, keepdim);
  detail::no_forward_rule_needed();
  return scope.out(kernel::argmax(x, d, keepdim));
}

// ---- softmax / log_softmax ----
namespace {
// softmax's derivative: J = diag(y) - y yᵀ is symmetric, so one map is both
// rules, as for an elementwise op (times scale for scaled_softmax):
//   d(v) = y ⊙ (v - Σ_dim v ⊙ y)         masked keys: y = 0, so 0
Tensor softmax_d(const Tensor& v, const Tensor& y, int64_t dim, double scale) {
  Tensor d = y * (v - sum(v * y, {dim}, true));
  return scale == 1.0 ? d : d * scale;
}
// scaled_softmax's with its causal mask: the keys a row does not see are not
// in its softmax, so they neither enter its sum nor get a derivative (0, not
// 0 times a NaN of the row), as the kernel's backward gives.
Tensor masked_softmax_d(const Tensor& v, const Tensor& y, int64_t dim, double scale, bool causal) {
  if (!causal || y.numel() == 0) return softmax_d(v, y, dim, scale);
  const Tensor hidden = triu(ones({y.size(-2), y.size(-1)}, kBool), 1);  // an op: compile/ sees the mask made
  return masked_fill(softmax_d(masked_fill(v, hidden, 0.0), y, dim, scale), hidden, 0.0);
}
// log_softmax's: J = I - 1 pᵀ with p = exp(y), not symmetric, so two:
//   backward  Jᵀ g = g - p Σ_dim g,     forward  J v = v - Σ_dim p ⊙ v
Tensor log_softmax_vjp(const Tensor& g, const Tensor& y, int64_t dim) { return g - exp(y) * sum(g, {dim}, true); }
Tensor log_softmax_jvp(const Tensor& v, const Tensor& y, int64_t dim) { return v - sum(exp(y) * v, {dim}, true); }
}  // namespace
// When nothing records and no tangent travels, the same formulas as one pass
// over rows: kernel::softmax_backward (tensor/reduce.cpp).
struct SoftmaxBackward final : Node {
  EMBER_NODE_NAME(SoftmaxBackward)
  SavedTensor out;
  int64_t dim;
  bool log;
  double scale;  // scaled_softmax: the derivative of scale * x comes out as a factor
  bool causal;   // scaled_softmax's mask
  SoftmaxBackward(const Tensor& o, int64_t d, bool l, double s = 1.0, bool c = false)
      : out(o), dim(d), log(l), scale(s), causal(c) {}
  std::vector<SavedRef> saved() override { return {{"output", &out}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor y = out.get(*this);
    if (!backward_composes())
      return {kernel::softmax_backward(y, g, dim, log, scale, causal && y.numel() > 0 ? y.size(-2) : 0)};
    return {log ? log_softmax_vjp(g, y, dim) : masked_softmax_d(g, y, dim, scale, causal)};
  }
};
Tensor scaled_softmax(const Tensor& x, double scale, bool causal) {
  OpScope scope("scaled_softmax", x, scale, causal);
  Tensor out = kernel::scaled_softmax(x, scale, causal);
  const int64_t last = x.dim() - 1;
  if (needs_grad({x})) record(out, std::make_shared<SoftmaxBackward>(out, last, false, scale, causal), {x});
  forward_rule(out, [&] { return masked_softmax_d(dx(x), out, last, scale, causal); }, x);
  return scope.out(out);
}
Tensor softmax(const Tensor& x, int64_t d) {
  OpScope scope("softmax", x, d);
  Tensor out = kernel::softmax(x, d);
  const int64_t w = wrap_dim_or_scalar(d, x.dim(), "softmax");
  if (needs_grad({x})) record(out, std::make_shared<SoftmaxBackward>(out, w, false), {x});
  forward_rule(out, [&] { return softmax_d(dx(x), out, w, 1.0); }, x);
  return scope.out(out);
}
Tensor log_softmax(const Tensor& x, int64_t d) {
  OpScope scope("log_softmax", x, d);
  Tensor out = kernel::log_softmax(x, d);
  const int64_t w = wrap_dim_or_scalar(d, x.dim(), "log_softmax");
  if (needs_grad({x})) record(out, std::make_shared<SoftmaxBackward>(out, w, true), {x});
  forward_rule(out, [&] { return log_softmax_jvp(dx(x), out, w); }, x);
  return scope.out(out);
}

// ---- vmap (autograd/batching.h): a sample's dim d is the batch's d + 1 ----
namespace {
using batching::shift;
using batching::shift_all;
// sum, mean, var (their dims are argument 1) and norm (argument 2)
batching::Result sum_batched(const batching::Call& c) {
  const size_t at = c.op == "norm" ? 2 : 1;
  if (c.rank(0) == 0) return batching::of_one_element(c, at);  // a 0-d sample: the sum of one number
  std::vector<OpArg> args = c.args;
  args[at] = shift_all(std::get<Shape>(c.args[at]), c.rank(0));
  return batching::batched(c.run(args));
}
// sum_to(x, shape): the sample's extra leading dims summed away, then the size-1 ones
batching::Result sum_to_batched(const batching::Call& c) {
  const Shape& shape = std::get<Shape>(c.args[1]);
  const int64_t lead = c.rank(0) - static_cast<int64_t>(shape.size());
  Tensor x = c.tensor(0);
  const Shape target = batching::with_batch(shape, c.size);
  if (lead > 0) {
    Shape dims;
    bool ones = true;  // dims of size 1 only: summing them is a reshape
    for (int64_t d = 1; d <= lead; ++d) dims.push_back(d), ones = ones && x.size(d) == 1;
    Shape rest(x.shape().begin() + 1 + lead, x.shape().end());
    x = ones ? x.reshape(batching::with_batch(rest, c.size)) : sum(x, dims, false);
  }
  return batching::batched({x.shape() == target ? x : sum_to(x, target)});
}
// argmax(x) over every element: an index into one sample's elements
batching::Result argmax_batched(const batching::Call& c) {
  if (c.args.size() == 3) return batching::shifted_dim(c);
  if (c.rank(0) == 0) return {};
  return batching::batched({argmax(c.tensor(0).flatten(1), 1, false)});
}
}  // namespace
void batching::detail::add_reduce_batching_rules(Rules& r) {
  r.add({"sum", "mean", "var", "norm"}, &sum_batched);
  r.add("sum_to", &sum_to_batched);
  r.add({"max", "min", "softmax", "log_softmax"}, &shifted_dim);  // max(x) over everything is made of ops
  r.add("argmax", &argmax_batched);
  r.add("scaled_softmax", &same);  // the last two dims: a sample's own
}

}  // namespace ember
