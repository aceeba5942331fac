// Checks exercise 10.2: the mean of the shards' gradients equals the whole
// batch's gradient, for 1, 2 and 4 "ranks" (no processes: the learner's code
// plays every rank in turn). A wrong gradient is compared with the usual
// mistakes' (a sum instead of a mean, .grad not cleared between ranks, shards
// that overlap), computed here from each shard's own gradient.
#include "exercises/checks/check.h"

namespace ex10_2 {
std::vector<ember::Tensor> averaged_gradient(ember::nn::Linear& model, const ember::Tensor& x, const ember::Tensor& y,
                                             int64_t world);
}

namespace {

using namespace ember;
using Grads = std::vector<Tensor>;

// Every parameter's gradient of the mean squared error over rows [begin, begin + rows).
Grads grads_of(nn::Linear& model, const Tensor& x, const Tensor& y, int64_t begin, int64_t rows) {
  model.zero_grad();
  nn::mse_loss(model.forward(x.narrow(0, begin, rows)), y.narrow(0, begin, rows)).backward();
  Grads g;
  for (const Tensor& p : model.parameters()) g.push_back(p.grad().clone());
  return g;
}

Grads scaled(const Grads& a, double s) {
  Grads out;
  for (const Tensor& t : a) out.push_back(t * s);
  return out;
}
Grads plus(const Grads& a, const Grads& b) {
  Grads out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(a[i] + b[i]);
  return out;
}

// The mean over the ranks of what each rank's .grad holds: its shard's
// gradient, and when .grad is not cleared (cumulative) also what it held
// before rank 0 and the gradients of the ranks before it.
Grads mean_of(const std::vector<Grads>& shard, const Grads& before, bool cumulative) {
  Grads total, held = before;
  for (const Grads& g : shard) {
    held = cumulative && !held.empty() ? plus(held, g) : g;
    total = total.empty() ? held : plus(total, held);
  }
  return scaled(total, 1.0 / double(shard.size()));
}

bool same(const Grads& a, const Grads& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!check::matches(a[i], b[i], 1e-12)) return false;
  return true;
}

void same_as_one_process(int64_t world) {
  Generator gen(81);
  nn::Linear model(3, 2, {.dtype = kFloat64, .generator = &gen});
  Tensor x = randn({8, 3}, gen, kFloat64), y = randn({8, 2}, gen, kFloat64);
  const int64_t rows = 8 / world;
  std::vector<Grads> shard, overlapping;
  for (int64_t r = 0; r < world; ++r) {
    shard.push_back(grads_of(model, x, y, r * rows, rows));
    overlapping.push_back(grads_of(model, x, y, r, rows));
  }
  const Grads whole = grads_of(model, x, y, 0, 8);  // and left in .grad, as a caller's last backward would
  const Grads mine = ex10_2::averaged_gradient(model, x, y, world);
  check::expect(mine.size() == whole.size(), std::to_string(mine.size()) + " gradients for " +
                                                 std::to_string(whole.size()) + " parameters (weight and bias)",
                "one gradient per parameter, in the order of model.parameters()");
  std::string hint = "each rank: its own rows, its own backward into cleared .grads; then the mean over the ranks";
  if (same(mine, scaled(mean_of(shard, {}, false), double(world))))
    hint = "that is the sum of the ranks' gradients, world times the batch's: each shard's loss is already a mean "
           "over its rows, so the ranks' gradients are averaged";
  else if (same(mine, mean_of(shard, whole, true)))
    hint = "backward adds into .grad, whatever it holds: each rank's gradient here also holds what was there before "
           "it (the caller's last gradient and the ranks before)";
  else if (same(mine, mean_of(shard, {}, true)))
    hint = "backward adds into .grad: cleared only once, each rank's gradient also holds the ranks' before it";
  else if (same(mine, mean_of(overlapping, {}, false)))
    hint = "the shards overlap: rank r's block starts after the blocks of the r ranks before it (exercise 10.1)";
  else if (same(mine, scaled(mean_of(shard, {}, false), double(world) / 8)))
    hint = "the sum was divided by the number of rows: the all-reduce's mean is over the ranks";
  for (size_t i = 0; i < whole.size(); ++i)
    check::expect_close(mine[i], whole[i],
                        "with " + (world == 1 ? std::string("one rank") : std::to_string(world) + " ranks") +
                            ", the averaged gradient of parameter " +
                            std::to_string(i),
                        1e-12, hint);
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
