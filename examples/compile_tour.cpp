// compile_tour: ember::compile on one function, step by step.
//
//   ./build/examples/compile_tour [--rows N] [--runs N]
//
// The function is a bias and GELU's tanh form written op by op, as a learner
// first writes it: ten elementwise ops, each a pass over memory when run
// eagerly.
// 1. The graph the tracer captures, one line per op.
// 2. The graph that runs, after the passes: one fused call.
// 3. The C++ generated for it (the kernel cache's file; EMBER_KERNEL_CACHE
//    says where the cache is).
// 4. Compiled against eager: the same bits, and the time of each (medians).
// 5. Forward and backward as one joint graph: grad() inside the function.
// 6. A fused op and its backward kernel in a joint graph: layer norm.
// Last, what this process compiled and what it found in the cache: run it
// twice and the second run compiles nothing.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/program.h"
#include "ember.h"

using namespace ember;
using Inputs = std::vector<Tensor>;

namespace {

Inputs bias_gelu(const Inputs& in) {
  const Tensor h = in[0] + in[1];
  const double k = 0.7978845608028654;  // sqrt(2 / pi)
  return {0.5 * h * (1.0 + tanh(k * (h + 0.044715 * h * h * h)))};
}

bool same_bits(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  return a.shape() == b.shape() && std::equal(x.begin(), x.end(), y.begin(), [](float p, float q) {
           return std::bit_cast<uint32_t>(p) == std::bit_cast<uint32_t>(q);
         });
}

double median_ms(const std::function<void()>& f, int runs) {
  std::vector<double> t;
  f();
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int program(int64_t rows, int runs) {
  std::printf("compile_tour: %s\n\n", examples::machine_line().c_str());
  Generator g(0);
  const Inputs in = {randn({rows, 768}, g), randn({768}, g)};
  NoGradGuard no_grad;

  compiler::Capture c = compiler::capture(bias_gelu, in);
  std::printf("1. The graph captured (%zu calls):\n%s\n", c.graph.calls.size(), compiler::to_string(c.graph).c_str());

  compiler::Compiled f = compile(bias_gelu);
  const Inputs first = f(in);  // captures, fuses, compiles (or loads) the kernel
  const compiler::Graph& graph = f.graph_for(in);
  std::printf("2. The graph that runs:\n%s\n", compiler::to_string(graph).c_str());

  for (const compiler::Call& call : graph.calls) {
    if (!call.fused) continue;
    std::printf("3. Its kernel, %s:\n", call.fused->file.c_str());
    std::istringstream source(call.fused->source);
    for (std::string line; std::getline(source, line);) std::printf("   %s\n", line.c_str());
    std::printf("\n");
  }

  const Inputs eager = bias_gelu(in), compiled = f(in);
  const bool same = same_bits(compiled[0], eager[0]) && same_bits(first[0], eager[0]);
  const double eager_ms = median_ms([&] { bias_gelu(in); }, runs);
  const double compiled_ms = median_ms([&] { f(in); }, runs);
  std::printf("4. Compiled against eager, (%lld, 768) float32, medians of %d runs:\n", static_cast<long long>(rows), runs);
  std::printf("   the same bits: %s\n   eager %.3f ms, compiled %.3f ms: %.2fx\n\n", same ? "yes" : "NO",
              eager_ms, compiled_ms, eager_ms / compiled_ms);

  GradModeGuard grad_on(true);
  const compiler::Function with_grad = [](const Inputs& x) {
    return ember::grad({bias_gelu({x[0], x[1]})[0]}, {x[0], x[1]}, {x[2]});
  };
  const Inputs leaves = {in[0].detach().requires_grad_(), in[1].detach().requires_grad_(), randn({rows, 768}, g)};
  compiler::Compiled fb = compile(with_grad);
  const Inputs grads = fb(leaves), again = fb(leaves);
  int kernels = 0;
  for (const compiler::Call& call : fb.graph_for(leaves).calls) kernels += call.fused != nullptr;
  const bool same_grads = same_bits(again[0], grads[0]) && same_bits(again[1], grads[1]);
  std::printf("5. Forward and backward, grad() inside: %zu calls, %d fused; the gradients again from the graph: %s\n\n",
              fb.graph_for(leaves).calls.size(), kernels, same_grads ? "the same bits" : "DIFFERENT");

  // A fused op and its backward kernel: the statistics its backward reads
  // are results of the forward's call.
  const compiler::Function ln_grad = [](const Inputs& x) {
    return ember::grad({layer_norm(x[0], x[1], x[2])}, {x[0], x[1], x[2]}, {x[3]});
  };
  const Inputs ln_in = {randn({64, 768}, g).requires_grad_(), ones({768}).requires_grad_(),
                        zeros({768}).requires_grad_(), randn({64, 768}, g)};
  compiler::Compiled lb = compile(ln_grad);
  lb(ln_in);
  std::printf("6. Layer norm and its gradients, the graph that runs:\n%s\n",
              compiler::to_string(lb.graph_for(ln_in)).c_str());

  const compiler::KernelStats s = compiler::kernel_stats();
  std::printf("kernels: %d compiled (%.2f s in the compiler), %d loaded from the cache\n", s.compiled,
              s.compile_seconds, s.from_disk);
  return same && same_grads ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ember::compile on one function: the graph, the passes, the generated kernel, the speed."};
  examples::show_defaults(app);
  int64_t rows = 4096;
  int runs = 21;
  app.add_option("--rows", rows, "rows of the (rows, 768) input")->check(examples::positive_number());
  app.add_option("--runs", runs, "timed runs of each")->check(examples::positive_number());
  EMBER_PARSE("compile_tour", app, argc, argv);
  return examples::run("compile_tour", [&] { return program(rows, runs); });
}
