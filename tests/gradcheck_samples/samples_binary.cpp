// Binary elementwise ops and their tensor-scalar forms (autograd/ops/binary.cpp).
#include "autograd/ops.h"
#include "inputs.h"

namespace ember::samples {

void add_binary_samples(std::vector<OpInfo>& ops) {
  auto binary = [&ops](std::string name, std::string node, std::function<Tensor(const Tensor&, const Tensor&)> f,
                       Make make_a, Make make_b) {
    ops.push_back({.name = std::move(name),
                   .nodes = {std::move(node)},
                   .fn = [f](const Inputs& in) { return f(in[0], in[1]); },
                   .samples = [make_a, make_b](Generator& g) { return binary_samples(g, make_a, make_b); }});
  };
  binary("add", "AddBackward", [](const Tensor& a, const Tensor& b) { return a + b; }, normal_values, normal_values);
  binary("sub", "AddBackward", [](const Tensor& a, const Tensor& b) { return a - b; }, normal_values, normal_values);
  binary("mul", "MulBackward", [](const Tensor& a, const Tensor& b) { return a * b; }, normal_values, normal_values);
  binary("div", "DivBackward", [](const Tensor& a, const Tensor& b) { return a / b; }, normal_values, away_from_zero);
  binary("pow", "PowBackward", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, positive, normal_values);
  // Random doubles never tie; "same tensor twice" ties everywhere and checks the 50/50 split.
  binary("maximum", "MaximumBackward", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }, normal_values,
         normal_values);
  binary("minimum", "MaximumBackward", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }, normal_values,
         normal_values);

  // Tensor-scalar forms: one input each.
  auto scalar = [&ops](std::string name, std::string node, std::function<Tensor(const Tensor&)> f, Make make) {
    ops.push_back({.name = std::move(name),
                   .nodes = {std::move(node)},
                   .fn = [f](const Inputs& in) { return f(in[0]); },
                   .samples = [make](Generator& g) { return unary_samples(g, make); }});
  };
  scalar("add_scalar", "AddScalarBackward", [](const Tensor& x) { return x + 2.5; }, normal_values);
  scalar("scalar_add", "AddScalarBackward", [](const Tensor& x) { return 2.5 + x; }, normal_values);
  scalar("sub_scalar", "AddScalarBackward", [](const Tensor& x) { return x - 1.5; }, normal_values);
  scalar("scalar_sub", "MulScalarBackward", [](const Tensor& x) { return 1.5 - x; }, normal_values);
  scalar("mul_scalar", "MulScalarBackward", [](const Tensor& x) { return x * 3.0; }, normal_values);
  scalar("scalar_mul", "MulScalarBackward", [](const Tensor& x) { return 3.0 * x; }, normal_values);
  scalar("div_scalar", "DivScalarBackward", [](const Tensor& x) { return x / 4.0; }, normal_values);
  scalar("scalar_div", "RDivScalarBackward", [](const Tensor& x) { return 2.0 / x; }, away_from_zero);
  scalar("pow_scalar", "PowScalarBackward", [](const Tensor& x) { return pow(x, 3.0); }, normal_values);
  scalar("pow_scalar_square", "PowScalarBackward", [](const Tensor& x) { return pow(x, 2.0); }, normal_values);
  scalar("pow_scalar_fraction", "PowScalarBackward", [](const Tensor& x) { return pow(x, -1.5); }, positive);
}

}  // namespace ember::samples
