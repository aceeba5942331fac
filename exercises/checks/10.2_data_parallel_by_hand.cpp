// Checks exercise 10.2: the mean of the shards' gradients equals the whole
// batch's gradient, for 1, 2 and 4 "ranks".
#include "exercises/checks/check.h"

namespace ex10_2 {
std::vector<ember::Tensor> averaged_gradient(ember::nn::Linear& model, const ember::Tensor& x, const ember::Tensor& y,
                                             int64_t world);
}

namespace {

using namespace ember;

void same_as_one_process(int64_t world) {
  Generator gen(81);
  nn::Linear model(3, 2, {.dtype = kFloat64, .generator = &gen});
  Tensor x = randn({8, 3}, gen, kFloat64), y = randn({8, 2}, gen, kFloat64);
  model.zero_grad();
  nn::mse_loss(model.forward(x), y).backward();
  std::vector<Tensor> whole;
  for (const Tensor& p : model.parameters()) whole.push_back(p.grad().clone());
  const std::vector<Tensor> mine = ex10_2::averaged_gradient(model, x, y, world);
  check::expect(mine.size() == whole.size(), std::to_string(mine.size()) + " gradients for " +
                                                 std::to_string(whole.size()) + " parameters (weight and bias)");
  for (size_t i = 0; i < whole.size(); ++i)
    check::expect_close(mine[i], whole[i],
                        "with " + std::to_string(world) + " ranks, the averaged gradient of parameter " +
                            std::to_string(i),
                        1e-12, "each shard's loss is a mean over its rows: average the shards' gradients");
}

}  // namespace

check::Exercise check::exercise() {
  return {"10.2", "Data parallelism in one process", "docs/book/10_several_processes.md", {
    {"one rank: the whole batch", [] { same_as_one_process(1); }},
    {"two ranks: the mean of the two shards' gradients is the batch's", [] { same_as_one_process(2); }},
    {"four ranks", [] {
       same_as_one_process(4);
       note("equal within float64 round-off, not always bit for bit: one process adds the batch in one order, "
            "the ranks add their shards and then the shards' results");
     }},
  }};
}
