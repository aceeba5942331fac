// Built against an installed ember: proves the headers, the libraries and the
// CMake package config are complete. A small MLP learns XOR through
// find_package(ember) alone (nn modules, an optimizer, the loss, the plot
// library), and the program checks that it did.
#include <iostream>
#include <vector>

#include "ember.h"
#include "plot/plot.h"

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
  std::cout << "consumer: training ok\n";
  return 0;
}
