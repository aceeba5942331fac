// Higher-order gradients: backward(create_graph) and grad(), checked against
// closed forms. (Every registered op and module also passes gradgradcheck:
// tests/autograd_registry_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <numbers>
#include <vector>

#include "autograd/engine.h"
#include "autograd/graph_export.h"
#include "autograd/node.h"
#include "ember.h"
#include "test_util.h"

namespace {

using namespace ember;
using test::expect_error;
using test::vals;

Tensor leaf(std::vector<double> v) { return tensor(v).requires_grad_(); }

// f'' at each point, by grad(grad(f(x)), x). A first derivative that does
// not depend on x (relu, abs) has no graph: its derivative is 0.
std::vector<double> second_derivative(const std::function<Tensor(const Tensor&)>& f, const std::vector<double>& at) {
  Tensor x = leaf(at);
  Tensor dx = grad({sum(f(x))}, {x}, {}, {.create_graph = true})[0];
  if (!dx.requires_grad()) return std::vector<double>(at.size(), 0.0);
  Tensor ddx = grad({sum(dx)}, {x})[0];  // elementwise: the diagonal of the Hessian is all of it
  return vals(ddx);
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << i;
}

TEST(HigherOrder, SecondDerivativesOfTheElementwiseFamiliesAreTheirClosedForms) {
  const std::vector<double> xs = {-1.3, -0.2, 0.4, 1.7};
  const std::vector<double> pos = {0.3, 0.9, 2.5};
  auto each = [](const std::vector<double>& v, double (*f)(double)) {
    std::vector<double> out;
    for (double x : v) out.push_back(f(x));
    return out;
  };
  // tanh'' = -2 tanh (1 - tanh^2)
  expect_close(second_derivative([](const Tensor& x) { return tanh(x); }, xs),
               each(xs, [](double x) { return -2 * std::tanh(x) * (1 - std::tanh(x) * std::tanh(x)); }));
  // sigmoid'' = s (1 - s) (1 - 2 s)
  expect_close(second_derivative([](const Tensor& x) { return sigmoid(x); }, xs), each(xs, [](double x) {
                 double s = 1 / (1 + std::exp(-x));
                 return s * (1 - s) * (1 - 2 * s);
               }));
  expect_close(second_derivative([](const Tensor& x) { return exp(x); }, xs), each(xs, [](double x) { return std::exp(x); }));
  expect_close(second_derivative([](const Tensor& x) { return log(x); }, pos), each(pos, [](double x) { return -1 / (x * x); }));
  expect_close(second_derivative([](const Tensor& x) { return sqrt(x); }, pos),
               each(pos, [](double x) { return -0.25 * std::pow(x, -1.5); }));
  expect_close(second_derivative([](const Tensor& x) { return rsqrt(x); }, pos),
               each(pos, [](double x) { return 0.75 * std::pow(x, -2.5); }));
  expect_close(second_derivative([](const Tensor& x) { return sin(x); }, xs), each(xs, [](double x) { return -std::sin(x); }));
  expect_close(second_derivative([](const Tensor& x) { return cos(x); }, xs), each(xs, [](double x) { return -std::cos(x); }));
  expect_close(second_derivative([](const Tensor& x) { return pow(x, 3.0); }, xs), each(xs, [](double x) { return 6 * x; }));
  expect_close(second_derivative([](const Tensor& x) { return 1.0 / x; }, pos), each(pos, [](double x) { return 2 / (x * x * x); }));
  // erf'' = -4x/sqrt(pi) exp(-x^2); gelu'' = phi(x) (2 - x^2)
  expect_close(second_derivative([](const Tensor& x) { return erf(x); }, xs),
               each(xs, [](double x) { return -4 * x * std::numbers::inv_sqrtpi * std::exp(-x * x); }));
  expect_close(second_derivative([](const Tensor& x) { return gelu(x); }, xs), each(xs, [](double x) {
                 return std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi) * (2 - x * x);
               }));
  // piecewise linear: second derivative 0 away from the kinks
  expect_close(second_derivative([](const Tensor& x) { return relu(x) * 3.0; }, xs), {0, 0, 0, 0});
  expect_close(second_derivative([](const Tensor& x) { return abs(x); }, xs), {0, 0, 0, 0});
}

TEST(HigherOrder, MixedSecondDerivativeOfAProduct) {
  // f = a^2 b: df/da = 2ab, d2f/dadb = 2a, d2f/da2 = 2b
  Tensor a = leaf({1.5}), b = leaf({-2.0});
  Tensor fa = grad({sum(a * a * b)}, {a}, {}, {.create_graph = true})[0];
  std::vector<Tensor> second = grad({sum(fa)}, {a, b});
  EXPECT_DOUBLE_EQ(vals(fa)[0], 2 * 1.5 * -2.0);
  EXPECT_DOUBLE_EQ(vals(second[0])[0], 2 * -2.0);
  EXPECT_DOUBLE_EQ(vals(second[1])[0], 2 * 1.5);
}

TEST(HigherOrder, FullHessianOfAThreeParameterFunction) {
  // f(x, y, z) = x^2 y + y z^3 + sin(x z); its Hessian by hand:
  const double x = 0.7, y = -1.1, z = 0.4;
  Tensor p = leaf({x, y, z});
  Tensor f = sum(select(p, 0, 0) * select(p, 0, 0) * select(p, 0, 1) +
                 select(p, 0, 1) * pow(select(p, 0, 2), 3.0) + sin(select(p, 0, 0) * select(p, 0, 2)));
  Tensor g = grad({f}, {p}, {}, {.create_graph = true})[0];
  std::vector<double> H;
  for (int i = 0; i < 3; ++i) {
    std::vector<double> row = vals(grad({select(g, 0, i)}, {p}, {}, {.retain_graph = true})[0]);
    H.insert(H.end(), row.begin(), row.end());
  }
  const double s = std::sin(x * z), c = std::cos(x * z);
  const std::vector<double> want = {2 * y - z * z * s, 2 * x, c - x * z * s,
                                    2 * x, 0, 3 * z * z,
                                    c - x * z * s, 3 * z * z, 6 * y * z - x * x * s};
  expect_close(H, want);
}

TEST(HigherOrder, GradLeavesDotGradAloneAndHandlesUnusedAndNonScalarOutputs) {
  Tensor x = leaf({1.0, 2.0}), unused = leaf({5.0});
  Tensor y = x * x;  // non-scalar: needs grad_outputs
  expect_error([&] { (void)grad({y}, {x}); }, "grad", {"one element"});
  std::vector<Tensor> g = grad({y}, {x, unused}, {tensor({1.0, 10.0}, kFloat64)}, {.retain_graph = true, .allow_unused = true});
  EXPECT_EQ(vals(g[0]), (std::vector<double>{2.0, 40.0}));
  EXPECT_FALSE(g[1].defined());
  EXPECT_FALSE(x.grad().defined()) << "grad() writes no .grad";
  expect_error([&] { (void)grad({sum(y)}, {unused}); }, "grad", {"input 0", "not used", "allow_unused"});
  // with respect to an intermediate tensor, and to the same tensor twice
  Tensor h = x * 3.0, z = sum(h * h);
  std::vector<Tensor> gh = grad({z}, {h, h});
  EXPECT_EQ(vals(gh[0]), (std::vector<double>{6.0, 12.0}));
  EXPECT_EQ(vals(gh[1]), vals(gh[0]));
  // several outputs: their gradients add up
  Tensor w = leaf({2.0});
  EXPECT_EQ(vals(grad({sum(w * 3.0), sum(w * w)}, {w})[0]), (std::vector<double>{3.0 + 4.0}));
}

TEST(HigherOrder, CreateGraphThenASecondBackwardAccumulatesIntoTheLeaf) {
  // x.grad after backward(create_graph) is 3x^2 with a graph; backward of it adds 6x.
  Tensor x = leaf({2.0});
  sum(pow(x, 3.0)).backward(Tensor(), false, /*create_graph=*/true);
  Tensor first = x.grad();
  ASSERT_TRUE(first.requires_grad()) << "the gradient is differentiable";
  EXPECT_EQ(vals(first), (std::vector<double>{12.0}));
  first.backward();
  EXPECT_EQ(vals(x.grad()), (std::vector<double>{12.0 + 12.0})) << "12 (first) + 6x = 12 (second)";
  EXPECT_EQ(vals(first), (std::vector<double>{12.0})) << "added out of place: the first gradient is untouched";
}

// backward(create_graph) into .grad: the .grad's graph saved the leaf itself
// (pow saved x), so leaf -> .grad -> graph -> leaf is a cycle. Memory returns
// when the .grad is reset, and when the module that owns the parameter is
// destroyed (~Module breaks the cycle, keeping the .grad's values): a weak
// reference to the parameter expires. (Without the break the parameter
// stays alive, and the leak checker of the sanitizer run reports it.)
TEST(HigherOrder, CreateGraphIntoGradReleasesItsMemory) {
  std::weak_ptr<TensorImpl> weight, grad_of_weight;
  {
    nn::Linear fc(3, 2);
    Tensor x = tensor(std::vector<float>{1, 2, 3}).reshape({1, 3});
    sum(pow(fc.forward(x), 2.0)).backward(Tensor(), false, /*create_graph=*/true);
    ASSERT_TRUE(fc.weight.grad().grad_fn()) << "the .grad has a graph";
    weight = fc.weight.impl_ptr();
    grad_of_weight = fc.weight.grad().impl_ptr();
    EXPECT_GT(weight.use_count(), 1) << "the .grad's graph holds the weight too";
  }
  EXPECT_TRUE(weight.expired()) << "the module's end released its weight";
  EXPECT_TRUE(grad_of_weight.expired());
  // A tensor outside modules: resetting its .grad releases the graph.
  std::weak_ptr<TensorImpl> gone;
  {
    Tensor x = leaf({2.0});
    sum(pow(x, 3.0)).backward(Tensor(), false, /*create_graph=*/true);
    gone = x.impl_ptr();
    EXPECT_EQ(vals(x.grad()), (std::vector<double>{12.0}));
    x.set_grad(Tensor());
  }
  EXPECT_TRUE(gone.expired());
  // The module keeps the values of the .grad, only its graph goes.
  auto fc = std::make_unique<nn::Linear>(2, 1);
  Tensor w = fc->weight;
  Tensor x = tensor(std::vector<float>{1, 2}).reshape({1, 2});
  sum(pow(fc->forward(x), 2.0)).backward(Tensor(), false, true);
  const std::vector<double> before = vals(w.grad());
  fc.reset();
  EXPECT_EQ(vals(w.grad()), before);
  EXPECT_FALSE(w.grad().grad_fn());
}

TEST(HigherOrder, WithoutCreateGraphNothingIsRecorded) {
  Tensor x = leaf({2.0});
  sum(pow(x, 3.0)).backward();
  EXPECT_FALSE(x.grad().requires_grad());
  Tensor g = grad({sum(tanh(leaf({0.5})))}, {leaf({0.5})}, {}, {.allow_unused = true})[0];
  EXPECT_FALSE(g.defined());
}

TEST(HigherOrder, ASavedTensorModifiedBeforeTheSecondBackwardIsCaught) {
  // d/dx exp(x) = exp(x): the gradient graph reaches ExpBackward again, which
  // reads the output it saved; changing that output in between is caught.
  Tensor x = leaf({1.0, 2.0});
  Tensor z = exp(x * 1.0);
  Tensor g = grad({sum(z)}, {x}, {}, {.create_graph = true})[0];
  {
    NoGradGuard no_grad;
    z.mul_(2.0);
  }
  expect_error([&] { sum(g).backward(); }, "backward", {"modified by an inplace operation", "ExpBackward"});
}

// A rule that cannot be differentiated must refuse create_graph by name.
struct OpaqueBackward final : Node {
  EMBER_NODE_NAME(OpaqueBackward)
  std::vector<Tensor> apply(const Tensor& g) override { return {g}; }
  const char* not_differentiable() const override { return "its rule is a hand-written kernel"; }
};

TEST(HigherOrder, ARuleThatCannotBeDifferentiatedRefusesByName) {
  Tensor x = leaf({1.0});
  Tensor y = x.detach().clone();
  record(y, std::make_shared<OpaqueBackward>(), {x});
  expect_error([&] { sum(y * y).backward(Tensor(), false, /*create_graph=*/true); }, "backward",
               {"create_graph", "OpaqueBackward", "cannot be differentiated", "hand-written kernel"});
  Tensor z = x.detach().clone();
  record(z, std::make_shared<OpaqueBackward>(), {x});
  sum(z * z).backward();  // a first derivative is fine
  EXPECT_EQ(vals(x.grad()), (std::vector<double>{2.0}));
}

TEST(HigherOrder, FusedRulesGiveTheSameFirstGradientWhenRecording) {
  // The composed formulations (used under create_graph) agree with the
  // fused kernels, value for value.
  Generator gen(4);
  Tensor x = randn({3, 5}, gen, kFloat64).requires_grad_();
  Tensor w = randn({5}, gen, kFloat64).requires_grad_(), b = randn({5}, gen, kFloat64).requires_grad_();
  Tensor t = tensor(std::vector<int64_t>{0, 4, 2});
  const std::vector<std::function<Tensor()>> fs = {
      [&] { return sum(tanh(x) * sigmoid(x) + gelu(x) + gelu(x, GeluApprox::Tanh) + relu(x) + clamp(x, -0.5, 0.5)); },
      [&] { return sum(softmax(x, 1) * x) + sum(log_softmax(x, 0) * x); },
      [&] { return sum(layer_norm(x, w, b) * x); },
      [&] { return cross_entropy(x, t); },
      [&] { return sum(max(x, 1).first) + sum(gather(x, 1, tensor(std::vector<int64_t>{1, 1, 4, 0, 2, 2}, {3, 2}))); },
      [&] { return sum(embedding(x, tensor(std::vector<int64_t>{2, 0, 2}), 0)) + sum(narrow(x, 1, 1, 3)); },
  };
  for (size_t i = 0; i < fs.size(); ++i) {
    SCOPED_TRACE(i);
    std::vector<Tensor> plain = grad({fs[i]()}, {x, w, b}, {}, {.allow_unused = true});
    std::vector<Tensor> recorded = grad({fs[i]()}, {x, w, b}, {}, {.create_graph = true, .allow_unused = true});
    for (size_t k = 0; k < plain.size(); ++k) {
      ASSERT_EQ(plain[k].defined(), recorded[k].defined()) << k;
      if (!plain[k].defined()) continue;
      std::vector<double> p = vals(plain[k]), r = vals(recorded[k]);
      for (size_t j = 0; j < p.size(); ++j) EXPECT_NEAR(p[j], r[j], 1e-12) << "input " << k << " element " << j;
    }
  }
}

TEST(HigherOrder, DroppingADoubleBackwardFreesEverything) {
  std::weak_ptr<Node> forward_node, gradient_node;
  std::weak_ptr<Storage> saved;
  {
    Tensor x = leaf({0.3, -0.7});
    Tensor y = tanh(x);
    forward_node = y.grad_fn();
    saved = y.storage();
    Tensor g = grad({sum(y)}, {x}, {}, {.create_graph = true})[0];
    gradient_node = g.grad_fn();
    ASSERT_FALSE(gradient_node.expired());
    EXPECT_TRUE(g.grad_fn()->meta.in_gradient_graph);
    EXPECT_FALSE(y.grad_fn()->meta.in_gradient_graph);
    Tensor h = grad({sum(g)}, {x})[0];
    EXPECT_EQ(h.numel(), 2);
  }
  EXPECT_TRUE(forward_node.expired());
  EXPECT_TRUE(gradient_node.expired());
  EXPECT_TRUE(saved.expired());  // LeakSanitizer checks the rest in the sanitizer build
}

TEST(HigherOrder, GraphExportDrawsTheGradientGraphApart) {
  Tensor x = leaf({0.5});
  Tensor g = grad({sum(x * x * x)}, {x}, {}, {.create_graph = true})[0];
  const std::string dot = to_dot(sum(g));
  EXPECT_NE(dot.find("(gradient graph)"), std::string::npos) << dot;
  EXPECT_NE(dot.find("dashed"), std::string::npos);
}

}  // namespace
