// Built against an installed ember: proves the headers, the libraries and the
// CMake package config are complete. Through find_package(ember) and the one
// target ember::ember alone: a small MLP learns XOR (nn modules, an
// optimizer, the loss, the plot library), a Hessian-vector product is taken
// (gradients of gradients), and a backward pass is traced (the instruments),
// and the program checks each.
#include <cmath>
#include <iostream>
#include <vector>

#include "ember.h"

using namespace ember;

int main(int argc, char** argv) {
  manual_seed(0);
  // XOR: four points, two classes that no straight line separates.
  Tensor x = tensor({0, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
  Tensor y = tensor({0, 1, 1, 0}, {4, 1});
  nn::Sequential mlp({std::make_shared<nn::Linear>(2, 8), std::make_shared<nn::Tanh>(), std::make_shared<nn::Linear>(8, 1)});
  optim::Adam opt(mlp.parameters(), /*lr=*/0.05);
  plot::Series curve{"training loss"};
  double loss_value = 0;
  for (int step = 0; step < 400; ++step) {
    Tensor loss = nn::mse_loss(sigmoid(mlp.forward(x)), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss_value = loss.item<double>();
    curve.x.push_back(step);
    curve.y.push_back(loss_value);
  }
  std::vector<float> p = sigmoid(mlp.forward(x)).to_vector<float>();
  std::cout << "consumer: XOR after 400 Adam steps: loss " << loss_value << ", outputs " << p[0] << " " << p[1] << " "
            << p[2] << " " << p[3] << "\n";
  const bool learned = loss_value < 0.01 && p[0] < 0.2 && p[1] > 0.8 && p[2] > 0.8 && p[3] < 0.2;
  if (argc > 1) {
    plot::LinePlot fig{.title = "XOR, MSE loss", .x = {.label = "step"}, .y = {.label = "loss", .log = true}, .series = {curve}};
    plot::write_png(fig, argv[1]);
    std::cout << "consumer: wrote " << argv[1] << "\n";
  }
  if (!learned) {
    std::cerr << "consumer: the MLP did not learn XOR\n";
    return 1;
  }
  // H v for f(w) = sum(w^3): H = diag(6 w), so H v = 6 w v.
  Tensor w = tensor({0.5, -1.0, 2.0}, {3}, kFloat64).requires_grad_();
  Tensor v = tensor({1.0, 2.0, 3.0}, {3}, kFloat64);
  Tensor g = grad({sum(pow(w, 3.0))}, {w}, {}, {.create_graph = true})[0];
  std::vector<double> hv = grad({sum(g * v)}, {w})[0].to_vector<double>();
  const bool hvp_ok = std::abs(hv[0] - 3.0) < 1e-12 && std::abs(hv[1] + 12.0) < 1e-12 && std::abs(hv[2] - 36.0) < 1e-12;
  std::cout << "consumer: H v = " << hv[0] << " " << hv[1] << " " << hv[2] << " (6 w v = 3 -12 36)\n";
  // The trace of one backward of the MLP: one step per node, complete.
  size_t traced = 0;
  {
    inspect::BackwardTrace trace;
    nn::mse_loss(sigmoid(mlp.forward(x)), y).backward();
    traced = trace.complete() ? trace.steps().size() : 0;
  }
  std::cout << "consumer: traced a backward pass of " << traced << " nodes\n";
  if (!hvp_ok || traced < 5) {
    std::cerr << "consumer: " << (hvp_ok ? "the trace is empty or incomplete" : "the Hessian-vector product is wrong") << "\n";
    return 1;
  }
  std::cout << "consumer: training ok\n";
  return 0;
}
