// Stage 6: derive it yourself (docs/book/build_your_own/06_derived.md).
// Each op records ONE node (stage 4's record) whose backward you derive on
// paper first: no chain of stage 4's Var ops inside. Each MINI_TODO asks a
// question; replace it with your code, then run
//   bash scripts/build_your_own.sh 6
#include "mini/derived.h"

#include <cmath>
#include <numbers>
#include <string>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)": a shape, for the messages of your refusals (given).
[[maybe_unused]] std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

Var softmax(const Var& x) {
  (void)x;
  MINI_TODO("what is e^1000 in a double, and what can you subtract from a row without changing its softmax? For "
            "the backward: how does y_i move when x_j moves, for j = i and for j != i?");
}

Var log_softmax(const Var& x) {
  (void)x;
  MINI_TODO("log(softmax) computed as the log of a softmax that underflowed to 0 is -inf: what form of it never "
            "takes the log of a number below 1? And its derivative, from the softmax's?");
}

Var cross_entropy(const Var& logits, const std::vector<int64_t>& targets) {
  (void)logits;
  (void)targets;
  MINI_TODO("which element of log_softmax does each row's loss read? Its gradient, worked out for one row, is "
            "remarkably simple: what is it, and what does the mean over N rows do to it?");
}

Var layer_norm(const Var& x, const Var& gamma, const Var& beta, double eps) {
  (void)x;
  (void)gamma;
  (void)beta;
  (void)eps;
  MINI_TODO("divide the variance by D or by D - 1? For dx: x̂ depends on x_j directly, through the mean, and "
            "through the variance: three terms. What are gamma's and beta's gradients, with x of more than 2 "
            "dims?");
}

Var gelu(const Var& x) {
  (void)x;
  MINI_TODO("x Phi(x): which rule differentiates a product, and what is the derivative of the normal CDF?");
}

}  // namespace mini
