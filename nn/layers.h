/// @file
/// Layers: Linear, LayerNorm, Dropout, activations, Sequential.
///
/// Legend: N any leading dims (*), I in_features, O out_features, D normalized dim.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "autograd/ops.h"
#include "nn/module.h"
#include "nn/quantize.h"
#include "tensor/random.h"

namespace ember::nn {

/// A module with one input and one output: what Sequential chains.
class UnaryModule : public Module {
 public:
  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }
};

struct LinearOptions {
  bool bias = true;
  DType dtype = kFloat32;
  Generator* generator = nullptr;  // null: the default generator (nn/init.h)
};

/// y = x Wᵀ + b, W:(O, I) as in PyTorch; init W, b ~ U(±1/sqrt(I)).
///   nn::Linear fc(5, 4);                                    // bias, float32
///   nn::Linear fc(5, 4, {.bias = false, .dtype = kFloat64});
class Linear : public UnaryModule {
 public:
  Linear(int64_t in_features, int64_t out_features, const LinearOptions& options = {});
  Tensor forward(const Tensor& x) override;  // x:(*, I) -> (*, O)
  std::string type_name() const override { return "Linear"; }
  std::string extra_repr() const override;
  /// Stores the weight in fewer bits for inference (nn/quantize.h): the
  /// parameter "weight" becomes the buffers "weight" (int8) and
  /// "weight_scale", and `weight` the float32 values they stand for.
  void quantize(const QuantizeOptions& options = {});
  /// The same with a weight quantized already (nn::quantize makes every
  /// layer's first, then swaps them in). Error if the shapes differ.
  void use_quantized(std::shared_ptr<QuantizedWeight> q);

  Tensor weight;  // (O, I)
  Tensor bias;    // (O) or undefined
  std::shared_ptr<QuantizedWeight> quantized;  // set by quantize()
};

/// Functional forms.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
using ember::layer_norm;  // a fused op with its own backward: autograd/ops/layer_norm.cpp
/// Zeroes each element with probability p and scales the rest by 1/(1-p).
Tensor dropout(const Tensor& x, double p, Generator& gen);

struct LayerNormOptions {
  double eps = 1e-5;
  DType dtype = kFloat32;
};

/// Normalizes over the last dim of size D, then scales and shifts (weight=1, bias=0 at init).
class LayerNorm : public UnaryModule {
 public:
  explicit LayerNorm(int64_t dim, const LayerNormOptions& options = {});
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;

  Tensor weight, bias;  // (D)
  double eps;
};

struct DropoutOptions {
  /// The seed of the module's own mask generator (its state is saved with
  /// training checkpoints); none: one draw from the default generator.
  std::optional<uint64_t> seed = std::nullopt;
};

/// Seeded dropout; the identity in eval mode (and when p = 0).
class Dropout : public UnaryModule {
 public:
  explicit Dropout(double p = 0.5, const DropoutOptions& options = {});
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Dropout"; }
  std::string extra_repr() const override;
  Generator& generator() { return gen_; }
  double p;

 private:
  Generator gen_;
};

class ReLU : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override {
    ModuleScope scope(*this);
    return relu(x);
  }
  std::string type_name() const override { return "ReLU"; }
};
class GELU : public UnaryModule {
 public:
  explicit GELU(GeluApprox approx = GeluApprox::None) : approx(approx) {}
  Tensor forward(const Tensor& x) override {
    ModuleScope scope(*this);
    return gelu(x, approx);
  }
  std::string type_name() const override { return "GELU"; }
  std::string extra_repr() const override { return approx == GeluApprox::Tanh ? "approximate='tanh'" : ""; }
  GeluApprox approx;
};
class Tanh : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override {
    ModuleScope scope(*this);
    return tanh(x);
  }
  std::string type_name() const override { return "Tanh"; }
};
class Sigmoid : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override {
    ModuleScope scope(*this);
    return sigmoid(x);
  }
  std::string type_name() const override { return "Sigmoid"; }
};

/// Runs its modules in order; they are registered as "0", "1", ...
class Sequential : public UnaryModule {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<std::shared_ptr<UnaryModule>> modules);
  void push_back(std::shared_ptr<UnaryModule> m);
  Tensor forward(const Tensor& x) override;
  size_t size() const { return modules_.size(); }
  UnaryModule& operator[](size_t i) { return *modules_.at(i); }
  std::string type_name() const override { return "Sequential"; }

 private:
  std::vector<std::shared_ptr<UnaryModule>> modules_;
};

}  // namespace ember::nn
