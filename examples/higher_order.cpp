// higher_order: differentiating a gradient. With create_graph, backward
// records the gradient computation as a graph of its own, so the gradient is
// a function that can be differentiated again.
//
//   ./build/examples/higher_order
//
// 1. the second derivative of tanh, against its closed form;
// 2. a Hessian-vector product of a small MLP's loss, against finite
//    differences of the gradient;
// 3. the full Hessian of a 3-parameter function, against the hand-derived one;
// 4. a gradient penalty ||d f / d x||^2 (as in WGAN-GP or double backprop)
//    trained for a few steps: the penalty needs the derivative of a derivative.
// Every check prints its error and the program exits non-zero if one fails.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/program.h"
#include "common/report.h"
#include "ember.h"

using namespace ember;

namespace {

using examples::max_abs_diff;
using examples::report;

// 1. d2/dx2 tanh(x) = d/dx (1 - tanh^2) = -2 tanh (1 - tanh^2)
void second_derivative_of_tanh(double at) {
  std::printf("1. The second derivative of tanh at x = %.2f\n", at);
  Tensor x = scalar_tensor(at, kFloat64).requires_grad_();
  Tensor y = tanh(x);
  // The first derivative, recorded: dy is a tensor with a grad_fn.
  Tensor dy = grad({y}, {x}, {}, {.create_graph = true})[0];
  // ... and its own derivative.
  Tensor ddy = grad({dy}, {x})[0];
  const double t = std::tanh(at), closed = -2 * t * (1 - t * t);
  std::printf("  tanh'  = %.12f   (1 - tanh^2 = %.12f)\n", dy.item<double>(), 1 - t * t);
  std::printf("  tanh'' = %.12f   (-2 tanh (1 - tanh^2) = %.12f)\n", ddy.item<double>(), closed);
  report("tanh'' against its closed form", std::abs(ddy.item<double>() - closed), 1e-12);
}

// A 3 -> 8 -> 1 tanh MLP on a few points, its mean squared error.
struct Mlp {
  nn::Linear l1, l2;
  Tensor x, y;
  explicit Mlp(Generator& g)
      : l1(3, 8, {.dtype = kFloat64, .generator = &g}),
        l2(8, 1, {.dtype = kFloat64, .generator = &g}),
        x(randn({6, 3}, g, kFloat64)),
        y(randn({6, 1}, g, kFloat64)) {}
  std::vector<Tensor> params() { return {l1.weight, l1.bias, l2.weight, l2.bias}; }
  Tensor loss() { return mean(pow(l2(tanh(l1(x))) - y, 2.0)); }
};

// The gradient as one flat vector.
std::vector<double> flat(const std::vector<Tensor>& ts) {
  std::vector<double> out;
  for (const Tensor& t : ts)
    for (double v : t.to_vector<double>()) out.push_back(v);
  return out;
}

// 2. H v = d/dθ <∇L(θ), v>: one backward through the gradient, no Hessian built.
void hessian_vector_product() {
  std::printf("\n2. A Hessian-vector product of an MLP's loss (%d parameters)\n", 3 * 8 + 8 + 8 + 1);
  Generator g(7);
  Mlp m(g);
  std::vector<Tensor> p = m.params();
  std::vector<Tensor> v;
  for (const Tensor& t : p) v.push_back(randn(t.shape(), g, kFloat64));
  std::vector<Tensor> grads = grad({m.loss()}, p, {}, {.create_graph = true});
  Tensor dot = zeros({}, kFloat64);
  for (size_t i = 0; i < p.size(); ++i) dot = dot + sum(grads[i] * v[i]);
  const std::vector<double> hv = flat(grad({dot}, p));
  // Finite differences of the gradient: (∇L(θ + εv) - ∇L(θ - εv)) / 2ε.
  const double eps = 1e-6;
  auto grad_at = [&](double s) {
    NoGradGuard no;
    for (size_t i = 0; i < p.size(); ++i) p[i].add_(v[i], s);
    EnableGradGuard on;
    std::vector<double> out = flat(grad({m.loss()}, p));
    NoGradGuard no2;
    for (size_t i = 0; i < p.size(); ++i) p[i].add_(v[i], -s);
    return out;
  };
  const std::vector<double> plus = grad_at(eps), minus = grad_at(-eps);
  std::vector<double> fd(plus.size());
  for (size_t i = 0; i < fd.size(); ++i) fd[i] = (plus[i] - minus[i]) / (2 * eps);
  std::printf("  (H v)[0..3] = %.6f %.6f %.6f %.6f\n", hv[0], hv[1], hv[2], hv[3]);
  std::printf("  finite diff = %.6f %.6f %.6f %.6f\n", fd[0], fd[1], fd[2], fd[3]);
  report("H v against central differences of the gradient", max_abs_diff(hv, fd), 1e-6);
}

// 3. f(x, y, z) = x^2 y + y z^3 + sin(x z), all nine second derivatives.
void full_hessian() {
  const double x = 0.7, y = -1.1, z = 0.4;
  std::printf("\n3. The Hessian of f = x^2 y + y z^3 + sin(xz) at (%.1f, %.1f, %.1f)\n", x, y, z);
  Tensor p = tensor({x, y, z}, kFloat64).requires_grad_();
  Tensor px = select(p, 0, 0), py = select(p, 0, 1), pz = select(p, 0, 2);
  Tensor f = px * px * py + py * pow(pz, 3.0) + sin(px * pz);
  Tensor g = grad({f}, {p}, {}, {.create_graph = true})[0];
  std::vector<double> H;
  for (int i = 0; i < 3; ++i) {
    const std::vector<double> row = grad({select(g, 0, i)}, {p}, {}, {.retain_graph = true})[0].to_vector<double>();
    H.insert(H.end(), row.begin(), row.end());
    std::printf("  [% .6f % .6f % .6f]\n", row[0], row[1], row[2]);
  }
  const double s = std::sin(x * z), c = std::cos(x * z);
  const std::vector<double> want = {2 * y - z * z * s, 2 * x, c - x * z * s,
                                    2 * x, 0, 3 * z * z,
                                    c - x * z * s, 3 * z * z, 6 * y * z - x * x * s};
  report("each entry against the hand-derived Hessian", max_abs_diff(H, want), 1e-12);
  report("symmetry |H - H^T|", std::max({std::abs(H[1] - H[3]), std::abs(H[2] - H[6]), std::abs(H[5] - H[7])}), 1e-15);
}

// 4. Train f to fit data while keeping ||∂f/∂x||^2 small: the penalty's
// gradient with respect to the weights goes through ∂f/∂x itself.
struct Penalized {
  Tensor fit, penalty;
};
Penalized fit_and_penalty(Mlp& m) {
  Tensor x = m.x.detach().requires_grad_();
  Tensor out = m.l2(tanh(m.l1(x)));
  Tensor dfdx = grad({sum(out)}, {x}, {}, {.create_graph = true})[0];  // (6, 3), recorded
  return {mean(pow(out - m.y, 2.0)), mean(sum(dfdx * dfdx, {1}))};
}

void gradient_penalty(int steps) {
  std::printf("\n4. A gradient penalty ||df/dx||^2 (SGD, lr 0.05, %d steps from the same start)\n", steps);
  // First, is the penalty's gradient in the weights right? Against central
  // differences of the penalty itself, for the first layer's weights.
  {
    Generator g(3);
    Mlp m(g);
    std::vector<Tensor> p = m.params();
    const std::vector<double> analytic = grad({fit_and_penalty(m).penalty}, {p[0]})[0].to_vector<double>();
    std::vector<double> numeric;
    const double eps = 1e-6;
    for (int64_t j = 0; j < p[0].numel(); ++j) {
      double* w = p[0].data_ptr<double>() + j;
      const double orig = *w;
      *w = orig + eps;
      const double up = fit_and_penalty(m).penalty.item<double>();
      *w = orig - eps;
      const double down = fit_and_penalty(m).penalty.item<double>();
      *w = orig;
      numeric.push_back((up - down) / (2 * eps));
    }
    report("d penalty / d W1 against central differences", max_abs_diff(analytic, numeric), 1e-7);
  }
  double final_penalty[2] = {0, 0}, final_fit[2] = {0, 0};
  for (int with = 0; with < 2; ++with) {
    Generator g(3);
    Mlp m(g);
    optim::SGD opt(m.params(), 0.05);
    std::printf("  %s penalty:\n    step     fit   penalty\n", with ? "with the" : "without the");
    for (int s = 0; s <= steps; ++s) {
      Penalized r = fit_and_penalty(m);
      final_fit[with] = r.fit.item<double>();
      final_penalty[with] = r.penalty.item<double>();
      if (s % 10 == 0 || s == steps) std::printf("    %4d  %.4f  %.5f\n", s, final_fit[with], final_penalty[with]);
      if (s == steps) break;
      opt.zero_grad();
      // with: through the recorded df/dx, a second derivative in every weight
      (with ? r.fit + r.penalty : r.fit).backward();
      opt.step();
    }
  }
  std::printf("  after %d steps: penalty %.5f with, %.5f without; fit %.4f with, %.4f without\n", steps,
              final_penalty[1], final_penalty[0], final_fit[1], final_fit[0]);
  report("the penalized model is smoother (penalty with - without, < 0)",
         std::max(0.0, final_penalty[1] - final_penalty[0]), 0);
}

int program(int steps) {
  second_derivative_of_tanh(0.5);
  hessian_vector_product();
  full_hessian();
  gradient_penalty(steps);
  std::printf("\n%s\n", examples::failed_checks() == 0 ? "all checks passed" : "SOME CHECKS FAILED");
  return examples::failed_checks() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Second derivatives with ember: create_graph, grad of grad, Hessian-vector products."};
  examples::show_defaults(app);
  int steps = 40;
  app.add_option("--steps", steps, "training steps of the gradient-penalty example")->check(ember::examples::between<int64_t>(1, 100000));
  EMBER_PARSE("higher_order", app, argc, argv);
  return examples::run("higher_order", [&] { return program(steps); });
}
