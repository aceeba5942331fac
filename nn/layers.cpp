#include "nn/layers.h"

#include <cmath>
#include <sstream>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "nn/init.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ember::nn {

// ---- Linear ----
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(weight.dim() == 2 && x.dim() >= 1 && x.size(-1) == weight.size(1), "linear",
              "input has shape " << shape_str(x.shape()) << " but weight has shape " << shape_str(weight.shape())
                                 << "; input.shape[-1] must equal weight.shape[1]");
  Tensor y = matmul(x, transpose(weight, 0, 1));  // BLAS reads the transposed view directly
  return bias.defined() ? y + bias : y;
}

Linear::Linear(int64_t in, int64_t out, bool with_bias, Generator& gen, DType dtype) {
  EMBER_CHECK(in > 0 && out > 0, "Linear", "in_features " << in << " and out_features " << out << " must be positive");
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  Tensor w = empty({out, in}, dtype);
  init::uniform_(w, -bound, bound, gen);
  weight = register_parameter("weight", w);
  if (with_bias) {
    Tensor b = empty({out}, dtype);
    init::uniform_(b, -bound, bound, gen);
    bias = register_parameter("bias", b);
  }
}
Linear::Linear(int64_t in, int64_t out, bool with_bias, uint64_t seed, DType dtype)
    : Linear(in, out, with_bias, init::lvalue(Generator(seed)), dtype) {}

Tensor Linear::forward(const Tensor& x) { return linear(x, weight, bias); }

std::string Linear::extra_repr() const {
  std::ostringstream os;
  os << "in_features=" << weight.size(1) << ", out_features=" << weight.size(0) << ", bias=" << (bias.defined() ? "true" : "false");
  return os.str();
}

// ---- LayerNorm: one fused op, forward and backward as plain loops over rows ----
struct LayerNormBackward;
// x:(N, D) rows (any leading dims), weight/bias:(D)
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  const int64_t D = x.dim() ? x.size(-1) : 0;
  EMBER_CHECK(x.dim() >= 1 && weight.shape() == Shape{D} && bias.shape() == Shape{D}, "layer_norm",
              "input " << shape_str(x.shape()) << " needs weight and bias of shape (" << D << "), got "
                       << shape_str(weight.shape()) << " and " << shape_str(bias.shape()));
  EMBER_CHECK(x.dtype() == weight.dtype() && x.dtype() == bias.dtype() && x.is_floating_point(), "layer_norm",
              "dtypes must be one floating type: input " << dtype_name(x.dtype()) << ", weight "
                                                         << dtype_name(weight.dtype()) << ", bias " << dtype_name(bias.dtype()));
  Tensor xc = kernel::contiguous(x), wc = kernel::contiguous(weight), bc = kernel::contiguous(bias);
  const int64_t N = D ? x.numel() / D : 0;
  Tensor out = empty(x.shape(), x.dtype());
  Tensor xhat = empty(x.shape(), x.dtype());  // saved for backward
  Tensor rstd = empty({N}, x.dtype());        // 1 / sqrt(var + eps) per row
  EMBER_DISPATCH_FLOAT(x.dtype(), "layer_norm", [&]<typename T>() {
    const T *px = xc.data_ptr<T>(), *pw = wc.data_ptr<T>(), *pb = bc.data_ptr<T>();
    T *po = out.data_ptr<T>(), *ph = xhat.data_ptr<T>(), *pr = rstd.data_ptr<T>();
    detail::parallel_for(N, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(D, 1)), [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        const T* row = px + n * D;
        double mean = 0, var = 0;
        for (int64_t d = 0; d < D; ++d) mean += row[d];
        mean /= static_cast<double>(D);
        for (int64_t d = 0; d < D; ++d) var += (row[d] - mean) * (row[d] - mean);
        var /= static_cast<double>(D);
        const T r = static_cast<T>(1.0 / std::sqrt(var + eps));
        pr[n] = r;
        for (int64_t d = 0; d < D; ++d) {
          T h = (row[d] - static_cast<T>(mean)) * r;
          ph[n * D + d] = h;
          po[n * D + d] = h * pw[d] + pb[d];
        }
      }
    });
  });
  record<LayerNormBackward>(out, {x, weight, bias}, xhat, rstd, weight);
  return out;
}
// With x̂ = (x - μ) r and g' = g ⊙ w (per row of length D):
//   dx = r (g' - mean(g') - x̂ mean(g' ⊙ x̂)),   dw = Σ_rows g ⊙ x̂,   db = Σ_rows g
struct LayerNormBackward final : Node {
  EMBER_NODE_NAME(LayerNormBackward)
  SavedTensor xhat, rstd, weight;
  LayerNormBackward(const Tensor& h, const Tensor& r, const Tensor& w) : xhat(h), rstd(r), weight(w) {}
  std::vector<SavedTensor*> saved() override { return {&xhat, &rstd, &weight}; }
  std::vector<Tensor> apply(const Tensor& g_in) override {
    const Tensor &H = xhat.get(*this), &R = rstd.get(*this), &W = weight.get(*this);
    Tensor g = kernel::contiguous(g_in), wc = kernel::contiguous(W);
    const int64_t D = H.size(-1), N = D ? H.numel() / D : 0;
    Tensor dx = empty(H.shape(), H.dtype());
    EMBER_DISPATCH_FLOAT(H.dtype(), "layer_norm backward", [&]<typename T>() {
      const T *ph = H.data_ptr<T>(), *pr = R.data_ptr<T>(), *pg = g.data_ptr<T>(), *pw = wc.data_ptr<T>();
      T* pdx = dx.data_ptr<T>();
      detail::parallel_for(N, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(D, 1)), [&](int64_t n0, int64_t n1) {
        for (int64_t n = n0; n < n1; ++n) {
          const T *h = ph + n * D, *gr = pg + n * D;
          double mean_g = 0, mean_gh = 0;
          for (int64_t d = 0; d < D; ++d) {
            double gw = gr[d] * pw[d];
            mean_g += gw;
            mean_gh += gw * h[d];
          }
          mean_g /= static_cast<double>(D);
          mean_gh /= static_cast<double>(D);
          for (int64_t d = 0; d < D; ++d)
            pdx[n * D + d] = static_cast<T>(pr[n] * (gr[d] * pw[d] - mean_g - h[d] * mean_gh));
        }
      });
    });
    Tensor g2 = kernel::reshape(g, {N, D});
    Tensor dw = kernel::sum(kernel::binary(kernel::Binary::Mul, g2, kernel::reshape(H, {N, D})), {0}, false);
    Tensor db = kernel::sum(g2, {0}, false);
    return {dx, dw, db};
  }
};

LayerNorm::LayerNorm(int64_t dim, double eps_, DType dtype) : eps(eps_) {
  EMBER_CHECK(dim > 0, "LayerNorm", "dim must be positive, got " << dim);
  weight = register_parameter("weight", ones({dim}, dtype));
  bias = register_parameter("bias", zeros({dim}, dtype));
}
Tensor LayerNorm::forward(const Tensor& x) { return layer_norm(x, weight, bias, eps); }
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
  EMBER_DISPATCH_FLOAT(x.dtype(), "dropout", [&]<typename T>() {
    T* m = mask.data_ptr<T>();
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = gen.next_double() < p ? T(0) : static_cast<T>(keep_scale);
  });
  return x * mask;
}

Dropout::Dropout(double p_, uint64_t seed) : p(p_), gen_(seed) {
  EMBER_CHECK(p >= 0 && p < 1, "Dropout", "p must be in [0, 1), got " << p);
}
Tensor Dropout::forward(const Tensor& x) { return is_training() ? dropout(x, p, gen_) : x; }
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
  Tensor y = x;
  for (auto& m : modules_) y = m->forward(y);
  return y;
}

}  // namespace ember::nn
