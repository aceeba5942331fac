// Runs the three things ember's environment variables steer — a float32 exp
// (EMBER_SIMD), a parallel op on two threads (EMBER_ADAPTIVE_THREADS) and a
// matrix product (OPENBLAS_CORETYPE) — and prints what ran. A refused value
// ends it with ember's one-line error and status 1. Run by
// tests/tools/env_values.sh.
#include <cstdio>
#include <exception>

#include "ember.h"
#include "tensor/machine/vec_math.h"

int main() {
  try {
    using namespace ember;
    set_num_threads(2);
    Tensor x = randn({1 << 20});
    Tensor y = exp(x) + x;  // float32 exp, and an elementwise op large enough to run in parallel
    Tensor p = matmul(randn({64, 64}), randn({64, 64}));
    std::printf("simd %s\nadaptive %d\nblas %s\nok %g\n", detail::vec_math_isa(), adaptive_threads() ? 1 : 0,
                blas_info().summary().c_str(), static_cast<double>(y.sum().item<float>() + p.sum().item<float>()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
