// Exercise 3.5: log-softmax with the negative log-likelihood, by hand
// (chapter 3, docs/book/03_checking_gradients.md)
//
// The loss of chapter 7: scores z (N, V), one row per prediction, and the
// right class y_n of each row; loss = mean over the N rows of
// -log softmax(z_n)_(y_n). The op below computes it and records
// MyCrossEntropyBackward, which keeps the probabilities p = softmax(z) and
// the one-hot rows of the targets; write the rule. g is dL/dloss, a 0-d
// tensor (1 when the loss is what backward() starts from, but not always);
// return dL/dz, of z's shape. Write -log softmax(z)_y as -z_y + log sum_j exp(z_j)
// and differentiate that.
//
// Check it:  bash scripts/exercise.sh 3.5
#include "exercises/exercise.h"

using namespace ember;

namespace ex3_5 {

struct MyCrossEntropyBackward final : Node {
  EMBER_NODE_NAME(MyCrossEntropyBackward)
  SavedTensor p, onehot;  // softmax(z) and the targets' one-hot rows, both (N, V)
  MyCrossEntropyBackward(const Tensor& probs, const Tensor& hot) : p(probs), onehot(hot) {}
  std::vector<SavedRef> saved() override { return {{"p", &p}, {"onehot", &onehot}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    Tensor P = p.get(*this), Y = onehot.get(*this);
    const double n = static_cast<double>(P.shape()[0]);
    (void)g, (void)P, (void)Y, (void)n;
    TODO("d(-z_y + log sum_j exp z_j)/dz_i for one row, written with p and the one-hot row: and what do the mean "
         "over the N rows and the arriving g do to it?");
  }
};

// Given: the forward, and the node recorded when the scores require grad.
Tensor my_cross_entropy(const Tensor& z, const Tensor& targets) {
  OpScope scope("my_cross_entropy", z, targets);
  Tensor loss, probs, hot;
  {
    NoGradGuard no_grad;
    hot = one_hot(targets, z.shape()[1]).to(z.dtype());
    loss = -mean(sum(log_softmax(z, -1) * hot, {-1}));
    probs = softmax(z, -1);
  }
  if (needs_grad({z})) record(loss, std::make_shared<MyCrossEntropyBackward>(probs, hot), {z});
  return loss;
}

}  // namespace ex3_5
