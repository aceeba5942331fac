// bench_compile: compile/'s workloads, each eager and compiled.
//
//   bench_compile [--threads N] [workload ...]   (default: all, 2 threads)
//
// Every workload runs twice: `name` eagerly, and `name_compiled` through
// ember::compile (fused kernels, compile/fusion.h). For the compiled one it
// also prints `name_compiled_first_call_ms`: the first call, which captures
// the function, generates its kernels and compiles them (or loads them from
// the kernel cache, EMBER_KERNEL_CACHE: bench/compile_compare.sh runs it
// once with an empty cache and once with the full one), and
// `name_compiled_kernels N`, how many kernels it runs. Output lines are
// `name median_ms`, like bench_ember's; bench/torch_reference.py has the
// same eager workloads (PyTorch 1.13 has no torch.compile).
//
// The *_fwd_* workloads run without autograd; the *_fwd_bwd_* ones (and
// chain_2000_small_ops) return grad() of a fixed output gradient, which
// compile captures with the forward as one joint graph.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "ember.h"
#include "train/optim.h"

namespace {

using ember::Tensor;
using Inputs = std::vector<Tensor>;
using bench::Clock;
using bench::median_ms;
using bench::ms_since;

struct Workload {
  std::string name;
  int reps;
  std::function<Inputs()> inputs;           // made once, untimed
  std::function<Inputs(const Inputs&)> fn;  // what is timed, eager or compiled
  bool backward = false;                    // fn calls grad(): autograd on (else off)
  // Runs after fn on its results, eager in both (an optimizer's step).
  std::function<void(const Inputs&)> after = nullptr;
};

// The gradients of <f(xs), g> for xs = in[0..n), g = in[n]: forward and
// backward in one function, which compile captures as one joint graph.
std::function<Inputs(const Inputs&)> with_grad(size_t n, std::function<Tensor(const Inputs&)> f) {
  return [n, f](const Inputs& in) {
    const Inputs xs(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    return ember::grad({f(xs)}, xs, {in[n]});
  };
}

Workload gpt_train_step(const char* name, int reps, int64_t L, int64_t D, int64_t heads, int64_t layers, int64_t B,
                        int64_t T) {
  auto model = std::make_shared<ember::nn::GPT>(
      ember::nn::GPTConfig{.vocab_size = 65, .context_length = L, .dim = D, .heads = heads, .layers = layers});
  auto opt = std::make_shared<ember::optim::AdamW>(model->parameters(), /*lr=*/1e-3);
  return {name, reps,
          [B, T] {
            ember::Generator g(1);
            return Inputs{ember::randint(0, 65, {B, T}, g), ember::randint(0, 65, {B, T}, g)};
          },
          [model](const Inputs& in) { return ember::grad({model->loss(in[0], in[1])}, model->parameters()); },
          true,
          [model, opt](const Inputs& grads) {
            const std::vector<Tensor> params = model->parameters();
            for (size_t i = 0; i < params.size(); ++i) params[i].set_grad(grads[i]);
            opt->step();
          }};
}

std::vector<Workload> workloads() {
  std::vector<Workload> w;
  // GPT-2's MLP hidden layer for 1024 tokens: (1024, 3072), its bias (3072).
  auto mlp = [] {
    ember::Generator g(0);
    return Inputs{ember::randn({1024, 3072}, g), ember::randn({3072}, g)};
  };
  w.push_back({"gelu_fwd_3M", 20, mlp, [](const Inputs& in) { return Inputs{ember::gelu(in[0])}; }});
  w.push_back({"bias_gelu_fwd_3M", 20, mlp, [](const Inputs& in) { return Inputs{ember::gelu(in[0] + in[1])}; }});
  // The tanh form written out op by op, as a learner first writes it (and
  // as PyTorch's gelu(approximate="tanh") computes it in one kernel).
  w.push_back({"gelu_tanh_by_ops_fwd_3M", 20, mlp, [](const Inputs& in) {
                 const Tensor& x = in[0];
                 const double k = 0.7978845608028654;  // sqrt(2 / pi)
                 return Inputs{0.5 * x * (1.0 + ember::tanh(k * (x + 0.044715 * x * x * x)))};
               }});
  // The residual stream for 4096 tokens: (4096, 768).
  auto stream = [] {
    ember::Generator g(1);
    return Inputs{ember::randn({4096, 768}, g), ember::randn({768}, g), ember::randn({768}, g)};
  };
  w.push_back({"layer_norm_fwd_3M", 20, stream,
               [](const Inputs& in) { return Inputs{ember::layer_norm(in[0], in[1], in[2])}; }});
  w.push_back({"softmax_fwd_3M", 20, stream, [](const Inputs& in) { return Inputs{ember::softmax(in[0], -1)}; }});
  // Forward and backward of a fixed output gradient (bench_ember's *_fwd_bwd_* workloads, as grad()).
  auto leaves = [](Inputs in) {
    for (Tensor& t : in) t.requires_grad_();
    return in;
  };
  w.push_back({"gelu_fwd_bwd_3M", 20,
               [&] {
                 ember::Generator g(2);
                 return Inputs{leaves({ember::randn({1024, 3072}, g)})[0], ember::randn({1024, 3072}, g)};
               },
               with_grad(1, [](const Inputs& x) { return ember::gelu(x[0]); }), true});
  w.push_back({"layer_norm_fwd_bwd_3M", 20,
               [&] {
                 ember::Generator g(3);
                 Inputs in = leaves({ember::randn({4096, 768}, g), ember::randn({768}, g), ember::randn({768}, g)});
                 in.push_back(ember::randn({4096, 768}, g));
                 return in;
               },
               with_grad(3, [](const Inputs& x) { return ember::layer_norm(x[0], x[1], x[2]); }), true});
  w.push_back({"softmax_fwd_bwd_3M", 20,
               [&] {
                 ember::Generator g(4);
                 return Inputs{leaves({ember::randn({4096, 768}, g)})[0], ember::randn({4096, 768}, g)};
               },
               with_grad(1, [](const Inputs& x) { return ember::softmax(x[0], -1); }), true});
  // 2000 ops on 4 elements: per-op overhead, nothing else.
  w.push_back({"chain_2000_small_ops_fwd", 20, [] { return Inputs{ember::ones({4})}; },
               [](const Inputs& in) {
                 Tensor y = in[0];
                 for (int i = 0; i < 1000; ++i) y = y * 1.0001 + 0.5;
                 return Inputs{y};
               }});
  // bench_ember's chain_2000_small_ops: the same chain, and backward through it
  w.push_back({"chain_2000_small_ops", 20,
               [] {
                 Tensor x = ember::ones({4});
                 return Inputs{x.requires_grad_(), ember::ones({})};
               },
               with_grad(1,
                         [](const Inputs& x) {
                           Tensor y = x[0];
                           for (int i = 0; i < 1000; ++i) y = y * 1.0001 + 0.5;
                           return y.sum();
                         }),
               true});
  // AdamW's update of every parameter of the tiny GPT, written with ops
  // (optim::adamw_update: new parameters and moments, nothing in place).
  // Eager it is ~11 passes over memory per parameter; compiled, one kernel
  // per parameter. PyTorch: torch.optim.AdamW(foreach=True).step().
  w.push_back({"adamw_update_gpt_tiny", 20,
               [] {
                 const ember::nn::GPT shapes(ember::nn::GPTConfig{
                     .vocab_size = 65, .context_length = 64, .dim = 64, .heads = 4, .layers = 2});
                 ember::Generator g(5);
                 const ember::optim::AdamWScalars s = ember::optim::adamw_scalars(1e-3, 0.01, 3, 0.9, 0.999, ember::kFloat32);
                 Inputs in{s.decay, s.step_size, s.sqrt_bc2};
                 for (const Tensor& p : shapes.parameters()) {
                   const ember::Shape& sh = p.shape();
                   in.insert(in.end(), {ember::randn(sh, g), ember::randn(sh, g), ember::randn(sh, g) * 0.1,
                                        ember::rand(sh, g) * 0.01});
                 }
                 return in;
               },
               [](const Inputs& in) {
                 const ember::optim::AdamWScalars s{in[0], in[1], in[2]};
                 Inputs out;
                 for (size_t i = 3; i + 3 < in.size(); i += 4) {
                   const ember::optim::AdamWUpdate u = ember::optim::adamw_update(in[i], in[i + 1], in[i + 2], in[i + 3], s);
                   out.insert(out.end(), {u.param, u.exp_avg, u.exp_avg_sq});
                 }
                 return out;
               }});
  // bench_ember's gpt_tiny_train_step (V=65, L=64, D=64, 4 heads, 2 layers,
  // B=16, T=64) and gpt_small_train_step (L=256, D=192, 6 heads, 4 layers,
  // B=16, T=128): the loss and its gradients for every parameter compiled
  // as one joint graph, then AdamW's step, eager in both.
  w.push_back(gpt_train_step("gpt_tiny_train_step", 20, 64, 64, 4, 2, 16, 64));
  w.push_back(gpt_train_step("gpt_small_train_step", 5, 256, 192, 6, 4, 16, 128));
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names;
  for (const Workload& w : workloads()) names.push_back(w.name);
  const bench::CommandLine args = bench::command_line(argc, argv, "bench_compile", names);
  if (args.exit_status >= 0) return args.exit_status;
  const int threads = args.threads;
  ember::set_num_threads(threads);
  std::printf("# machine %s; %s\n", ember::blas_info().cpu.c_str(), ember::blas_info().summary().c_str());
  for (const Workload& w : workloads()) {
    if (!args.runs(w.name)) continue;
    ember::GradModeGuard mode(w.backward);
    const Inputs in = w.inputs();
    auto then = [&](const Inputs& r) {
      if (w.after) w.after(r);
    };
    std::printf("%s %.3f\n", w.name.c_str(), median_ms([&] { then(w.fn(in)); }, w.reps));
    ember::compiler::Compiled f = ember::compile(w.fn);
    const auto t0 = Clock::now();
    then(f(in));
    const double first = ms_since(t0);
    int kernels = 0;
    for (const ember::compiler::Call& c : f.graph_for(in).calls) kernels += c.fused != nullptr;
    std::printf("%s_compiled %.3f\n", w.name.c_str(), median_ms([&] { then(f(in)); }, w.reps));
    std::printf("%s_compiled_first_call_ms %.1f\n%s_compiled_kernels %d\n", w.name.c_str(), first, w.name.c_str(),
                kernels);
    std::fflush(stdout);
  }
  return 0;
}
