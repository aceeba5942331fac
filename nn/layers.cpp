#include "nn/layers.h"

#include <cmath>
#include <sstream>

#include "nn/init.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember::nn {

// ---- Linear ----
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(weight.dim() == 2 && x.dim() >= 1 && x.size(-1) == weight.size(1), "linear",
              "input has shape " << shape_str(x.shape()) << " but weight has shape " << shape_str(weight.shape())
                                 << "; input.shape[-1] must equal weight.shape[1]");
  Tensor y = matmul(x, transpose(weight, 0, 1));  // BLAS reads the transposed view directly
  return bias.defined() ? y + bias : y;
}

Linear::Linear(int64_t in, int64_t out, const LinearOptions& o) {
  EMBER_CHECK(in > 0 && out > 0, "Linear", "in_features " << in << " and out_features " << out << " must be positive");
  Generator& gen = init::generator(o.generator);
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  Tensor w = empty({out, in}, o.dtype, "Linear");
  init::uniform_(w, -bound, bound, gen);
  weight = register_parameter("weight", w);
  if (o.bias) {
    Tensor b = empty({out}, o.dtype, "Linear");
    init::uniform_(b, -bound, bound, gen);
    bias = register_parameter("bias", b);
  }
}

Tensor Linear::forward(const Tensor& x) {
  ModuleScope scope(*this);
  if (quantized) return quantized->linear(x, bias, "Linear");
  return linear(x, weight, bias);
}

void Linear::quantize(const QuantizeOptions& options) {
  EMBER_CHECK(!quantized, "Linear", "the weight is quantized already (" << quantized->options().to_string() << ")");
  use_quantized(std::make_shared<QuantizedWeight>(weight, options, "Linear"));
}

void Linear::use_quantized(std::shared_ptr<QuantizedWeight> q) {
  EMBER_CHECK(!quantized, "Linear", "the weight is quantized already (" << quantized->options().to_string() << ")");
  EMBER_CHECK(q && q->values.shape() == weight.shape(), "Linear",
              "a quantized weight " << (q ? shape_str(q->values.shape()) : "(none)") << " for the weight " << shape_str(weight.shape()));
  parameter_to_buffers("weight", q->buffers());
  weight = q->dequantized();
  quantized = std::move(q);
}

std::string Linear::extra_repr() const {
  std::ostringstream os;
  os << "in_features=" << weight.size(1) << ", out_features=" << weight.size(0) << ", bias=" << (bias.defined() ? "true" : "false");
  if (quantized) os << ", " << quantized->options().to_string();
  return os.str();
}

LayerNorm::LayerNorm(int64_t dim, const LayerNormOptions& o) : eps(o.eps) {
  EMBER_CHECK(dim > 0, "LayerNorm", "dim must be positive, got " << dim);
  weight = register_parameter("weight", ones({dim}, o.dtype));
  bias = register_parameter("bias", zeros({dim}, o.dtype));
}
Tensor LayerNorm::forward(const Tensor& x) {
  ModuleScope scope(*this);
  return layer_norm(x, weight, bias, eps);
}
std::string LayerNorm::extra_repr() const {
  std::ostringstream os;
  os << "(" << weight.size(0) << "), eps=" << eps;
  return os.str();
}

// ---- Dropout ----
Tensor dropout(const Tensor& x, double p, Generator& gen) {
  EMBER_CHECK(p >= 0 && p < 1, "dropout", "p must be in [0, 1), got " << p);
  if (p == 0) return x;
  // A fresh mask of 0 / (1/(1-p)) values, drawn in row-major order.
  Tensor mask = empty(x.shape(), x.dtype());
  const double keep_scale = 1.0 / (1.0 - p);
  GeneratorLock lock(gen);
  EMBER_DISPATCH_FLOAT(x.dtype(), "dropout", [&]<typename T>() {
    T* m = mask.data_ptr<T>();
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = gen.next_double() < p ? T(0) : static_cast<T>(keep_scale);
  });
  return x * mask;
}

Dropout::Dropout(double p_, const DropoutOptions& o)
    : p(p_), gen_(o.seed ? *o.seed : [] {
        GeneratorLock lock(default_generator());
        return default_generator().next_u64();
      }()) {
  EMBER_CHECK(p >= 0 && p < 1, "Dropout", "p must be in [0, 1), got " << p);
}
Tensor Dropout::forward(const Tensor& x) {
  ModuleScope scope(*this);
  return is_training() ? dropout(x, p, gen_) : x;
}
std::string Dropout::extra_repr() const {
  std::ostringstream os;
  os << "p=" << p;
  return os.str();
}

// ---- Sequential ----
Sequential::Sequential(std::vector<std::shared_ptr<UnaryModule>> modules) {
  for (auto& m : modules) push_back(std::move(m));
}
void Sequential::push_back(std::shared_ptr<UnaryModule> m) {
  EMBER_CHECK(m != nullptr, "Sequential", "cannot add a null module");
  register_module(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}
Tensor Sequential::forward(const Tensor& x) {
  ModuleScope scope(*this);
  Tensor y = x;
  for (auto& m : modules_) y = m->forward(y);
  return y;
}

}  // namespace ember::nn
