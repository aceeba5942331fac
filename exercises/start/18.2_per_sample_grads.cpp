// Exercise 18.2: Per-sample gradients, by hand and by vmap(grad) (chapter 18, docs/book/18_vmap.md)
//
// A linear classifier: logits = x W + c, loss = cross_entropy(logits, y).
// For a batch x (B, D), y (B) of class ids, W (D, C), c (C), compute the
// gradient of each sample's own loss (one row of x and its class) with
// respect to W and c, two ways:
//
//   by_hand(x, y, W, c)   from the closed form of the gradient, with
//                         batched ember ops (no loop over the batch):
//                         d loss_b / d logits_b = softmax(logits_b) - onehot(y_b)
//   by_vmap(x, y, W, c)   with vmap of a function of one sample that calls
//                         grad() (vmap/vmap.h; W and c require grad)
//
// Each returns {dW (B, D, C), dc (B, C)}. The checker compares them with a
// loop of grad() over the samples.
//
// Think about:
//   * d loss_b / d W is a (D, C) matrix built from x_b (D) and the (C)
//     vector above: which product of two vectors gives a matrix, and how do
//     you make B of them at once (broadcasting, chapter 1)?
//   * one sample's loss is its own: is it the batch's mean loss, divided by
//     B?
//   * under vmap, the function sees one sample: x_b (D) and y_b (a 0-d id).
//     Which shapes does cross_entropy want?
//
// Check it:  bash scripts/exercise.sh 18.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex18_2 {

std::vector<Tensor> by_hand(const Tensor& x, const Tensor& y, const Tensor& W, const Tensor& c) {
  (void)x;
  (void)y;
  (void)W;
  (void)c;
  TODO("p = softmax(x W + c) - onehot(y), then dW_b = x_b p_b^T for every b at once, and dc_b = p_b");
}

std::vector<Tensor> by_vmap(const Tensor& x, const Tensor& y, const Tensor& W, const Tensor& c) {
  (void)x;
  (void)y;
  (void)W;
  (void)c;
  TODO("vmap of [&](const std::vector<Tensor>& one) { return grad({loss of one sample}, {W, c}); }");
}

}  // namespace ex18_2
