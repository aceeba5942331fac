// Checks exercise 14.2: the Jacobian of a linear map is its matrix (a
// transposed one is named), of a nonlinear map it is what jacfwd gives, and
// the code takes the cheaper mode: f runs n times when n <= m (forward), once
// when n > m (reverse); a wrong count of runs is named (the other mode, one
// vjp per row, an extra run).
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

std::string runs(int calls) { return calls == 1 ? "once" : std::to_string(calls) + " times"; }

// What a wrong number of runs of f means, for n inputs and m outputs.
std::string runs_mistake(int calls, int64_t n, int64_t m) {
  const std::string ns = std::to_string(n), ms = std::to_string(m);
  if (n <= m && calls == 1)
    return "f ran once: that is reverse mode, one vjp and then " + ms + " pullbacks, one per output; with n = " + ns +
           " inputs and m = " + ms + " outputs, " + ns + " jvps, one per input, do less work";
  if (n > m && calls == n)
    return "f ran once per input: that is forward mode, one jvp per column; with n = " + ns + " inputs and m = " + ms +
           " outputs, one vjp and " + ms + " pullbacks do less work";
  if (n > m && calls == m)
    return "f ran once per row: a vjp runs f once, and its pullback can be called for every row";
  if (calls == (n <= m ? n : 1) + 1) return "f ran once more than the mode needs: what else calls f? (m is given)";
  return n <= m ? "one jvp per input element, and nothing else that calls f"
                : "one vjp, then its pullback once per output element";
}

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"but primal 0 has shape", "a jvp's direction t has x's shape: n numbers, one of them 1 for the column it picks"},
    {"but the output has shape", "a pullback takes a u of the output's shape: m numbers, one of them 1 for the row "
                                 "it picks"},
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
         const std::string what = "the Jacobian of A x for A " + shape_str(A.shape());
         if (J.defined() && check::matches(J, A.t(), 1e-14))
           fail(what + " is A's transpose, " + shape_str(J.shape()),
                rows >= cols ? "the columns were stacked one under another: in J they stand side by side"
                             : "the rows were stacked side by side: in J they stand one under another");
         check::expect_close(J, A, what, 1e-14);
       }
     }, kRefusals},
    {"a nonlinear map: the same as jacfwd", [] {
       for (auto [n, m] : {std::pair<int64_t, int64_t>{3, 5}, {5, 3}}) {
         Counted c(n, m, 9);
         Tensor x = tensor({0.1, -0.2, 0.3, 0.4, -0.5}, kFloat64).narrow(0, 0, n).contiguous();
         check::expect_close(ex14_2::jacobian(c.fn(), x, m), jacfwd(c.fn())({x}),
                             "the Jacobian for n = " + std::to_string(n) + ", m = " + std::to_string(m), 1e-13);
       }
     }, kRefusals},
    {"n = 2 inputs, m = 6 outputs: forward mode, f runs 2 times", [] {
       Counted c(2, 6, 5);
       (void)ex14_2::jacobian(c.fn(), tensor({0.5, -1.0}, kFloat64), 6);
       check::expect(c.calls == 2, "f ran " + runs(c.calls) + ", but forward mode needs 2 (one jvp per input)",
                     runs_mistake(c.calls, 2, 6));
     }, kRefusals},
    {"n = 6 inputs, m = 2 outputs: reverse mode, f runs once", [] {
       Counted c(6, 2, 5);
       (void)ex14_2::jacobian(c.fn(), tensor({0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, kFloat64), 2);
       check::expect(c.calls == 1, "f ran " + runs(c.calls) + ", but reverse mode needs 1 (one vjp, then its pullback)",
                     runs_mistake(c.calls, 6, 2));
     }, kRefusals},
  }};
}
