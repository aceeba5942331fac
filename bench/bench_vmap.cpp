// bench_vmap: vmap/'s workloads, each as a loop and batched.
//
//   bench_vmap [--threads N] [--profile] [workload ...]   (default: all, 2 threads)
//
// Every workload runs twice: `name_loop`, one pass per sample (or per row
// or column of a Jacobian: autograd/functional.h, or a loop of grad()), and
// `name_vmap`, the same numbers in one batched pass (vmap/vmap.h,
// vmap/functional.h). Output lines are `name median_ms`, like bench_ember's;
// bench/torch_reference.py has the same workloads in functorch (vmap, grad,
// jacfwd, jacrev, hessian), PyTorch's batched way; bench/vmap_compare.sh
// prints the three side by side. With --profile, instead of timing, each
// workload's batched run once under inspect::Profiler (after two runs): where
// vmap's time goes, op by op.
//
// Legend: the MLP is f(x) = W2 tanh(W1 x); the tiny GPT is train_gpt's
// (V=65, L=64, D=64, 4 heads, 2 layers).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "ember.h"

namespace {

using ember::Tensor;
using Inputs = std::vector<Tensor>;
using bench::median_ms;

struct Workload {
  std::string name;
  int reps;
  // Each makes its inputs (untimed) and returns the two bodies timed.
  std::function<std::pair<std::function<void()>, std::function<void()>>()> setup;
};

// f(x) = W2 tanh(W1 x), R^n -> R^m, hidden 64; its Jacobian in x.
Workload mlp_jacobian(const std::string& name, int64_t n, int64_t m, bool forward) {
  return {name, 20, [n, m, forward] {
            ember::Generator g(0);
            Tensor W1 = ember::randn({64, n}, g) / 8.0, W2 = ember::randn({m, 64}, g) / 8.0;
            Tensor x = ember::randn({n}, g);
            ember::TensorFn f = [W1, W2](const Inputs& in) { return ember::matmul(W2, ember::tanh(ember::matmul(W1, in[0]))); };
            ember::JacobianFn loop = forward ? ember::jacfwd(f) : ember::jacrev(f);
            ember::JacobianFn batched = forward ? ember::jacfwd_vmap(f) : ember::jacrev_vmap(f);
            return std::make_pair(std::function<void()>([loop, x] { (void)loop({x}); }),
                                  std::function<void()>([batched, x] { (void)batched({x}); }));
          }};
}

ember::nn::GPTConfig tiny_gpt() {
  return {.vocab_size = 65, .context_length = 64, .dim = 64, .heads = 4, .layers = 2};
}

// One gradient per sample of a loss with shared parameters: a loop of
// grad() over the batch, and vmap of the same function.
std::pair<std::function<void()>, std::function<void()>> per_sample(std::function<Inputs(const Inputs&)> grads,
                                                                   Inputs batch) {
  const int64_t B = batch[0].size(0);
  auto loop = [grads, batch, B] {
    for (int64_t b = 0; b < B; ++b) {
      Inputs one;
      for (const Tensor& t : batch) one.push_back(t.select(0, b));
      (void)grads(one);
    }
  };
  ember::BatchFn batched = ember::vmap(grads);
  return {loop, [batched, batch] { (void)batched(batch); }};
}

std::vector<Workload> workloads() {
  std::vector<Workload> w;
  // The Jacobian of the MLP: 64 -> 16 (reverse mode's shape) and 16 -> 64
  // (forward mode's): the loop makes one pass per column (jacfwd) or row
  // (jacrev), vmap one batched pass.
  w.push_back(mlp_jacobian("jacfwd_64_to_16", 64, 16, true));
  w.push_back(mlp_jacobian("jacrev_64_to_16", 64, 16, false));
  w.push_back(mlp_jacobian("jacfwd_16_to_64", 16, 64, true));
  w.push_back(mlp_jacobian("jacrev_16_to_64", 16, 64, false));
  // The Hessian of the tiny GPT's loss (B=2, T=32) in one parameter, the
  // final layer norm's weight (64 numbers): 64 x 64.
  w.push_back({"hessian_gpt_tiny_ln_f", 5, [] {
                 auto model = std::make_shared<ember::nn::GPT>(tiny_gpt());
                 ember::Generator g(1);
                 Tensor x = ember::randint(0, 65, {2, 32}, g), y = ember::randint(0, 65, {2, 32}, g);
                 Tensor weight;
                 for (const auto& [name, p] : model->named_parameters())
                   if (name == "ln_f.weight") weight = p;
                 ember::TensorFn loss = [model, x, y](const Inputs& in) {
                   return ember::nn::functional_call(*model, {{"ln_f.weight", in[0]}}, [&] { return model->loss(x, y); });
                 };
                 ember::JacobianFn loop = ember::hessian(loss), batched = ember::hessian_vmap(loss);
                 return std::make_pair(std::function<void()>([loop, weight] { (void)loop({weight.detach()}); }),
                                       std::function<void()>([batched, weight] { (void)batched({weight.detach()}); }));
               }});
  // Per-sample gradients, batch 64: an MLP (64 -> 128 -> 10, tanh,
  // cross-entropy; one sample is a row and its class) and the tiny GPT (one
  // sample is a sequence of 32 tokens and its targets).
  w.push_back({"per_sample_grads_mlp_b64", 20, [] {
                 ember::Generator g(2);
                 Inputs params{(ember::randn({64, 128}, g) / 8.0).requires_grad_(), ember::zeros({128}).requires_grad_(),
                               (ember::randn({128, 10}, g) / 11.0).requires_grad_(), ember::zeros({10}).requires_grad_()};
                 Tensor x = ember::randn({64, 64}, g), y = ember::randint(0, 10, {64}, g);
                 auto grads = [params](const Inputs& in) {
                   Tensor h = ember::tanh(ember::matmul(in[0].unsqueeze(0), params[0]) + params[1]);
                   Tensor loss = ember::cross_entropy(ember::matmul(h, params[2]) + params[3], in[1].unsqueeze(0));
                   return ember::grad({loss}, params);
                 };
                 return per_sample(grads, {x, y});
               }});
  w.push_back({"per_sample_grads_gpt_tiny_b64", 3, [] {
                 auto model = std::make_shared<ember::nn::GPT>(tiny_gpt());
                 ember::Generator g(3);
                 Tensor x = ember::randint(0, 65, {64, 32}, g), y = ember::randint(0, 65, {64, 32}, g);
                 const Inputs params = model->parameters();
                 auto grads = [model, params](const Inputs& in) {
                   return ember::grad({model->loss(in[0].unsqueeze(0), in[1].unsqueeze(0))}, params);
                 };
                 return per_sample(grads, {x, y});
               }});
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names;
  for (const Workload& w : workloads()) names.push_back(w.name);
  bool profile = false;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--profile") profile = true;
    else rest.push_back(argv[i]);
  }
  const bench::CommandLine args =
      bench::command_line(static_cast<int>(rest.size()), rest.data(), "bench_vmap", names);
  if (args.exit_status >= 0) return args.exit_status;
  const int threads = args.threads;
  ember::set_num_threads(threads);
  std::printf("# machine %s; %s\n", ember::blas_info().cpu.c_str(), ember::blas_info().summary().c_str());
  for (const Workload& w : workloads()) {
    if (!args.runs(w.name)) continue;
    const auto [loop, batched] = w.setup();
    if (profile) {
      batched();
      batched();
      ember::inspect::Profiler p;
      batched();
      std::printf("# %s, the batched run under the profiler:\n%s", w.name.c_str(), p.report(10, 0).c_str());
      continue;
    }
    std::printf("%s_loop %.3f\n", w.name.c_str(), median_ms(loop, w.reps));
    std::printf("%s_vmap %.3f\n", w.name.c_str(), median_ms(batched, w.reps));
    std::fflush(stdout);
  }
  return 0;
}
