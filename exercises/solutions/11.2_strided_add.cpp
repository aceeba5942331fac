// Exercise 11.2: A strided loop, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex11_2 {

Tensor add_2d(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 2 && a.shape() == b.shape(), "add_2d",
              "expects two matrices of one shape, got " << shape_str(a.shape()) << " and " << shape_str(b.shape()));
  const int64_t R = a.size(0), C = a.size(1);
  Tensor out = empty({R, C});
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const int64_t a0 = a.stride()[0], a1 = a.stride()[1], b0 = b.stride()[0], b1 = b.stride()[1];
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) po[i * C + j] = pa[i * a0 + j * a1] + pb[i * b0 + j * b1];
  return out;
}

}  // namespace ex11_2
