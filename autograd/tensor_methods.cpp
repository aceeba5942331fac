// The Tensor member functions that belong to autograd: backward, hooks,
// in-place writes (guarded), printing with grad_fn, and the shortcuts to
// autograd/ops.h.
#include "autograd/checkpoint.h"
#include "autograd/engine.h"
#include "autograd/forward.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/observer.h"
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
  detail::before_write(t, op);
  if (AutogradObserver* o = autograd_observer()) o->writes_in_place(op, t);  // a checkpointed function's inputs are refused (autograd/checkpoint.h)
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
  kernel::binary_(kernel::Binary::Add, *this, o);
  return *this;
}
Tensor& Tensor::add_(double value) {
  check_inplace(*this, "add_");
  kernel::binary_scalar_(kernel::Binary::Add, *this, value);
  return *this;
}
Tensor& Tensor::mul_(const Tensor& other) {
  check_inplace(*this, "mul_");
  Shape b = broadcast_shapes(shape(), other.shape(), "mul_");
  EMBER_CHECK(b == shape(), "mul_",
              "other of shape " << shape_str(other.shape()) << " cannot be broadcast to " << shape_str(shape()));
  if (tangent_moves(*this, {other}))  // d(x y) = dx y + x dy, from the old x
    update_tangent(*this, [&](const Tensor& t) { return t * other + *this * dx(other); });
  kernel::binary_(kernel::Binary::Mul, *this, other);
  return *this;
}
Tensor& Tensor::mul_(double value) {
  check_inplace(*this, "mul_");
  if (tangent_moves(*this, {})) update_tangent(*this, [&](const Tensor& t) { return t * value; });
  kernel::binary_scalar_(kernel::Binary::Mul, *this, value);
  return *this;
}

// ---- every op of tensor/op_list.h as a method: each one calls the function ----
#define EMBER_DEFAULT(v)
#define EMBER_SELF_AND(...) (*this __VA_OPT__(, ) __VA_ARGS__)
#define EMBER_OP(R, name, params, args) \
  R Tensor::name params const { return ember::name EMBER_SELF_AND args; }
#include "tensor/op_list.h"
#undef EMBER_OP
#undef EMBER_SELF_AND
#undef EMBER_DEFAULT

Tensor Tensor::t() const {
  EMBER_CHECK(dim() <= 2, "t", "expects a tensor with <= 2 dims, got shape " << shape_str(shape()));
  return dim() < 2 ? *this : ember::transpose(*this, 0, 1);
}
Tensor Tensor::where(const Tensor& cond, const Tensor& other) const { return ember::where(cond, *this, other); }
Tensor& Tensor::index_add_(int64_t d, const Tensor& ids, const Tensor& src) { return ember::index_add_(*this, d, ids, src); }

}  // namespace ember
