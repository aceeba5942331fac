// vmap_tour: vmap built up from one rule, then used.
//
//   ./build/examples/vmap_tour
//
// 1. One batching rule by hand: a + b where a carries a batch and b does
//    not, padded so that broadcasting lines the samples up.
// 2. The transform as an interpreter: the graph vmap writes down for one
//    sample, and how each of its calls ran on the batch.
// 3. Per-sample gradients: vmap of a function that calls grad(), against a
//    loop of grad(), and against the closed form of a linear layer's
//    per-sample gradient (an outer product).
// 4. Jacobians in one batched pass, against autograd's loops.
// 5. What vmap refuses, and the loop it falls back to.
// Every check prints its error; the program exits non-zero if one fails.
#include <cstdio>
#include <string>
#include <vector>

#include "common/program.h"
#include "common/report.h"
#include "ember.h"

using namespace ember;
using Inputs = std::vector<Tensor>;

namespace {

double max_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return 1e300;
  return examples::max_abs_diff(a.to_vector<double>(), b.to_vector<double>());
}

Tensor loop(const BatchFn& f, const Inputs& in, const std::vector<bool>& mapped, size_t k = 0) {
  Inputs rows;
  for (int64_t b = 0; b < in[0].size(0); ++b) {
    Inputs one = in;
    for (size_t i = 0; i < in.size(); ++i)
      if (mapped[i]) one[i] = in[i].select(0, b);
    rows.push_back(f(one)[k]);
  }
  return stack(rows, 0);
}

void one_rule() {
  std::printf("1. One rule by hand: a + b, a carries a batch of 3, b does not\n");
  Generator g(1);
  const Tensor a = randn({3, 2}, g, kFloat64), b = randn({4, 2}, g, kFloat64);
  // one sample: a[i] (2) + b (4, 2) -> (4, 2); the batch: a (3, 2) padded to (3, 1, 2)
  const Tensor padded = batching::pad(a, /*is_batched=*/true, /*rank=*/2);
  const Tensor by_rule = padded + b;
  std::printf("  a %s, b %s; a sample's result %s\n", shape_str(a.shape()).c_str(), shape_str(b.shape()).c_str(),
              shape_str((a.select(0, 0) + b).shape()).c_str());
  std::printf("  a padded to %s, plus b: %s\n", shape_str(padded.shape()).c_str(), shape_str(by_rule.shape()).c_str());
  const Tensor unpadded = a.unsqueeze(0) + b.unsqueeze(1);  // a tempting mistake: lines samples up with b's rows
  std::printf("  without the padding, a (3, 2) + b (4, 2) does not broadcast; a.unsqueeze(0) + b.unsqueeze(1) is %s,\n"
              "  its dims in the wrong order: the batch must be dim 0\n",
              shape_str(unpadded.shape()).c_str());
  const BatchFn add = [](const Inputs& in) { return Inputs{in[0] + in[1]}; };
  examples::report("the rule against a loop over the 3 samples", max_diff(by_rule, loop(add, {a, b}, {true, false})), 0);
  examples::report("vmap's add against the same loop", max_diff(vmap(add, {.in_dims = {0, not_mapped}})({a, b})[0],
                                                              loop(add, {a, b}, {true, false})), 0);
}

// one sample x (3); the weight is scaled by a number (the same for every sample)
Inputs layer(const Inputs& in) { return {tanh(matmul(in[0], in[1] * 0.5) + in[2]).sum()}; }

void interpreter() {
  std::printf("\n2. The interpreter: the graph of one sample, then each call on the batch\n");
  Generator g(2);
  const Tensor x = randn({8, 3}, g, kFloat64), w = randn({3, 4}, g, kFloat64), b = randn({4}, g, kFloat64);
  compiler::CaptureOptions o;
  o.transform = "vmap";
  std::printf("%s", compiler::to_string(compiler::capture(layer, {x.select(0, 0), w, b}, o).graph).c_str());
  const Tensor y = vmap(layer, {.in_dims = {0, not_mapped, not_mapped}})({x, w, b})[0];
  const batching_stats::Counts c = batching_stats::last();
  std::printf("  on a batch of 8: %d calls by their batching rule, %d once (no sample changes them), %d looped\n",
              c.by_rule, c.unbatched, c.looped);
  std::printf("  result %s\n", shape_str(y.shape()).c_str());
  examples::report("vmap against the loop over 8 samples", max_diff(y, loop(layer, {x, w, b}, {true, false, false})),
                   1e-14);
}

void per_sample_gradients() {
  std::printf("\n3. Per-sample gradients: one gradient of the loss per sample, batch 16\n");
  Generator g(3);
  const Tensor w = (randn({5, 3}, g, kFloat64) / 2.0).requires_grad_();
  const Tensor x = randn({16, 5}, g, kFloat64), y = randint(0, 3, {16}, g);
  const BatchFn grads = [&](const Inputs& in) {
    return grad({cross_entropy(matmul(in[0].unsqueeze(0), w), in[1].unsqueeze(0))}, {w});
  };
  const Tensor batched = vmap(grads)({x, y})[0];
  std::printf("  vmap(grad): %s, one (5, 3) gradient per sample\n", shape_str(batched.shape()).c_str());
  examples::report("vmap(grad) against a loop of grad", max_diff(batched, loop(grads, {x, y}, {true, true})), 1e-14);
  // closed form: d loss_b / d w = x_b (softmax(x_b w) - onehot(y_b))^T, an outer product per sample
  const Tensor p = softmax(matmul(x, w.detach()), -1) - one_hot(y, 3).to(kFloat64);
  const Tensor outer = x.unsqueeze(2) * p.unsqueeze(1);
  examples::report("against the closed form x_b (p_b - e_y)^T", max_diff(batched, outer), 1e-14);
  const Tensor summed = grad({cross_entropy(matmul(x, w), y, Reduction::Sum)}, {w})[0];
  examples::report("their sum against the gradient of the summed loss", max_diff(batched.sum({0}), summed), 1e-13);
}

void jacobians() {
  std::printf("\n4. Jacobians in one batched pass, f(x) = W2 tanh(W1 x): R^6 -> R^4\n");
  Generator g(4);
  const Tensor w1 = randn({5, 6}, g, kFloat64), w2 = randn({4, 5}, g, kFloat64), x = randn({6}, g, kFloat64);
  const TensorFn f = [&](const Inputs& in) { return matmul(w2, tanh(matmul(w1, in[0]))); };
  examples::report("jacrev_vmap (4 rows, one pass) against jacrev", max_diff(jacrev_vmap(f)({x}), jacrev(f)({x})), 1e-14);
  examples::report("jacfwd_vmap (6 columns, one pass) against jacfwd", max_diff(jacfwd_vmap(f)({x}), jacfwd(f)({x})),
                   1e-14);
  const TensorFn loss = [&](const Inputs& in) { return tanh(matmul(w1, in[0])).pow(2.0).sum(); };
  examples::report("hessian_vmap (6 x 6, one pass) against hessian", max_diff(hessian_vmap(loss)({x}), hessian(loss)({x})),
                   1e-13);
}

void refusals() {
  std::printf("\n5. What vmap refuses, and its loop\n");
  const Tensor x = ones({4, 3});
  auto say = [](const char* what, const std::function<void()>& fn) {
    try {
      fn();
      std::printf("  %s: no error\n", what);
      ++examples::failed_checks();
    } catch (const Error& e) {
      std::printf("  %s:\n    %s\n", what, e.what());
    }
  };
  say("a write in place", [&] { vmap([](const Inputs& in) { return Inputs{in[0].clone().mul_(in[0])}; })({x}); });
  say("a random draw", [&] { vmap([](const Inputs& in) { return Inputs{in[0] + randn({3})}; })({x}); });
  const BatchFn noisy = [](const Inputs& in) { return Inputs{in[0] + randn({3})}; };
  const Tensor same = vmap(noisy, {.randomness = Randomness::Same})({x})[0];
  const Tensor different = vmap(noisy, {.randomness = Randomness::Different})({x})[0];
  examples::report("Randomness::Same: sample 3 drew sample 0's numbers", max_diff(same.select(0, 3), same.select(0, 0)), 0);
  std::printf("  Randomness::Different: sample 3 differs from sample 0 by up to %.3f\n",
              max_diff(different.select(0, 3), different.select(0, 0)));
  // an embedding whose weights differ per sample: no rule for that, so a loop (and a warning on stderr)
  Generator g(5);
  const Tensor weights = randn({4, 6, 2}, g, kFloat64), ids = tensor(std::vector<int64_t>{5, 0, 5});
  const BatchFn rows = [](const Inputs& in) { return Inputs{embedding(in[0], in[1])}; };
  const Tensor looped = vmap(rows, {.in_dims = {0, not_mapped}})({weights, ids})[0];
  std::printf("  embedding with a weight per sample: %d call looped over the batch\n", batching_stats::last().looped);
  examples::report("the loop's values against the loop by hand", max_diff(looped, loop(rows, {weights, ids}, {true, false})),
                   0);
}

int program() {
  one_rule();
  interpreter();
  per_sample_gradients();
  jacobians();
  refusals();
  std::printf("\n%s\n", examples::failed_checks() == 0 ? "all checks passed" : "SOME CHECKS FAILED");
  return examples::failed_checks() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vmap built up from one rule: batching rules, the interpreter, per-sample gradients, Jacobians."};
  examples::show_defaults(app);
  EMBER_PARSE("vmap_tour", app, argc, argv);
  return examples::run("vmap_tour", [&] { return program(); });
}
