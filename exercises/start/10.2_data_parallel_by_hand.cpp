// Exercise 10.2: Data parallelism in one process (chapter 10, docs/book/10_several_processes.md)
//
// What N processes do, done by one: write averaged_gradient(model, x, y,
// world). Each rank r in 0..world-1 takes its shard of the batch (its block of
// rows, exercise 10.1), computes the mean squared error of model(shard)
// against the shard's targets, and runs backward: that leaves rank r's
// gradient in every parameter's .grad. Return, per parameter, what an
// all-reduce with ReduceOp::Mean leaves on every rank: the mean over the
// ranks of their gradients. With equal shards it is the gradient of the
// whole batch's mean loss (the checker compares).
//
// Think about:
//   * backward adds into .grad, whatever is there: what is in it when a
//     rank starts, and what must be in it?
//   * each shard's loss is already a mean over its own rows: how do the
//     ranks' gradients combine into the whole batch's?
//
// model.parameters() lists the parameters (model.zero_grad() clears their
// .grad); nn::mse_loss(pred, target) is the loss; x.narrow(0, begin, rows)
// is a block of rows.
//
// Check it:  bash scripts/exercise.sh 10.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex10_2 {

std::vector<Tensor> averaged_gradient(nn::Linear& model, const Tensor& x, const Tensor& y, int64_t world) {
  (void)model;
  (void)x;
  (void)y;
  (void)world;
  TODO("one backward per rank on its shard, then the mean of the ranks' gradients, parameter by parameter");
}

}  // namespace ex10_2
