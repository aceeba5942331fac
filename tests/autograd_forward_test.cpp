// Forward mode (autograd/forward.h) and the function transforms
// (autograd/functional.h): dual numbers by hand, views and in-place writes,
// the transforms against closed forms and against each other, the errors,
// functional_call, and the Hessian of the tiny GPT's loss. The registry test
// (autograd_registry_test.cpp) runs forward_gradcheck over every op.
#include <gtest/gtest.h>

#include <cmath>

#include "ember.h"
#include "tensor/kernels.h"
#include "test_util.h"

using namespace ember;
using ember::test::expect_error;
using ember::test::f64;
using ember::test::vals;

namespace {

void expect_near_all(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  std::vector<double> x = vals(a), y = vals(b);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tol * (1 + std::abs(y[i]))) << "element " << i;
}

TEST(ForwardMode, DualNumberOfSinTimesX) {
  // y = sin(x) x, dy = (cos(x) x + sin(x)) dx
  const std::vector<double> xs = {0.5, 1.0, -2.0};
  DualLevel level;
  Tensor x = make_dual(f64(xs), f64({1.0, 2.0, 0.5}));
  Tensor y = sin(x) * x;
  Tensor t = tangent(y);
  ASSERT_TRUE(t.defined());
  std::vector<double> got = vals(t);
  const std::vector<double> dx = {1.0, 2.0, 0.5};
  for (size_t i = 0; i < xs.size(); ++i)
    EXPECT_NEAR(got[i], (std::cos(xs[i]) * xs[i] + std::sin(xs[i])) * dx[i], 1e-15);
  EXPECT_EQ(vals(unpack_dual(y).primal)[1], std::sin(1.0));
}

TEST(ForwardMode, ClosingTheLevelDropsEveryTangent) {
  Tensor y;
  {
    DualLevel level;
    Tensor x = make_dual(f64({1.0, 2.0}), f64({1.0, 1.0}));
    y = exp(x);
    EXPECT_TRUE(tangent(y).defined());
  }
  EXPECT_FALSE(tangent(y).defined());
  EXPECT_FALSE(forward_level_active());
}

TEST(ForwardMode, AViewsTangentIsTheViewOfTheTangent) {
  DualLevel level;
  Tensor v = arange(0.0, 6.0, 1.0, kFloat64).reshape({2, 3});
  Tensor x = make_dual(zeros({2, 3}, kFloat64), v);
  Tensor t = x.transpose(0, 1);
  EXPECT_EQ(vals(tangent(t)), vals(v.transpose(0, 1).contiguous()));
  Tensor row = x.select(0, 1);
  EXPECT_EQ(vals(tangent(row)), (std::vector<double>{3, 4, 5}));
  // a reshape that must copy still gets the reshaped tangent
  Tensor r = t.reshape({6});
  EXPECT_EQ(vals(tangent(r)), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(ForwardMode, ANonContiguousDualStaysNonContiguous) {
  DualLevel level;
  Tensor base = arange(0.0, 6.0, 1.0, kFloat64).reshape({2, 3}).transpose(0, 1);  // (3, 2), strides (1, 3)
  Tensor x = make_dual(base, ones({3, 2}, kFloat64) * 2.0);
  EXPECT_EQ(shape_str(x.stride()), shape_str(base.stride()));
  EXPECT_EQ(vals(x), vals(base));
  EXPECT_EQ(vals(tangent(x * x)), vals(base * 4.0));
}

TEST(ForwardMode, TheDualOfASliceCopiesOnlyWhatTheSliceSpans) {
  DualLevel level;
  Tensor big = arange(0.0, 1000.0, 1.0, kFloat64).reshape({100, 10});
  Tensor x = make_dual(big.narrow(0, 40, 2).narrow(1, 2, 3), ones({2, 3}, kFloat64));  // strides (10, 1)
  EXPECT_EQ(x.storage()->nbytes(), static_cast<size_t>(13 * 8));  // from [40, 2] to [41, 4]
  EXPECT_EQ(shape_str(x.stride()), "(10, 1)");
  EXPECT_EQ(vals(x), (std::vector<double>{402, 403, 404, 412, 413, 414}));
  EXPECT_EQ(vals(tangent(x * 2.0)), (std::vector<double>{2, 2, 2, 2, 2, 2}));
}

// A tangent belongs to memory: a primal whose layout puts several elements
// in one location (an expand view, stride 0) has room for one tangent value
// there, so its dual is a dense copy that holds each element's own.
TEST(ForwardMode, TheDualOfABroadcastViewKeepsEveryTangentValue) {
  DualLevel level;
  Tensor x = make_dual(ones({1}, kFloat64).expand({3}), f64({1, 2, 3}));
  EXPECT_EQ(vals(tangent(x)), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(shape_str(x.stride()), "(1)") << "a dense copy";
  Tensor x2 = make_dual(f64({10}).expand({3}), f64({1, 2, 3}));
  EXPECT_EQ(vals(tangent(x2 * x2)), (std::vector<double>{20, 40, 60}));   // d(x^2) = 2 x dx
  // the same numbers through views, reductions, products and an in-place write
  Tensor m = make_dual(f64({1}).reshape({1, 1}).expand({2, 3}), f64({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(vals(tangent(m.transpose(0, 1))), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(vals(tangent(sum(m, {1}))), (std::vector<double>{6, 15}));
  EXPECT_EQ(vals(tangent(matmul(m, ones({3, 1}, kFloat64)))), (std::vector<double>{6, 15}));
  EXPECT_EQ(vals(tangent(exp(m))), vals(f64({1, 2, 3, 4, 5, 6}, {2, 3}) * std::exp(1.0)));
  m.add_(ones({3}, kFloat64));  // the dense copy takes an in-place write; its tangent is unchanged
  EXPECT_EQ(vals(tangent(m)), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // an expand view of a dual shares its tangent, as every view does
  Tensor one = make_dual(f64({2}), f64({7}));
  EXPECT_EQ(vals(tangent(one.expand({3}))), (std::vector<double>{7, 7, 7}));
}

TEST(Transforms, JvpAndJacfwdOfABroadcastPrimal) {
  TensorFn square = [](const std::vector<Tensor>& in) { return in[0] * in[0]; };
  Tensor x = f64({10}).expand({3});
  EXPECT_EQ(vals(jvp(square, {x}, {f64({1, 2, 3})}).tangent), (std::vector<double>{20, 40, 60}));
  // the Jacobian of x*x is diag(2x), whatever x's layout
  EXPECT_EQ(vals(jacfwd(square)({x})), vals(jacfwd(square)({x.contiguous()})));
  EXPECT_EQ(vals(jacfwd(square)({x})), (std::vector<double>{20, 0, 0, 0, 20, 0, 0, 0, 20}));
}

// A tangent's memory can get a tangent of its own (an in-place write into a
// tangent, from a dual operand); freeing the primal then frees both, one
// inside the other's destructor (AddressSanitizer watches this in CI).
TEST(ForwardMode, ATangentWithATangentOfItsOwnIsFreedCleanly) {
  DualLevel level;
  Tensor y = make_dual(f64({1.0, 2.0}), f64({3.0, 4.0}));
  Tensor w = make_dual(f64({0.5, 0.5}), f64({1.0, 1.0}));
  {
    Tensor t = tangent(y);
    t.add_(w);  // t = (3.5, 4.5), and t's memory now has the tangent (1, 1)
    EXPECT_EQ(vals(tangent(t)), (std::vector<double>{1, 1}));
  }
  EXPECT_EQ(vals(tangent(y)), (std::vector<double>{3.5, 4.5}));
  y = Tensor();  // frees y's memory, then its tangent, then the tangent's tangent
  EXPECT_EQ(vals(tangent(w * 2.0)), (std::vector<double>{2, 2}));
}

TEST(ForwardMode, AnInPlaceWriteUpdatesTheTangentOfEveryView) {
  DualLevel level;
  Tensor x = make_dual(f64({1, 2, 3, 4}, {2, 2}), f64({1, 1, 1, 1}, {2, 2}));
  Tensor w = make_dual(f64({10, 20}), f64({0.5, -0.5}));
  Tensor row = x.select(0, 0);
  row.mul_(w);  // row = x0 * w: d = dx0 * w + x0 * dw
  EXPECT_EQ(vals(tangent(x)), (std::vector<double>{1 * 10 + 1 * 0.5, 1 * 20 + 2 * -0.5, 1, 1}));
  x.select(0, 1).add_(w, 2.0);  // d += 2 dw
  EXPECT_EQ(vals(tangent(x)), (std::vector<double>{10.5, 19, 2, 0}));
  Tensor plain = zeros({2}, kFloat64);
  plain.copy_(w);  // a tensor without a tangent gets one from the copy
  EXPECT_EQ(vals(tangent(plain)), (std::vector<double>{0.5, -0.5}));
  x.zero_();  // a constant: the tangent is 0
  EXPECT_EQ(vals(tangent(x)), (std::vector<double>{0, 0, 0, 0}));
}

TEST(ForwardMode, ErrorsNameWhatIsWrong) {
  expect_error([] { make_dual(f64({1.0}), f64({1.0})); }, "make_dual", {"no dual level is open"});
  DualLevel level;
  expect_error([] { make_dual(f64({1.0, 2.0}), f64({1.0})); }, "make_dual", {"(1)", "(2)"});
  expect_error([] { make_dual(test::i64({1}), f64({1.0})); }, "make_dual", {"int64"});
  expect_error([] { DualLevel second; }, "DualLevel", {"already open", "hessian"});
}

// An op written the chapter-2 way, with a backward rule and no forward rule.
struct TwiceBackward final : Node {
  EMBER_NODE_NAME(TwiceBackward)
  std::vector<Tensor> apply(const Tensor& g) override { return {g * 2.0}; }
};
Tensor twice_without_forward_rule(const Tensor& x) {
  OpScope scope("twice", x);
  Tensor out = kernel::binary_scalar(kernel::Binary::Mul, x, 2.0);
  if (needs_grad({x})) record(out, std::make_shared<TwiceBackward>(), {x});
  return out;
}

TEST(ForwardMode, AnOpWithoutAForwardRuleIsRefusedByName) {
  TensorFn f = [](const std::vector<Tensor>& in) { return sum(twice_without_forward_rule(in[0])); };
  Tensor x = f64({1.0, 2.0}).requires_grad_();
  expect_error([&] { jvp(f, {x}, {f64({1.0, 1.0})}); }, "forward mode", {"'twice'", "no forward rule"});
  expect_error([&] { jacfwd(f)({x}); }, "forward mode", {"'twice'"});
  {
    NoGradGuard plain;  // also when nothing records
    expect_error([&] { jvp(f, {f64({1.0, 2.0})}, {f64({1.0, 1.0})}); }, "forward mode", {"'twice'"});
  }
  // the level closed cleanly: reverse mode and a new level work as before
  EXPECT_EQ(vals(jacrev(f)({x})), (std::vector<double>{2, 2}));
  EXPECT_EQ(vals(jvp([](const std::vector<Tensor>& in) { return in[0] * 3.0; }, {x}, {f64({1.0, 2.0})}).tangent),
            (std::vector<double>{3, 6}));
}

TEST(ForwardMode, TangentsTravelThroughBackwardForwardOverReverse) {
  // f(x) = sum(x^3): grad = 3x^2, and its tangent along v is 6 x v.
  DualLevel level;
  Tensor p = f64({1.0, -2.0, 0.5});
  Tensor x = make_dual(p, f64({1.0, 1.0, 2.0})).detach().requires_grad_();
  Tensor g = grad({sum(pow(x, 3.0))}, {x})[0];
  EXPECT_EQ(vals(g), (std::vector<double>{3, 12, 0.75}));
  EXPECT_EQ(vals(tangent(g)), (std::vector<double>{6, -12, 6}));
}

// ---- transforms ----
TEST(Transforms, JacobiansOfALinearMapAreItsMatrix) {
  Tensor A = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  TensorFn f = [A](const std::vector<Tensor>& in) { return matmul(A, in[0]); };
  Tensor x = f64({0.1, 0.2, 0.3});
  EXPECT_EQ(vals(jacfwd(f)({x})), vals(A));
  EXPECT_EQ(vals(jacrev(f)({x})), vals(A));
  EXPECT_EQ(shape_str(jacfwd(f)({x}).shape()), "(2, 3)");
  JvpResult r = jvp(f, {x}, {f64({1, 0, -1})});
  EXPECT_EQ(vals(r.tangent), (std::vector<double>{-2, -2}));
  VjpResult b = vjp(f, {x});
  EXPECT_EQ(vals(b.pullback(f64({1, -1}))[0]), (std::vector<double>{-3, -3, -3}));
}

TEST(Transforms, JacobianLayoutIsOutputShapeThenInputShape) {
  TensorFn f = [](const std::vector<Tensor>& in) { return in[0].transpose(0, 1) * in[1]; };
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3}), y = f64({2, 3});
  Tensor jf = jacfwd(f, 0)({x, y}), jr = jacrev(f, 0)({x, y});
  EXPECT_EQ(shape_str(jf.shape()), "(3, 2, 2, 3)");
  EXPECT_EQ(vals(jf), vals(jr));
  // out[i][j] = x[j][i] y[j], so d out[1][0] / d x[0][1] = y[0]
  EXPECT_EQ(vals(jf.select(0, 1).select(0, 0).select(0, 0))[1], 2.0);
  EXPECT_EQ(vals(jf.select(0, 1).select(0, 0).select(0, 0))[0], 0.0);
  Tensor jy = jacfwd(f, 1)({x, y});
  EXPECT_EQ(vals(jy), vals(jacrev(f, 1)({x, y})));
}

TEST(Transforms, HessianMatchesClosedFormAndReverseOverReverse) {
  // f(x) = sum(x^3) + x0 x1 exp(x2): H = diag(6x) + the cross terms.
  TensorFn f = [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    return sum(pow(x, 3.0)) + x.select(0, 0) * x.select(0, 1) * exp(x.select(0, 2));
  };
  const double a = 0.3, b = -1.2, c = 0.7, e = std::exp(c);
  Tensor x = f64({a, b, c});
  Tensor H = hessian(f)({x});
  const std::vector<double> closed = {6 * a, e, b * e,  //
                                      e, 6 * b, a * e,  //
                                      b * e, a * e, 6 * c + a * b * e};
  std::vector<double> h = vals(H);
  for (size_t i = 0; i < 9; ++i) EXPECT_NEAR(h[i], closed[i], 1e-14) << i;
  expect_near_all(H, jacrev(jacrev(f))({x}), 1e-14);
  Tensor hv = hvp(f, {x}, f64({1, 0, 2}));
  EXPECT_NEAR(vals(hv)[0], 6 * a + 2 * b * e, 1e-14);
  EXPECT_NEAR(vals(hv)[2], b * e + 2 * (6 * c + a * b * e), 1e-14);
}

TEST(Transforms, ForwardOverForwardIsRefusedByName) {
  TensorFn f = [](const std::vector<Tensor>& in) { return sum(in[0] * in[0]); };
  expect_error([&] { jacfwd(jacfwd(f))({f64({1.0, 2.0})}); }, "jvp", {"forward-over-forward", "hessian"});
  expect_error([&] { jacrev(f, 2)({f64({1.0})}); }, "jacrev", {"argnum 2", "1 inputs"});
  expect_error([&] { jvp(f, {f64({1.0})}, {}); }, "jvp", {"0 tangents", "1 primals"});
  expect_error([&] { jvp(f, {f64({1.0})}, {f64({1.0, 2.0})}); }, "jvp", {"(2)", "(1)"});
  expect_error([&] { hvp([](const std::vector<Tensor>& in) { return in[0] * 2.0; }, {f64({1.0, 2.0})}, f64({1, 1})); },
               "hvp", {"one element", "(2)"});
}

// hvp's v is the direction H is applied to: an undefined one is an error, not
// "not differentiated" (that is what an undefined tangent means to jvp).
TEST(Transforms, HvpRefusesAMissingOrMisshapenDirection) {
  TensorFn f = [](const std::vector<Tensor>& in) { return sum(pow(in[0], 3.0)); };
  Tensor x = f64({1.0, 2.0});
  expect_error([&] { hvp(f, {x}, Tensor()); }, "hvp", {"the direction v is undefined", "(2)"});
  expect_error([&] { hvp(f, {x}, f64({1.0, 2.0, 3.0})); }, "hvp", {"(3)", "(2)"});
  expect_error([&] { hvp(f, {x}, test::i64({1, 2})); }, "hvp", {"int64"});
  EXPECT_EQ(vals(hvp(f, {x}, f64({1.0, 0.0}))), (std::vector<double>{6, 0}));  // H = diag(6x)
  // jvp: an undefined tangent leaves its input out, as documented
  TensorFn g = [](const std::vector<Tensor>& in) { return in[0] * in[1]; };
  EXPECT_EQ(vals(jvp(g, {x, f64({3.0, 4.0})}, {Tensor(), f64({1.0, 1.0})}).tangent), (std::vector<double>{1, 2}));
}

TEST(Transforms, OutputsDoNotDependOnTheInputGiveZeros) {
  TensorFn f = [](const std::vector<Tensor>&) { return f64({1.0, 2.0}); };
  EXPECT_EQ(vals(jacfwd(f)({f64({3.0})})), (std::vector<double>{0, 0}));
  EXPECT_EQ(vals(jacrev(f)({f64({3.0})})), (std::vector<double>{0, 0}));
}

// ---- modules ----
TEST(FunctionalCall, EvaluatesAModuleWithGivenWeightsAndRestoresItsOwn) {
  nn::Linear fc(3, 2);
  fc.to(kFloat64);
  const std::vector<double> own = vals(fc.weight);
  Tensor x = f64({1, 2, 3});
  Tensor w = f64({1, 0, 0, 0, 1, 0}, {2, 3});
  Tensor out = nn::functional_call(fc, {{"weight", w}}, [&] { return fc.forward(x); });
  const std::vector<double> bias = vals(fc.bias);
  EXPECT_EQ(vals(out), (std::vector<double>{1 + bias[0], 2 + bias[1]}));
  EXPECT_EQ(vals(fc.weight), own);
  // d out_i / d W_jk = [i == j] x_k
  TensorFn of_weight = [&](const std::vector<Tensor>& ws) {
    return nn::functional_call(fc, {{"weight", ws[0]}}, [&] { return fc.forward(x); });
  };
  Tensor jr = jacrev(of_weight)({w}), jf = jacfwd(of_weight)({w});
  EXPECT_EQ(shape_str(jr.shape()), "(2, 2, 3)");
  EXPECT_EQ(vals(jr), (std::vector<double>{1, 2, 3, 0, 0, 0, 0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(vals(jf), vals(jr));
  EXPECT_FALSE(fc.weight.grad().defined());  // the gradient went to w, not into the module
  EXPECT_EQ(vals(fc.weight), own);
}

// What backward saved during the call (Linear's weight, for x's gradient) is
// the given tensor, also after the module has its own weight back.
TEST(FunctionalCall, BackwardAfterTheCallUsesTheGivenWeight) {
  nn::Linear fc(3, 2);
  fc.to(kFloat64);
  Tensor w = f64({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  Tensor x = f64({1, -1, 2}).requires_grad_();
  Tensor out = nn::functional_call(fc, {{"weight", w}}, [&] { return sum(fc.forward(x)); });
  out.backward();
  EXPECT_EQ(vals(x.grad()), (std::vector<double>{5, 7, 9}));          // column sums of w, not of fc.weight
  EXPECT_EQ(vals(w.grad()), (std::vector<double>{1, -1, 2, 1, -1, 2}));  // the gradient reached w
  EXPECT_FALSE(fc.weight.grad().defined());
}

TEST(FunctionalCall, BadNamesShapesAndDtypesChangeNothing) {
  nn::Linear fc(3, 2);
  const std::vector<double> own = vals(fc.weight);
  auto run = [&](std::vector<std::pair<std::string, Tensor>> ps) {
    nn::functional_call(fc, ps, [&] { return fc.forward(zeros({3})); });
  };
  expect_error([&] { run({{"wieght", zeros({2, 3})}}); }, "functional_call", {"Linear", "'wieght'"});
  expect_error([&] { run({{"weight", zeros({3, 2})}}); }, "functional_call", {"(2, 3)", "(3, 2)"});
  expect_error([&] { run({{"weight", zeros({2, 3}, kFloat64)}}); }, "functional_call", {"float32", "float64"});
  expect_error([&] { run({{"bias", zeros({2})}, {"bias", zeros({2})}}); }, "functional_call", {"twice"});
  expect_error([&] { nn::functional_call(fc, {{"weight", zeros({2, 3})}}, []() -> Tensor { EMBER_FAIL("mine", "boom"); }); },
               "mine", {"boom"});
  EXPECT_EQ(vals(fc.weight), own);
}

// The target: the Hessian of the tiny GPT's loss with respect to one
// small parameter tensor, forward-over-reverse, against reverse-over-reverse
// and against central differences of the gradient.
TEST(Transforms, HessianOfTheTinyGptLossInOneParameter) {
  nn::GPTConfig cfg;
  cfg.vocab_size = 11;
  cfg.context_length = 6;
  cfg.dim = 8;
  cfg.heads = 2;
  cfg.layers = 1;
  cfg.seed = 3;
  nn::GPT model(cfg);
  model.to(kFloat64);
  {
    NoGradGuard plain;  // weights 5x their initial size: a loss with curvature worth checking
    for (auto& [n, t] : model.named_parameters()) t.mul_(5.0);
  }
  Tensor ids = test::i64({1, 4, 2, 9, 0, 3}, {1, 6}), targets = test::i64({4, 2, 9, 0, 3, 7}, {1, 6});
  const std::string name = "blocks.0.ln1.weight";  // 8 numbers
  Tensor p0;
  for (auto& [n, t] : model.named_parameters())
    if (n == name) p0 = t.detach().clone();
  ASSERT_TRUE(p0.defined());
  TensorFn loss = [&](const std::vector<Tensor>& w) {
    return nn::functional_call(model, {{name, w[0]}}, [&] { return model.loss(ids, targets); });
  };
  Tensor H = hessian(loss)({p0});
  ASSERT_EQ(shape_str(H.shape()), "(8, 8)");
  Tensor Hrr = jacrev(jacrev(loss))({p0});
  expect_near_all(H, Hrr, 1e-12);
  // symmetric, and central differences of the gradient
  expect_near_all(H, H.transpose(0, 1).contiguous(), 1e-12);
  const double eps = 1e-5;
  for (int64_t j = 0; j < 8; ++j) {
    Tensor e = zeros({8}, kFloat64);
    e.narrow(0, j, 1).fill_(eps);
    Tensor gp = jacrev(loss)({p0 + e}), gm = jacrev(loss)({p0 - e});
    Tensor col = (gp - gm) / (2 * eps);
    std::vector<double> c = vals(col), h = vals(H.select(1, j));
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(h[i], c[i], 1e-8 + 1e-5 * std::abs(c[i])) << i << "," << j;
  }
  double biggest = 0;
  for (double v : vals(H)) biggest = std::max(biggest, std::abs(v));
  EXPECT_GT(biggest, 1e-2);  // a Hessian that is not zero
  std::printf("largest |H| entry %.6g\n", biggest);
}

}  // namespace
