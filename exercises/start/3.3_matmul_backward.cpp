// Exercise 3.3: matmul's backward, by hand (chapter 3, docs/book/03_checking_gradients.md)
//
// C = A B, with A (m, k) and B (k, n), so C (m, n) and C_ij = sum_p A_ip B_pj.
// The op below computes C and records MyMatmulBackward; write its rule.
// g is dL/dC, of C's shape; the rule returns dL/dA and dL/dB, in that order.
// The chapter's section "Five rules by hand" derives it; derive it yourself
// first, element by element, from the sum above.
//
// Check it:  bash scripts/exercise.sh 3.3
#include "exercises/exercise.h"

using namespace ember;

namespace ex3_3 {

struct MyMatmulBackward final : Node {
  EMBER_NODE_NAME(MyMatmulBackward)
  SavedTensor a, b;  // the inputs, kept for backward
  MyMatmulBackward(const Tensor& a_, const Tensor& b_) : a(a_), b(b_) {}
  std::vector<SavedRef> saved() override { return {{"a", &a}, {"b", &b}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    Tensor A = a.get(*this), B = b.get(*this);
    (void)g, (void)A, (void)B;
    TODO("dL/dA_ip = sum over j of g_ij B_pj: which product of g and B (transposed or not) is that, and which "
         "product of A and g is dL/dB_pj? Check the shapes: dL/dA is (m, k), dL/dB is (k, n)");
  }
};

// Given: the forward, and the node recorded when an input requires grad.
Tensor my_matmul(const Tensor& a, const Tensor& b) {
  OpScope scope("my_matmul", a, b);
  Tensor out;
  {
    NoGradGuard no_grad;  // ember's matmul computes C, and records nothing
    out = matmul(a, b);
  }
  if (needs_grad({a, b})) record(out, std::make_shared<MyMatmulBackward>(a, b), {a, b});
  return out;
}

}  // namespace ex3_3
