// Binary elementwise ops with broadcasting. Each node states the op's
// derivative once, one map per operand: d_a(v, a, b, y) is what a small
// change v of a does to the output y (d_b the same for b). Backward applies
// them to grad_out (autograd/elementwise_rule.h); forward mode (chapter 14:
// skip it on a first reading) applies the same maps to the tangents. Gradients come in the *broadcast* shape;
// the engine sums them back to each input's shape (kernel::sum_to), so no
// rule here has to think about broadcasting.
#include "autograd/batching.h"
#include "autograd/elementwise_rule.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

using kernel::Binary;

// ---- add / sub: d(a + alpha b) = da + alpha db ----
struct AddBackward final : BinaryBackward<AddBackward, 0, 0> {
  EMBER_NODE_NAME(AddBackward)
  double alpha;  // 1 for add, -1 for sub
  explicit AddBackward(double al) : alpha(al) {}
  static Tensor d_a(const Tensor& v, const Tensor&, const Tensor&, const Tensor&) { return v; }
  Tensor d_b(const Tensor& v, const Tensor&, const Tensor&, const Tensor&) const { return alpha == 1.0 ? v : v * alpha; }
};
Tensor add(const Tensor& a, const Tensor& b) {
  OpScope scope("add", a, b);
  return scope.out(binary_rules(kernel::binary(Binary::Add, a, b), a, b, AddBackward(1.0)));
}
Tensor sub(const Tensor& a, const Tensor& b) {
  OpScope scope("sub", a, b);
  return scope.out(binary_rules(kernel::binary(Binary::Sub, a, b), a, b, AddBackward(-1.0)));
}

// ---- mul: d(a b) = da b + a db ----
struct MulBackward final : BinaryBackward<MulBackward, kB, kA> {
  EMBER_NODE_NAME(MulBackward)
  static Tensor d_a(const Tensor& v, const Tensor&, const Tensor& b, const Tensor&) { return v * b; }
  static Tensor d_b(const Tensor& v, const Tensor& a, const Tensor&, const Tensor&) { return v * a; }
};
Tensor mul(const Tensor& a, const Tensor& b) {
  OpScope scope("mul", a, b);
  return scope.out(binary_rules<MulBackward>(kernel::binary(Binary::Mul, a, b), a, b));
}

// ---- div: d(a / b) = da / b - a db / b^2 ----
struct DivBackward final : BinaryBackward<DivBackward, kB, kA | kB> {
  EMBER_NODE_NAME(DivBackward)
  static Tensor d_a(const Tensor& v, const Tensor&, const Tensor& b, const Tensor&) { return v / b; }
  static Tensor d_b(const Tensor& v, const Tensor& a, const Tensor& b, const Tensor&) { return -v * a / (b * b); }
};
Tensor div(const Tensor& a, const Tensor& b) {
  OpScope scope("div", a, b);
  return scope.out(binary_rules<DivBackward>(kernel::binary(Binary::Div, a, b), a, b));
}

// ---- pow: d(a^b) = b a^(b-1) da + a^b log(a) db ----
struct PowBackward final : BinaryBackward<PowBackward, kA | kB, kA | kOut> {
  EMBER_NODE_NAME(PowBackward)
  static Tensor d_a(const Tensor& v, const Tensor& a, const Tensor& b, const Tensor&) { return v * b * pow(a, b - 1.0); }
  static Tensor d_b(const Tensor& v, const Tensor& a, const Tensor&, const Tensor& y) { return v * y * log(a); }
};
Tensor pow(const Tensor& a, const Tensor& b) {
  OpScope scope("pow", a, b);
  return scope.out(binary_rules<PowBackward>(kernel::binary(Binary::Pow, a, b), a, b));
}

// ---- maximum / minimum: the change of the larger (smaller) input; ties take half of each ----
namespace {
// a's share: 1 where a wins, 0.5 on ties, 0 where b wins (in the dtype of the change v)
Tensor share_of_a(const Tensor& a, const Tensor& b, bool is_max, DType dt) {
  auto c = [&](double v) { return scalar_tensor(v, dt); };
  return where(is_max ? gt(a, b) : lt(a, b), c(1.0), where(eq(a, b), c(0.5), c(0.0)));
}
}  // namespace
struct MaximumBackward final : BinaryBackward<MaximumBackward, kA | kB, kA | kB> {
  EMBER_NODE_NAME(MaximumBackward)
  bool is_max;
  explicit MaximumBackward(bool m) : is_max(m) {}
  Tensor d_a(const Tensor& v, const Tensor& a, const Tensor& b, const Tensor&) const {
    return v * share_of_a(a, b, is_max, v.dtype());
  }
  Tensor d_b(const Tensor& v, const Tensor& a, const Tensor& b, const Tensor&) const {
    return v * (1.0 - share_of_a(a, b, is_max, v.dtype()));
  }
};
Tensor maximum(const Tensor& a, const Tensor& b) {
  OpScope scope("maximum", a, b);
  return scope.out(binary_rules(kernel::binary(Binary::Maximum, a, b), a, b, MaximumBackward(true)));
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  OpScope scope("minimum", a, b);
  return scope.out(binary_rules(kernel::binary(Binary::Minimum, a, b), a, b, MaximumBackward(false)));
}

// ---- operators and scalar forms: unary ops with the scalar as a parameter ----
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }

// d(a + s) = da
struct AddScalarBackward final : UnaryBackward<AddScalarBackward, Keep::Nothing> {
  EMBER_NODE_NAME(AddScalarBackward)
  static Tensor d(const Tensor& v, const Tensor&, const Tensor&) { return v; }
};
Tensor operator+(const Tensor& a, double s) {
  OpScope scope("add", a, s);
  return scope.out(unary_rules<AddScalarBackward>(kernel::binary_scalar(Binary::Add, a, s), a));
}
Tensor operator-(const Tensor& a, double s) {
  OpScope scope("sub", a, s);
  return scope.out(unary_rules<AddScalarBackward>(kernel::binary_scalar(Binary::Sub, a, s), a));
}
Tensor operator+(double s, const Tensor& a) { return a + s; }

// d(s a) = s da
struct MulScalarBackward final : UnaryBackward<MulScalarBackward, Keep::Nothing> {
  EMBER_NODE_NAME(MulScalarBackward)
  double s;
  explicit MulScalarBackward(double v) : s(v) {}
  Tensor d(const Tensor& v, const Tensor&, const Tensor&) const { return v * s; }
};
Tensor operator*(const Tensor& a, double s) {
  OpScope scope("mul", a, s);
  return scope.out(unary_rules(kernel::binary_scalar(Binary::Mul, a, s), a, MulScalarBackward(s)));
}
Tensor operator*(double s, const Tensor& a) { return a * s; }
Tensor operator-(double s, const Tensor& a) {  // d(s - a) = -da
  OpScope scope("rsub", s, a);
  return scope.out(unary_rules(kernel::binary_scalar(Binary::Sub, a, s, /*scalar_first=*/true), a, MulScalarBackward(-1.0)));
}

// d(a / s) = da / s
struct DivScalarBackward final : UnaryBackward<DivScalarBackward, Keep::Nothing> {
  EMBER_NODE_NAME(DivScalarBackward)
  double s;
  explicit DivScalarBackward(double v) : s(v) {}
  Tensor d(const Tensor& v, const Tensor&, const Tensor&) const { return v / s; }
};
Tensor operator/(const Tensor& a, double s) {
  OpScope scope("div", a, s);
  return scope.out(unary_rules(kernel::binary_scalar(Binary::Div, a, s), a, DivScalarBackward(s)));
}

// d(s / a) = -(s / a) / a da = -y / a da
struct RDivScalarBackward final : UnaryBackward<RDivScalarBackward, Keep::Both> {
  EMBER_NODE_NAME(RDivScalarBackward)
  static Tensor d(const Tensor& v, const Tensor& a, const Tensor& y) { return -v * y / a; }
};
Tensor operator/(double s, const Tensor& a) {
  OpScope scope("rdiv", s, a);
  return scope.out(unary_rules<RDivScalarBackward>(kernel::binary_scalar(Binary::Div, a, s, /*scalar_first=*/true), a));
}

// d(a^e) = e a^(e-1) da
struct PowScalarBackward final : UnaryBackward<PowScalarBackward, Keep::Input> {
  EMBER_NODE_NAME(PowScalarBackward)
  double e;
  explicit PowScalarBackward(double v) : e(v) {}
  Tensor d(const Tensor& v, const Tensor& a, const Tensor&) const {
    return e == 2.0 ? v * a * 2.0 : v * e * pow(a, e - 1.0);
  }
};
Tensor pow(const Tensor& a, double e) {
  OpScope scope("pow", a, e);
  return scope.out(unary_rules(kernel::binary_scalar(Binary::Pow, a, e), a, PowScalarBackward(e)));
}

// ---- comparisons: bool results, no gradient ----
#define EMBER_COMPARE(NAME, OP)                             \
  Tensor NAME(const Tensor& a, const Tensor& b) {           \
    OpScope scope(#NAME, a, b);                             \
    detail::no_forward_rule_needed(); /* a bool result */   \
    return scope.out(kernel::compare(kernel::Compare::OP, a, b)); \
  }                                                         \
  Tensor NAME(const Tensor& a, double s) {                  \
    OpScope scope(#NAME, a, s);                             \
    detail::no_forward_rule_needed();                       \
    return scope.out(kernel::compare_scalar(kernel::Compare::OP, a, s)); \
  }
EMBER_COMPARE(eq, Eq)
EMBER_COMPARE(ne, Ne)
EMBER_COMPARE(lt, Lt)
EMBER_COMPARE(le, Le)
EMBER_COMPARE(gt, Gt)
EMBER_COMPARE(ge, Ge)
#undef EMBER_COMPARE

// ---- vmap (autograd/batching.h): pad the batched operands to one rank,
// then broadcasting lines the samples up; a scalar operand changes nothing ----
void batching::detail::add_binary_batching_rules(Rules& r) {
  r.add({"add", "sub", "mul", "div", "pow", "maximum", "minimum", "rsub", "rdiv", "eq", "ne", "lt", "le", "gt", "ge"},
        &broadcast);
}

}  // namespace ember
