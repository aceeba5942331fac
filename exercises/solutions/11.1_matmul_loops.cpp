// Exercise 11.1: A matrix product in three loops, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex11_1 {

// a (M, K) @ b (K, N) -> (M, N)
Tensor matmul_loops(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul_loops",
              "shapes " << shape_str(a.shape()) << " and " << shape_str(b.shape()) << " do not multiply");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  const Tensor A = a.contiguous(), B = b.contiguous();
  Tensor C = zeros({M, N});
  const float* pa = A.data_ptr<float>();
  const float* pb = B.data_ptr<float>();
  float* pc = C.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      const float aik = pa[i * K + k];
      for (int64_t j = 0; j < N; ++j) pc[i * N + j] += aik * pb[k * N + j];  // rows of B and C: contiguous
    }
  return C;
}

}  // namespace ex11_1
