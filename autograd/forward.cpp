#include "autograd/forward.h"

#include <cstring>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

namespace detail {
int dual_level_depth = 0;
thread_local bool in_forward_rule = false;
thread_local bool capture_composes = false;
thread_local uint64_t rules_run = 0;
thread_local const char* op_without_forward_rule = nullptr;

void missing_forward_rule() {
  const char* op = op_without_forward_rule;
  op_without_forward_rule = nullptr;
  EMBER_FAIL("forward mode", "op '" << op
                                    << "' has no forward rule: its inputs carry tangents and it gave its output none, "
                                       "so jvp, jacfwd and hessian cannot differentiate through it; write one beside "
                                       "its record() (forward_rule, autograd/forward.h)");
}
}  // namespace detail

namespace {
// A tensor with t's geometry over the memory m.
Tensor over(const std::shared_ptr<Storage>& m, const Tensor& t) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = m;
  impl->offset = t.storage_offset();
  impl->shape = t.shape();
  impl->strides = t.stride();
  impl->dtype = t.dtype();
  return Tensor(std::move(impl));
}

void attach(const Tensor& t, std::shared_ptr<Storage> m) { tangents::attach(t.storage().get(), std::move(m)); }

// Gives t's memory a tangent of zeros and returns t's view of it.
Tensor zero_tangent(const Tensor& t) {
  const size_t nbytes = t.storage()->nbytes();
  auto m = std::make_shared<Storage>(nbytes);
  std::memset(m->data(), 0, nbytes);
  attach(t, m);
  return over(m, t);
}

void check_floating(const Tensor& t, const char* op, const char* what) {
  EMBER_CHECK(t.defined(), op, what << " is undefined");
  EMBER_CHECK(is_floating(t.dtype()), op,
              what << " must be float32 or float64, got " << dtype_name(t.dtype()) << " of shape "
                   << shape_str(t.shape()));
}
}  // namespace

DualLevel::DualLevel() {
  EMBER_CHECK(detail::dual_level_depth == 0, "DualLevel",
              "a dual level is already open; forward mode supports one level at a time (forward-over-forward "
              "is not supported: use hessian(), which is forward-over-reverse)");
  detail::dual_level_depth = 1;
}

DualLevel::~DualLevel() {
  tangents::clear();
  detail::op_without_forward_rule = nullptr;
  detail::dual_level_depth = 0;
}

bool forward_level_active() { return detail::dual_level_depth > 0; }

Tensor make_dual(const Tensor& primal, const Tensor& tangent_value) {
  EMBER_CHECK(detail::dual_level_depth > 0, "make_dual",
              "no dual level is open: create a DualLevel first (tangents live only inside one)");
  check_floating(primal, "make_dual", "the primal");
  check_floating(tangent_value, "make_dual", "the tangent");
  EMBER_CHECK(primal.shape() == tangent_value.shape(), "make_dual",
              "the tangent's shape " << shape_str(tangent_value.shape()) << " differs from the primal's "
                                     << shape_str(primal.shape()));
  Tensor dual;
  const bool recording = is_grad_enabled();
  {
    detail::ForwardRuleScope no_tangents;  // the copy itself carries none...
    GradModeGuard graph(recording);        // ...but stays in the primal's graph
    dual = detail::copy_with_layout(primal);
  }
  detail::set_tangent(dual, tangent_value);
  return dual;
}

Tensor tangent(const Tensor& t) {
  detail::check_forward_rules();
  if (!detail::has_tangent(t)) return Tensor();
  return over(tangents::of(t.storage().get()), t);
}

UnpackedDual unpack_dual(const Tensor& t) { return {t, tangent(t)}; }

Tensor dx(const Tensor& x) {
  if (detail::has_tangent(x)) return over(tangents::of(x.storage().get()), x);
  return zeros(x.shape(), is_floating(x.dtype()) ? x.dtype() : kFloat64);
}

Tensor plus(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return a + b;
}

namespace detail {

ForwardRuleScope::ForwardRuleScope() : prev_grad_(is_grad_enabled()), prev_rule_(in_forward_rule) {
  set_grad_enabled(false);
  in_forward_rule = true;
}
ForwardRuleScope::~ForwardRuleScope() {
  set_grad_enabled(prev_grad_);
  in_forward_rule = prev_rule_;
}

void set_tangent(const Tensor& out, const Tensor& t) {
  if (!t.defined() || !out.defined() || !out.storage() || has_tangent(out)) return;
  // A term of a broadcasting op may come in its input's shape (d(a + b) with
  // only a's tangent): it is broadcast to the output's.
  EMBER_CHECK(t.shape() == out.shape() || broadcast_shapes(t.shape(), out.shape(), "forward rule") == out.shape(),
              "forward rule",
              "a tangent of shape " << shape_str(t.shape()) << " for an output of shape " << shape_str(out.shape()));
  ForwardRuleScope plain;
  Tensor v = t.dtype() == out.dtype() ? t : kernel::to(t, out.dtype());
  const size_t nbytes = out.storage()->nbytes();
  // A freshly computed tangent laid out exactly like the output: adopt its
  // memory. Otherwise (a tangent shared with an input, another layout) copy.
  const bool adopt = v.storage() && v.storage().use_count() == 1 && v.shape() == out.shape() &&
                     v.storage()->nbytes() == nbytes && v.storage_offset() == out.storage_offset() &&
                     v.stride() == out.stride() && !has_tangent(v);
  if (adopt) {
    attach(out, v.storage());
    return;
  }
  kernel::copy_(zero_tangent(out), v, "forward rule");
}

Tensor tangent_for_write(const Tensor& t) {
  return has_tangent(t) ? over(tangents::of(t.storage().get()), t) : zero_tangent(t);
}

}  // namespace detail

}  // namespace ember
