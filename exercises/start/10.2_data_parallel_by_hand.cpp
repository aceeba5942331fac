// Exercise 10.2: Data parallelism in one process (chapter 10, docs/book/10_several_processes.md)
//
// What N processes do, done by one: write averaged_gradient(model, x, y,
// world). For each rank r in 0..world-1: clear the model's gradients, take
// rank r's shard of the batch (rows [r B / N, (r + 1) B / N), exercise 10.1),
// compute the mean squared error of model(shard) against its targets,
// backward, and keep a copy (clone) of every parameter's .grad. Return, per
// parameter, the mean over the ranks of those gradients: what an all-reduce
// with ReduceOp::Mean leaves on every rank. With equal shards it is the
// gradient of the whole batch's mean loss (the checker compares).
//
// model.parameters() lists the parameters; nn::mse_loss(pred, target) is the loss.
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
  TODO("one backward per shard, then the mean of the shards' gradients, parameter by parameter");
}

}  // namespace ex10_2
