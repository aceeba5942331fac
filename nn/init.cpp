#include "nn/init.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember::nn::init {

namespace {
std::pair<double, double> fans(const Tensor& t, const char* op) {
  EMBER_CHECK(t.dim() >= 2, op, "needs a tensor with at least 2 dims to compute fan in/out, got shape "
                                    << shape_str(t.shape()));
  double receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= static_cast<double>(t.shape()[d]);
  return {static_cast<double>(t.shape()[1]) * receptive, static_cast<double>(t.shape()[0]) * receptive};
}
}  // namespace

void normal_(Tensor& t, double mean, double std, Generator& gen) {
  NoGradGuard g;
  ember::normal_(t, mean, std, gen);
}
void uniform_(Tensor& t, double lo, double hi, Generator& gen) {
  NoGradGuard g;
  ember::uniform_(t, lo, hi, gen);
}
void zeros_(Tensor& t) {
  NoGradGuard g;
  kernel::fill_(t, 0.0);
}
void xavier_uniform_(Tensor& t, Generator& gen, double gain) {
  auto [fan_in, fan_out] = fans(t, "xavier_uniform_");
  double bound = gain * std::sqrt(6.0 / (fan_in + fan_out));
  uniform_(t, -bound, bound, gen);
}
void kaiming_uniform_(Tensor& t, Generator& gen, double a) {
  auto [fan_in, fan_out] = fans(t, "kaiming_uniform_");
  (void)fan_out;
  double bound = std::sqrt(6.0 / ((1 + a * a) * fan_in));
  uniform_(t, -bound, bound, gen);
}

}  // namespace ember::nn::init
