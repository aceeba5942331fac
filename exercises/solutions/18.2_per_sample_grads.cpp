// Exercise 18.2, a solution: the closed form as batched outer products, and
// vmap of one sample's grad().
#include "exercises/exercise.h"

using namespace ember;

namespace ex18_2 {

std::vector<Tensor> by_hand(const Tensor& x, const Tensor& y, const Tensor& W, const Tensor& c) {
  const Tensor logits = matmul(x, W.detach()) + c.detach();
  const Tensor p = softmax(logits, -1) - one_hot(y, W.size(1)).to(x.dtype());  // (B, C)
  const Tensor dW = x.unsqueeze(2) * p.unsqueeze(1);                        // (B, D, 1) (B, 1, C)
  return {dW, p};
}

std::vector<Tensor> by_vmap(const Tensor& x, const Tensor& y, const Tensor& W, const Tensor& c) {
  const BatchFn one_sample = [&](const std::vector<Tensor>& in) {
    const Tensor logits = matmul(in[0].unsqueeze(0), W) + c;  // (1, C): one row
    return grad({cross_entropy(logits, in[1].unsqueeze(0))}, {W, c});
  };
  return vmap(one_sample)({x, y});
}

}  // namespace ex18_2
