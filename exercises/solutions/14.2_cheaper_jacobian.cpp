// Exercise 14.2: The Jacobian, the cheaper way, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex14_2 {

namespace {
Tensor unit(int64_t size, int64_t at) {
  Tensor e = zeros({size}, kFloat64);
  NoGradGuard plain;
  e.narrow(0, at, 1).fill_(1.0);
  return e;
}
}  // namespace

Tensor jacobian(const TensorFn& f, const Tensor& x, int64_t m) {
  const int64_t n = x.numel();
  std::vector<Tensor> parts;
  if (n <= m) {  // forward mode: n passes, each gives a column
    for (int64_t j = 0; j < n; ++j) parts.push_back(jvp(f, {x}, {unit(n, j)}).tangent);
    return stack(parts, 1);
  }
  VjpResult r = vjp(f, {x});  // reverse mode: one pass, then m pullbacks, each gives a row
  for (int64_t i = 0; i < m; ++i) parts.push_back(r.pullback(unit(m, i))[0]);
  return stack(parts, 0);
}

}  // namespace ex14_2
