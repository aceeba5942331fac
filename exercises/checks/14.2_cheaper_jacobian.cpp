// Checks exercise 14.2: the Jacobian of a linear map is its matrix, of a
// nonlinear map it is what jacfwd and jacrev give, and the code takes the
// cheaper mode: f runs n times when n <= m (forward), once when n > m (reverse).
#include <string>

#include "exercises/checks/check.h"

namespace ex14_2 {
ember::Tensor jacobian(const ember::TensorFn& f, const ember::Tensor& x, int64_t m);
}

namespace {

using namespace ember;

// W2 tanh(W1 x), counting its calls
struct Counted {
  Tensor W1, W2;
  int calls = 0;
  Counted(int64_t n, int64_t m, uint64_t seed) {
    Generator g(seed);
    W1 = randn({6, n}, g, kFloat64);
    W2 = randn({m, 6}, g, kFloat64);
  }
  TensorFn fn() {
    return [this](const std::vector<Tensor>& in) {
      ++calls;
      return matmul(W2, tanh(matmul(W1, in[0])));
    };
  }
};

}  // namespace

check::Exercise check::exercise() {
  return {"14.2", "The Jacobian, the cheaper way", "docs/book/14_forward_mode.md", {
    {"the Jacobian of x -> A x is A, both when n <= m and when n > m", [] {
       for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4, 2}, {2, 4}}) {
         Generator g(3);
         Tensor A = randn({rows, cols}, g, kFloat64);
         TensorFn f = [A](const std::vector<Tensor>& in) { return matmul(A, in[0]); };
         Tensor J = ex14_2::jacobian(f, randn({cols}, g, kFloat64), rows);
         check::expect_close(J, A, "the Jacobian of A x for A " + shape_str(A.shape()), 1e-14,
                             "columns go along dim 1 (stack(..., 1)), rows along dim 0");
       }
     }},
    {"a nonlinear map: the same as jacfwd", [] {
       for (auto [n, m] : {std::pair<int64_t, int64_t>{3, 5}, {5, 3}}) {
         Counted c(n, m, 9);
         Tensor x = tensor({0.1, -0.2, 0.3, 0.4, -0.5}, kFloat64).narrow(0, 0, n).contiguous();
         check::expect_close(ex14_2::jacobian(c.fn(), x, m), jacfwd(c.fn())({x}),
                             "the Jacobian for n = " + std::to_string(n) + ", m = " + std::to_string(m), 1e-13);
       }
     }},
    {"n = 2 inputs, m = 6 outputs: forward mode, f runs 2 times", [] {
       Counted c(2, 6, 5);
       (void)ex14_2::jacobian(c.fn(), tensor({0.5, -1.0}, kFloat64), 6);
       check::expect(c.calls == 2, "f ran " + std::to_string(c.calls) + " times, but forward mode needs 2 (one jvp per input)",
                     "with n <= m take columns: one jvp per input element, and nothing else that calls f");
     }},
    {"n = 6 inputs, m = 2 outputs: reverse mode, f runs once", [] {
       Counted c(6, 2, 5);
       (void)ex14_2::jacobian(c.fn(), tensor({0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, kFloat64), 2);
       check::expect(c.calls == 1, "f ran " + std::to_string(c.calls) + " times, but reverse mode needs 1 (one vjp, then its pullback)",
                     "call vjp once and its pullback once per output element");
     }},
  }};
}
