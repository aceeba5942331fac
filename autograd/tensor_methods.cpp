// The Tensor member functions that belong to autograd: backward, hooks,
// in-place writes (guarded), printing with grad_fn, and the shortcuts to
// autograd/ops.h.
#include "autograd/engine.h"
#include "autograd/forward.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  std::string s = format_values(*this);
  if (requires_grad() && is_leaf()) s += ", requires_grad=True";
  if (grad_fn()) s += std::string(", grad_fn=<") + grad_fn()->name() + ">";
  return s + ")";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

void Tensor::backward(const Tensor& grad_output, bool retain_graph, bool create_graph) const {
  ember::backward(*this, grad_output, retain_graph, create_graph);
}

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(), "retain_grad", "the tensor of shape " << shape_str(shape()) << " does not require grad");
  if (is_leaf()) return;  // leaves keep their grad anyway
  grad_fn()->retains_grad = true;
}

void Tensor::register_hook(GradHook hook) const {
  EMBER_CHECK(requires_grad(), "register_hook",
              "cannot register a hook on a tensor of shape " << shape_str(shape()) << " that does not require grad");
  if (is_leaf()) impl_->hooks.push_back(std::move(hook));
  else grad_fn()->hooks.push_back(std::move(hook));
}


// ---- in-place writes ----
namespace {
void check_inplace(const Tensor& t, const char* op) {
  EMBER_CHECK(t.defined(), op, "tensor is undefined");
  if (is_grad_enabled() && t.requires_grad()) {
    EMBER_CHECK(!t.is_leaf(), op,
                "a leaf tensor of shape " << shape_str(t.shape())
                                          << " that requires grad is being used in an in-place operation; "
                                             "do it inside NoGradGuard (e.g. an optimizer step)");
    EMBER_FAIL(op, "in-place operation on a tensor of shape "
                       << shape_str(t.shape()) << " that is part of the graph (grad_fn=" << t.grad_fn()->name()
                       << "); ember does not rewrite graphs in place: use the out-of-place op");
  }
  kernel::check_no_internal_overlap(t, op);
}

// Forward mode: an in-place write updates the tangent of the memory it
// writes, in place as well (so every view of it sees the change). `others`
// are the operands whose tangents flow in.
bool tangent_moves(const Tensor& self, std::initializer_list<Tensor> others) {
  if (!detail::tangents_propagate()) return false;
  if (detail::has_tangent(self)) return true;
  for (const Tensor& o : others)
    if (detail::has_tangent(o)) return true;
  return false;
}
// Writes `value` (computed from the old values) into self's tangent.
template <typename F>
void update_tangent(const Tensor& self, const F& value) {
  Tensor t = detail::tangent_for_write(self);
  detail::ForwardRuleScope plain;
  Tensor v = value(t);
  kernel::copy_(t, v, "forward rule");
}
}  // namespace

Tensor& Tensor::fill_(double value) {
  check_inplace(*this, "fill_");
  if (tangent_moves(*this, {})) update_tangent(*this, [](const Tensor& t) { return zeros_like(t); });  // a constant
  kernel::fill_(*this, value);
  return *this;
}
Tensor& Tensor::zero_() {
  check_inplace(*this, "zero_");
  if (tangent_moves(*this, {})) update_tangent(*this, [](const Tensor& t) { return zeros_like(t); });
  kernel::fill_(*this, 0.0);
  return *this;
}
Tensor& Tensor::copy_(const Tensor& src) {
  check_inplace(*this, "copy_");
  EMBER_CHECK(src.defined(), "copy_", "the source tensor is undefined");
  kernel::check_no_overlap(*this, src, "copy_", "source", /*allow_same=*/true);
  if (tangent_moves(*this, {src})) update_tangent(*this, [&](const Tensor&) { return dx(src); });
  kernel::copy_(*this, src, "copy_");
  return *this;
}
Tensor& Tensor::add_(const Tensor& other, double alpha) {
  check_inplace(*this, "add_");
  Tensor o = alpha == 1.0 ? other : kernel::binary_scalar(kernel::Binary::Mul, other, alpha);
  Shape b = broadcast_shapes(shape(), other.shape(), "add_");
  EMBER_CHECK(b == shape(), "add_",
              "other of shape " << shape_str(other.shape()) << " cannot be broadcast to " << shape_str(shape()));
  if (tangent_moves(*this, {other})) update_tangent(*this, [&](const Tensor& t) { return t + dx(other) * alpha; });
  kernel::copy_(*this, kernel::binary(kernel::Binary::Add, *this, o), "add_");
  return *this;
}
Tensor& Tensor::add_(double value) {
  check_inplace(*this, "add_");
  kernel::copy_(*this, kernel::binary_scalar(kernel::Binary::Add, *this, value), "add_");
  return *this;
}
Tensor& Tensor::mul_(const Tensor& other) {
  check_inplace(*this, "mul_");
  Shape b = broadcast_shapes(shape(), other.shape(), "mul_");
  EMBER_CHECK(b == shape(), "mul_",
              "other of shape " << shape_str(other.shape()) << " cannot be broadcast to " << shape_str(shape()));
  if (tangent_moves(*this, {other}))  // d(x y) = dx y + x dy, from the old x
    update_tangent(*this, [&](const Tensor& t) { return t * other + *this * dx(other); });
  kernel::copy_(*this, kernel::binary(kernel::Binary::Mul, *this, other), "mul_");
  return *this;
}
Tensor& Tensor::mul_(double value) {
  check_inplace(*this, "mul_");
  if (tangent_moves(*this, {})) update_tangent(*this, [&](const Tensor& t) { return t * value; });
  kernel::copy_(*this, kernel::binary_scalar(kernel::Binary::Mul, *this, value), "mul_");
  return *this;
}

// ---- every op as a method: each one calls the free function ----
Tensor Tensor::to(DType dt) const { return ember::to(*this, dt); }
Tensor Tensor::contiguous() const { return ember::contiguous(*this); }
Tensor Tensor::clone() const { return ember::clone(*this); }
Tensor Tensor::reshape(const Shape& s) const { return ember::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return ember::view(*this, s); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return ember::transpose(*this, d0, d1); }
Tensor Tensor::t() const {
  EMBER_CHECK(dim() <= 2, "t", "expects a tensor with <= 2 dims, got shape " << shape_str(shape()));
  return dim() < 2 ? *this : ember::transpose(*this, 0, 1);
}
Tensor Tensor::permute(const Shape& dims) const { return ember::permute(*this, dims); }
Tensor Tensor::unsqueeze(int64_t d) const { return ember::unsqueeze(*this, d); }
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return ember::squeeze(*this, d); }
Tensor Tensor::expand(const Shape& s) const { return ember::expand(*this, s); }
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const { return ember::narrow(*this, d, start, length); }
Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  return ember::slice(*this, d, start, end, step);
}
Tensor Tensor::select(int64_t d, int64_t index) const { return ember::select(*this, d, index); }
Tensor Tensor::flatten(int64_t start, int64_t end) const { return ember::flatten(*this, start, end); }

Tensor Tensor::add(const Tensor& o) const { return ember::add(*this, o); }
Tensor Tensor::sub(const Tensor& o) const { return ember::sub(*this, o); }
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return ember::div(*this, o); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(double e) const { return ember::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }
Tensor Tensor::neg() const { return ember::neg(*this); }
Tensor Tensor::exp() const { return ember::exp(*this); }
Tensor Tensor::log() const { return ember::log(*this); }
Tensor Tensor::sqrt() const { return ember::sqrt(*this); }
Tensor Tensor::rsqrt() const { return ember::rsqrt(*this); }
Tensor Tensor::abs() const { return ember::abs(*this); }
Tensor Tensor::sin() const { return ember::sin(*this); }
Tensor Tensor::cos() const { return ember::cos(*this); }
Tensor Tensor::tanh() const { return ember::tanh(*this); }
Tensor Tensor::sigmoid() const { return ember::sigmoid(*this); }
Tensor Tensor::relu() const { return ember::relu(*this); }
Tensor Tensor::erf() const { return ember::erf(*this); }
Tensor Tensor::clamp(std::optional<double> lo, std::optional<double> hi) const { return ember::clamp(*this, lo, hi); }
Tensor Tensor::eq(const Tensor& o) const { return ember::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return ember::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return ember::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return ember::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return ember::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return ember::ge(*this, o); }
Tensor Tensor::eq(double s) const { return ember::eq(*this, s); }
Tensor Tensor::ne(double s) const { return ember::ne(*this, s); }
Tensor Tensor::lt(double s) const { return ember::lt(*this, s); }
Tensor Tensor::le(double s) const { return ember::le(*this, s); }
Tensor Tensor::gt(double s) const { return ember::gt(*this, s); }
Tensor Tensor::ge(double s) const { return ember::ge(*this, s); }

Tensor Tensor::where(const Tensor& cond, const Tensor& other) const { return ember::where(cond, *this, other); }
Tensor Tensor::masked_fill(const Tensor& mask, double value) const { return ember::masked_fill(*this, mask, value); }
Tensor Tensor::tril(int64_t k) const { return ember::tril(*this, k); }
Tensor Tensor::triu(int64_t k) const { return ember::triu(*this, k); }

Tensor Tensor::sum_to(const Shape& s) const { return ember::sum_to(*this, s); }
Tensor Tensor::sum() const { return ember::sum(*this); }
Tensor Tensor::sum(const Shape& dims, bool keepdim) const { return ember::sum(*this, dims, keepdim); }
Tensor Tensor::mean() const { return ember::mean(*this); }
Tensor Tensor::mean(const Shape& dims, bool keepdim) const { return ember::mean(*this, dims, keepdim); }
Tensor Tensor::var(const Shape& dims, int64_t correction, bool keepdim) const {
  return ember::var(*this, dims, correction, keepdim);
}
Tensor Tensor::norm(double p, const Shape& dims, bool keepdim) const { return ember::norm(*this, p, dims, keepdim); }
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::min() const { return ember::min(*this); }
std::pair<Tensor, Tensor> Tensor::max(int64_t d, bool keepdim) const { return ember::max(*this, d, keepdim); }
std::pair<Tensor, Tensor> Tensor::min(int64_t d, bool keepdim) const { return ember::min(*this, d, keepdim); }
Tensor Tensor::argmax() const { return ember::argmax(*this); }
Tensor Tensor::argmax(int64_t d, bool keepdim) const { return ember::argmax(*this, d, keepdim); }
Tensor Tensor::softmax(int64_t d) const { return ember::softmax(*this, d); }
Tensor Tensor::log_softmax(int64_t d) const { return ember::log_softmax(*this, d); }

Tensor Tensor::matmul(const Tensor& o) const { return ember::matmul(*this, o); }
Tensor Tensor::index_select(int64_t d, const Tensor& ids) const { return ember::index_select(*this, d, ids); }
Tensor Tensor::gather(int64_t d, const Tensor& ids) const { return ember::gather(*this, d, ids); }
Tensor Tensor::index_add(int64_t d, const Tensor& ids, const Tensor& src) const {
  return ember::index_add(*this, d, ids, src);
}
Tensor Tensor::scatter_add(int64_t d, const Tensor& ids, const Tensor& src) const {
  return ember::scatter_add(*this, d, ids, src);
}
Tensor& Tensor::index_add_(int64_t d, const Tensor& ids, const Tensor& src) { return ember::index_add_(*this, d, ids, src); }

}  // namespace ember
