// Unary elementwise ops (autograd/ops/unary.cpp).
#include <optional>
#include <utility>

#include "autograd/ops.h"
#include "inputs.h"

namespace ember::samples {

void add_unary_samples(std::vector<OpInfo>& ops) {
  auto unary = [&ops](std::string name, std::string node, std::function<Tensor(const Tensor&)> f, Make make,
                      std::vector<std::pair<double, double>> values = {}) {
    ops.push_back({.name = std::move(name),
                   .nodes = {std::move(node)},
                   .fn = [f](const Inputs& in) { return f(in[0]); },
                   .samples = [make](Generator& g) { return unary_samples(g, make); },
                   .values = std::move(values)});
  };
  unary("neg", "NegBackward", [](const Tensor& x) { return -x; }, normal_values);
  unary("exp", "ExpBackward", [](const Tensor& x) { return exp(x); }, normal_values);
  unary("log", "LogBackward", [](const Tensor& x) { return log(x); }, positive);
  unary("sqrt", "SqrtBackward", [](const Tensor& x) { return sqrt(x); }, positive);
  unary("rsqrt", "RsqrtBackward", [](const Tensor& x) { return rsqrt(x); }, positive);
  unary("abs", "AbsBackward", [](const Tensor& x) { return abs(x); }, away_from_zero);
  unary("sin", "SinBackward", [](const Tensor& x) { return sin(x); }, normal_values);
  unary("cos", "CosBackward", [](const Tensor& x) { return cos(x); }, normal_values);
  unary("erf", "ErfBackward", [](const Tensor& x) { return erf(x); }, normal_values);
  unary("tanh", "TanhBackward", [](const Tensor& x) { return tanh(x); }, normal_values);
  unary("sigmoid", "SigmoidBackward", [](const Tensor& x) { return sigmoid(x); }, normal_values);
  unary("relu", "ReluBackward", [](const Tensor& x) { return relu(x); }, away_from_zero);
  // log(1 + e^x): ln 2 at 0; tiny, not 0, far left (log(1 + 1.9e-22) is 0 in float64); x, not inf, far right
  unary("softplus", "SoftplusBackward", [](const Tensor& x) { return softplus(x); }, normal_values,
        {{0, 0.69314718055994530942}, {1, 1.3132616875182228340}, {-1, 0.31326168751822283405},
         {30, 30.000000000000093576}, {-50, 1.9287498479639177830e-22}, {1000, 1000}});
  unary("gelu", "GeluBackward", [](const Tensor& x) { return gelu(x); }, normal_values);
  unary("gelu_tanh", "GeluBackward", [](const Tensor& x) { return gelu(x, GeluApprox::Tanh); }, normal_values);
  unary("clamp", "ClampBackward", [](const Tensor& x) { return clamp(x, -0.5, 0.5); }, avoiding({-0.5, 0.5}));
  unary("clamp_min", "ClampBackward", [](const Tensor& x) { return clamp(x, -0.5, std::nullopt); }, avoiding({-0.5}));
}

}  // namespace ember::samples
