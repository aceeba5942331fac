// Checks exercise 18.2: both ways against a loop of grad() over the batch,
// with named mistakes (a transposed outer product, the one-hot forgotten, a
// mean over the batch); the hand-written one runs the same number of ops for
// a batch of 4 and of 64 (no loop); the vmap one runs through vmap.
#include "exercises/checks/check.h"

namespace ex18_2 {
std::vector<ember::Tensor> by_hand(const ember::Tensor& x, const ember::Tensor& y, const ember::Tensor& W,
                                   const ember::Tensor& c);
std::vector<ember::Tensor> by_vmap(const ember::Tensor& x, const ember::Tensor& y, const ember::Tensor& W,
                                   const ember::Tensor& c);
}

namespace {

using namespace ember;
using Way = std::vector<Tensor> (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&);

struct Problem {
  Tensor x, y, W, c;
  explicit Problem(int64_t B, uint64_t seed = 7) {
    Generator g(seed);
    x = randn({B, 5}, g, kFloat64);
    y = randint(0, 3, {B}, g);
    W = (randn({5, 3}, g, kFloat64) / 2.0).requires_grad_();
    c = randn({3}, g, kFloat64).requires_grad_();
  }
  // The loop of grad() that both ways replace.
  std::vector<Tensor> loop() const {
    std::vector<Tensor> dW, dc;
    for (int64_t b = 0; b < x.size(0); ++b) {
      const Tensor loss = cross_entropy(matmul(x.select(0, b).unsqueeze(0), W) + c, y.select(0, b).unsqueeze(0));
      const std::vector<Tensor> g = grad({loss}, {W, c});
      dW.push_back(g[0]);
      dc.push_back(g[1]);
    }
    return {stack(dW, 0), stack(dc, 0)};
  }
};

void compare(Way way, const char* name) {
  const Problem p(6);
  const std::vector<Tensor> want = p.loop();
  const std::vector<Tensor> got = way(p.x, p.y, p.W, p.c);
  check::expect(got.size() == 2, std::string(name) + " returned " + std::to_string(got.size()) + " tensors",
                "return {dW (B, D, C), dc (B, C)}");
  const Shape w_shape{6, 5, 3}, c_shape{6, 3};
  check::expect(got[0].defined() && got[0].shape() == w_shape,
                std::string(name) + ": dW has shape " + (got[0].defined() ? check::show(got[0].shape()) : "(undefined)") +
                    ", but should be (6, 5, 3): one (D, C) gradient per sample",
                got[0].defined() && got[0].shape() == Shape{6, 3, 5}
                    ? "yours is the transpose: d loss / d W has W's shape (D, C): x_b down the rows, p_b along the columns"
                    : "(B, D, C): x_b (D) times p_b (C) as a table, for every b");
  check::expect(got[1].defined() && got[1].shape() == c_shape,
                std::string(name) + ": dc has shape " + (got[1].defined() ? check::show(got[1].shape()) : "(undefined)") +
                    ", but should be (6, 3)");
  const double off = check::max_diff(got[1], want[1], "dc");
  if (off > 1e-9) {
    const Tensor scaled = got[1] * 6.0;
    check::expect(!check::matches(scaled, want[1]), std::string(name) + ": dc is off by a factor of 6, the batch size",
                  "each sample's loss is its own: the mean over the batch is another loss (dividing by B gives its "
                  "gradient, not a sample's)");
    const Tensor plus_hot = got[1] - one_hot(p.y, 3).to(kFloat64);
    check::expect(!check::matches(plus_hot, want[1]), std::string(name) + ": dc is softmax(logits) itself",
                  "d loss / d logits = softmax(logits) - onehot(y): the target's probability is pulled down by 1");
  }
  check::expect_close(got[1], want[1], std::string(name) + ": dc", 1e-9);
  check::expect_close(got[0], want[0], std::string(name) + ": dW", 1e-9);
}


}  // namespace

check::Exercise check::exercise() {
  return {"18.2", "Per-sample gradients, by hand and by vmap(grad)", "docs/book/18_vmap.md", {
    {"by hand: the loop's gradients", [] { compare(&ex18_2::by_hand, "by_hand"); }},
    {"by hand: the same ops for a batch of 4 as of 64 (no loop)", [] {
       const Problem small(4), large(64);
       const int64_t a = check::ops_called([&] { (void)ex18_2::by_hand(small.x, small.y, small.W, small.c); });
       const int64_t b = check::ops_called([&] { (void)ex18_2::by_hand(large.x, large.y, large.W, large.c); });
       check::expect(a == b, "by_hand ran " + std::to_string(a) + " ops for a batch of 4 and " + std::to_string(b) +
                                 " for 64",
                     "a loop over the samples is what the closed form, written with batched ops, avoids");
     }},
    {"by vmap(grad): the loop's gradients", [] { compare(&ex18_2::by_vmap, "by_vmap"); },
     {{"cross_entropy", "under vmap the function sees one sample: x_b (D) and a 0-d id; cross_entropy wants "
                        "logits (N, C) and targets (N): unsqueeze both to one row"}}},
    {"by vmap(grad): through vmap", [] {
       const Problem p(8);
       (void)ex18_2::by_vmap(p.x, p.y, p.W, p.c);
       const batching_stats::Counts n = batching_stats::last();
       check::expect(n.by_rule > 0, "by_vmap's gradients did not come from vmap's batching rules",
                     "call vmap(one_sample)({x, y}), where one_sample takes one row and its class and calls grad()");
     }},
  }};
}
