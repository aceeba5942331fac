// Binary elementwise ops with broadcasting. Each backward returns gradients
// of the *broadcast* shape; the engine sums them back to each input's shape
// (kernel::sum_to), so no rule here has to think about broadcasting.
#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

using kernel::Binary;

// ---- add / sub: d(a + alpha*b) = (g, alpha*g) ----
struct AddBackward final : Node {
  EMBER_NODE_NAME(AddBackward)
  double alpha;  // 1 for add, -1 for sub
  explicit AddBackward(double al) : alpha(al) {}
  std::vector<Tensor> apply(const Tensor& g) override { return {g, alpha == 1.0 ? g : g * alpha}; }
};
Tensor add(const Tensor& a, const Tensor& b) {
  OpScope scope("add", a, b);
  Tensor out = kernel::binary(Binary::Add, a, b);
  if (needs_grad({a, b})) record(out, std::make_shared<AddBackward>(1.0), {a, b});
  forward_rule(out, [&] { return plus(term(a, [](const Tensor& da) { return da; }),  // d(a + b) = da + db
                                      term(b, [](const Tensor& db) { return db; })); }, a, b);
  return out;
}
Tensor sub(const Tensor& a, const Tensor& b) {
  OpScope scope("sub", a, b);
  Tensor out = kernel::binary(Binary::Sub, a, b);
  if (needs_grad({a, b})) record(out, std::make_shared<AddBackward>(-1.0), {a, b});
  forward_rule(out, [&] { return plus(term(a, [](const Tensor& da) { return da; }),  // d(a - b) = da - db
                                      term(b, [](const Tensor& db) { return -db; })); }, a, b);
  return out;
}

// ---- mul: d(a*b) = (g*b, g*a); each factor is saved only if the other needs it ----
struct MulBackward final : Node {
  EMBER_NODE_NAME(MulBackward)
  SavedTensor b, a;
  MulBackward(const Tensor& b_, const Tensor& a_) : b(b_), a(a_) {}
  std::vector<SavedRef> saved() override { return {{"a", &a}, {"b", &b}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    return {b.defined() ? g * b.get(*this) : Tensor(), a.defined() ? g * a.get(*this) : Tensor()};
  }
};
Tensor mul(const Tensor& a, const Tensor& b) {
  OpScope scope("mul", a, b);
  Tensor out = kernel::binary(Binary::Mul, a, b);
  if (needs_grad({a, b}))
    record(out, std::make_shared<MulBackward>(a.requires_grad() ? b : Tensor(), b.requires_grad() ? a : Tensor()), {a, b});
  forward_rule(out, [&] { return plus(term(a, [&](const Tensor& da) { return da * b; }),  // d(a b) = da b + a db
                                      term(b, [&](const Tensor& db) { return a * db; })); }, a, b);
  return out;
}

// ---- div: d(a/b) = (g/b, -g*a/b^2) ----
struct DivBackward final : Node {
  EMBER_NODE_NAME(DivBackward)
  SavedTensor a, b;
  DivBackward(const Tensor& a_, const Tensor& b_) : a(a_), b(b_) {}
  std::vector<SavedRef> saved() override { return {{"a", &a}, {"b", &b}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor& B = b.get(*this);
    return {g / B, -g * a.get(*this) / (B * B)};
  }
};
Tensor div(const Tensor& a, const Tensor& b) {
  OpScope scope("div", a, b);
  Tensor out = kernel::binary(Binary::Div, a, b);
  if (needs_grad({a, b})) record(out, std::make_shared<DivBackward>(a, b), {a, b});
  // d(a/b) = (da - (a/b) db) / b
  forward_rule(out, [&] { return plus(term(a, [&](const Tensor& da) { return da / b; }),
                                      term(b, [&](const Tensor& db) { return -db * out / b; })); }, a, b);
  return out;
}

// ---- pow: d(a^b) = (g * b * a^(b-1), g * a^b * log(a)) ----
struct PowBackward final : Node {
  EMBER_NODE_NAME(PowBackward)
  SavedTensor a, b, out;
  PowBackward(const Tensor& a_, const Tensor& b_, const Tensor& o) : a(a_), b(b_), out(o) {}
  std::vector<SavedRef> saved() override { return {{"a", &a}, {"b", &b}, {"output", &out}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor &A = a.get(*this), &B = b.get(*this);
    return {g * B * pow(A, B - 1.0), g * out.get(*this) * log(A)};
  }
};
Tensor pow(const Tensor& a, const Tensor& b) {
  OpScope scope("pow", a, b);
  Tensor out = kernel::binary(Binary::Pow, a, b);
  if (needs_grad({a, b})) record(out, std::make_shared<PowBackward>(a, b, out), {a, b});
  forward_rule(out, [&] {
    return plus(term(a, [&](const Tensor& da) { return da * b * pow(a, b - 1.0); }),
                term(b, [&](const Tensor& db) { return db * out * log(a); }));
  }, a, b);
  return out;
}

// ---- maximum / minimum: the gradient goes to the larger (smaller) input; ties split it ----
namespace {
// a's share: 1 where a wins, 0.5 on ties, 0 where b wins
Tensor weight_of_a(const Tensor& a, const Tensor& b, bool is_max, DType dt) {
  auto c = [&](double v) { return scalar_tensor(v, dt); };
  return where(is_max ? gt(a, b) : lt(a, b), c(1.0), where(eq(a, b), c(0.5), c(0.0)));
}
// the forward rule: each input's tangent times its share
Tensor mix_by_winner(const Tensor& a, const Tensor& b, bool is_max) {
  const DType dt = is_floating(a.dtype()) ? a.dtype() : b.dtype();
  Tensor wa = weight_of_a(a, b, is_max, dt);
  return plus(term(a, [&](const Tensor& da) { return da * wa; }),
              term(b, [&](const Tensor& db) { return db * (1.0 - wa); }));
}
}  // namespace
struct MaximumBackward final : Node {
  EMBER_NODE_NAME(MaximumBackward)
  SavedTensor a, b;
  bool is_max;
  MaximumBackward(const Tensor& a_, const Tensor& b_, bool m) : a(a_), b(b_), is_max(m) {}
  std::vector<SavedRef> saved() override { return {{"a", &a}, {"b", &b}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    Tensor wa = weight_of_a(a.get(*this), b.get(*this), is_max, g.dtype());
    return {g * wa, g * (1.0 - wa)};
  }
};
Tensor maximum(const Tensor& a, const Tensor& b) {
  OpScope scope("maximum", a, b);
  Tensor out = kernel::binary(Binary::Maximum, a, b);
  if (needs_grad({a, b})) record(out, std::make_shared<MaximumBackward>(a, b, true), {a, b});
  forward_rule(out, [&] { return mix_by_winner(a, b, true); }, a, b);
  return out;
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  OpScope scope("minimum", a, b);
  Tensor out = kernel::binary(Binary::Minimum, a, b);
  if (needs_grad({a, b})) record(out, std::make_shared<MaximumBackward>(a, b, false), {a, b});
  forward_rule(out, [&] { return mix_by_winner(a, b, false); }, a, b);
  return out;
}

// ---- operators and scalar forms ----
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }

// d(a + s) = g
struct AddScalarBackward final : Node {
  EMBER_NODE_NAME(AddScalarBackward)
  std::vector<Tensor> apply(const Tensor& g) override { return {g}; }
};
Tensor operator+(const Tensor& a, double s) {
  OpScope scope("add", a);
  Tensor out = kernel::binary_scalar(Binary::Add, a, s);
  if (needs_grad({a})) record(out, std::make_shared<AddScalarBackward>(), {a});
  forward_rule(out, [&] { return dx(a); }, a);
  return out;
}
Tensor operator-(const Tensor& a, double s) {
  OpScope scope("sub", a);
  Tensor out = kernel::binary_scalar(Binary::Sub, a, s);
  if (needs_grad({a})) record(out, std::make_shared<AddScalarBackward>(), {a});
  forward_rule(out, [&] { return dx(a); }, a);
  return out;
}
Tensor operator+(double s, const Tensor& a) { return a + s; }

// d(s*a) = s*g
struct MulScalarBackward final : Node {
  EMBER_NODE_NAME(MulScalarBackward)
  double s;
  explicit MulScalarBackward(double v) : s(v) {}
  std::vector<Tensor> apply(const Tensor& g) override { return {g * s}; }
};
Tensor operator*(const Tensor& a, double s) {
  OpScope scope("mul", a);
  Tensor out = kernel::binary_scalar(Binary::Mul, a, s);
  if (needs_grad({a})) record(out, std::make_shared<MulScalarBackward>(s), {a});
  forward_rule(out, [&] { return dx(a) * s; }, a);
  return out;
}
Tensor operator*(double s, const Tensor& a) { return a * s; }
Tensor operator-(double s, const Tensor& a) {  // d(s - a) = -g
  OpScope scope("rsub", a);
  Tensor out = kernel::binary_scalar(Binary::Sub, a, s, /*scalar_first=*/true);
  if (needs_grad({a})) record(out, std::make_shared<MulScalarBackward>(-1.0), {a});
  forward_rule(out, [&] { return -dx(a); }, a);
  return out;
}

// d(a/s) = g/s
struct DivScalarBackward final : Node {
  EMBER_NODE_NAME(DivScalarBackward)
  double s;
  explicit DivScalarBackward(double v) : s(v) {}
  std::vector<Tensor> apply(const Tensor& g) override { return {g / s}; }
};
Tensor operator/(const Tensor& a, double s) {
  OpScope scope("div", a);
  Tensor out = kernel::binary_scalar(Binary::Div, a, s);
  if (needs_grad({a})) record(out, std::make_shared<DivScalarBackward>(s), {a});
  forward_rule(out, [&] { return dx(a) / s; }, a);
  return out;
}

// d(s/a) = -g * (s/a) / a
struct RDivScalarBackward final : Node {
  EMBER_NODE_NAME(RDivScalarBackward)
  SavedTensor a, out;
  RDivScalarBackward(const Tensor& a_, const Tensor& o) : a(a_), out(o) {}
  std::vector<SavedRef> saved() override { return {{"a", &a}, {"output", &out}}; }
  std::vector<Tensor> apply(const Tensor& g) override { return {-g * out.get(*this) / a.get(*this)}; }
};
Tensor operator/(double s, const Tensor& a) {
  OpScope scope("rdiv", a);
  Tensor out = kernel::binary_scalar(Binary::Div, a, s, /*scalar_first=*/true);
  if (needs_grad({a})) record(out, std::make_shared<RDivScalarBackward>(a, out), {a});
  forward_rule(out, [&] { return -dx(a) * out / a; }, a);
  return out;
}

// d(a^e) = g * e * a^(e-1)
struct PowScalarBackward final : Node {
  EMBER_NODE_NAME(PowScalarBackward)
  SavedTensor a;
  double e;
  PowScalarBackward(const Tensor& a_, double v) : a(a_), e(v) {}
  std::vector<SavedRef> saved() override { return {{"a", &a}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    if (e == 2.0) return {g * a.get(*this) * 2.0};
    return {g * e * pow(a.get(*this), e - 1.0)};
  }
};
Tensor pow(const Tensor& a, double e) {
  OpScope scope("pow", a);
  Tensor out = kernel::binary_scalar(Binary::Pow, a, e);
  if (needs_grad({a})) record(out, std::make_shared<PowScalarBackward>(a, e), {a});
  forward_rule(out, [&] { return e == 2.0 ? dx(a) * a * 2.0 : dx(a) * e * pow(a, e - 1.0); }, a);
  return out;
}

// ---- comparisons: bool results, no gradient ----
#define EMBER_COMPARE(NAME, OP)                             \
  Tensor NAME(const Tensor& a, const Tensor& b) {           \
    OpScope scope(#NAME, a, b);                             \
    detail::no_forward_rule_needed(); /* a bool result */   \
    return kernel::compare(kernel::Compare::OP, a, b);      \
  }                                                         \
  Tensor NAME(const Tensor& a, double s) {                  \
    OpScope scope(#NAME, a);                                \
    detail::no_forward_rule_needed();                       \
    return kernel::compare_scalar(kernel::Compare::OP, a, s); \
  }
EMBER_COMPARE(eq, Eq)
EMBER_COMPARE(ne, Ne)
EMBER_COMPARE(lt, Lt)
EMBER_COMPARE(le, Le)
EMBER_COMPARE(gt, Gt)
EMBER_COMPARE(ge, Ge)
#undef EMBER_COMPARE

}  // namespace ember
