// Checks exercise 17.1: the bytes predicted from a graph against the bytes
// its kernels report when it runs (TensorObserver::work: read and written),
// eagerly (the graph as captured, its calls one by one) and fused (after the
// passes, with its generated kernels), on the bias+GELU chain of chapter 17
// and on a function with two results and a per-row scale.
#include <string>

#include "exercises/checks/check.h"

namespace ex17_1 {
int64_t eager_bytes(const ember::compiler::Graph& g);
int64_t fused_bytes(const ember::compiler::Graph& g);
}  // namespace ex17_1

namespace {

using namespace ember;
using namespace ember::compiler;
using Inputs = std::vector<Tensor>;

// The bytes the kernels report while g runs on inputs.
int64_t measured(const Graph& g, const Inputs& inputs) {
  struct Bytes : TensorObserver {
    double moved = 0;
    void allocated(const void*, size_t) override {}
    void freed(const void*, size_t) override {}
    void work(double, double read, double written) override { moved += read + written; }
  } bytes;
  set_tensor_observer(&bytes);
  try {
    run(g, inputs);
  } catch (...) {
    set_tensor_observer(nullptr);
    throw;
  }
  set_tensor_observer(nullptr);
  return static_cast<int64_t>(bytes.moved);
}

Inputs bias_gelu(const Inputs& in) {
  const Tensor h = in[0] + in[1];
  return {0.5 * h * (1.0 + tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))};
}
Inputs two_results(const Inputs& in) {
  const Tensor s = in[0] * in[1];  // in[1]: one scale per row, (rows, 1)
  return {exp(s), s + in[0]};
}

// The bytes of a value of g, and what each usual mistake would predict.
int64_t bytes_of(const Graph& g, int id, bool at_output_size = false, int64_t output = 0) {
  const Value& v = g.values[static_cast<size_t>(id)];
  int64_t n = 1;
  for (int64_t d : v.shape) n *= d;
  return (at_output_size ? std::max(n, output) : n) * static_cast<int64_t>(dtype_size(v.dtype));
}
// Every call's reads and results; `broadcast_whole`: each input at its
// call's result size; `groups_as_calls`: a fused call counted op by op.
int64_t mistaken(const Graph& g, bool broadcast_whole, bool groups_as_calls) {
  int64_t total = 0;
  auto call = [&](const Call& c) {
    const int64_t out = bytes_of(g, c.results.at(0)) / static_cast<int64_t>(dtype_size(g.values[0].dtype));
    for (int id : Graph::reads(c)) total += bytes_of(g, id, broadcast_whole, out);
    for (int id : c.results) total += bytes_of(g, id);
  };
  for (const Call& c : g.calls) {
    if (c.fused && groups_as_calls)
      for (const Call& m : c.fused->members) call(m);
    else
      call(c);
  }
  return total;
}

void expect_traffic(int64_t got, int64_t want, const Graph& g, const std::string& what) {
  if (got == want) return;
  std::string hint = "each call moves the bytes of the values it reads and of the values it writes";
  if (got * 4 == want) hint = "you count floats: a float32 is 4 bytes (dtype_size)";
  else if (got == mistaken(g, true, false))
    hint = "a broadcast input is read at its own size (768 floats for the bias), not at the result's";
  else if (got == mistaken(g, false, true))
    hint = "the values inside a fused group never reach memory: a fused call moves only its arguments and its results";
  check::fail(what + ": you predict " + std::to_string(got) + " bytes, the kernels reported " + std::to_string(want) +
                  " (off by " + std::to_string(got - want) + ")",
              hint);
}

struct Case {
  Inputs inputs;
  Graph captured, fused;
};
Case make(const Function& fn, const Inputs& inputs) {
  Case c{inputs, capture(fn, inputs).graph, {}};
  c.fused = c.captured;
  optimize(c.fused);
  prepare_kernels(c.fused);
  return c;
}

const Case& chain() {
  static const Case c = [] {
    Generator g(0);
    return make(bias_gelu, {randn({64, 768}, g), randn({768}, g)});
  }();
  return c;
}
const Case& pair() {
  static const Case c = [] {
    Generator g(1);
    return make(two_results, {randn({32, 100}, g), randn({32, 1}, g)});
  }();
  return c;
}

}  // namespace

check::Exercise check::exercise() {
  return {"17.1", "Predict a fused kernel's memory traffic", "docs/book/17_compile.md", {
    {"eager: the bias+GELU chain's ten calls, each reading its arguments and writing its result", [] {
       NoGradGuard no_grad;
       expect_traffic(ex17_1::eager_bytes(chain().captured), measured(chain().captured, chain().inputs),
                      chain().captured, "the bytes eager moves for gelu(x + b) written op by op, x (64, 768), b (768)");
     }},
    {"fused: the chain as one kernel reads x and b once and writes one result", [] {
       NoGradGuard no_grad;
       const int64_t got = ex17_1::fused_bytes(chain().fused), want = measured(chain().fused, chain().inputs);
       expect_traffic(got, want, chain().fused, "the bytes the fused graph moves");
       check::note("fusion cuts the traffic " + check::num(static_cast<double>(measured(chain().captured, chain().inputs)) /
                                                           static_cast<double>(want)) + " times");
     }},
    {"two results and a per-row scale: each result written once, the scale read at its own size", [] {
       NoGradGuard no_grad;
       expect_traffic(ex17_1::eager_bytes(pair().captured), measured(pair().captured, pair().inputs), pair().captured,
                      "the bytes eager moves for exp(x * c) and x * c + x, c (32, 1)");
       expect_traffic(ex17_1::fused_bytes(pair().fused), measured(pair().fused, pair().inputs), pair().fused,
                      "the bytes the fused graph moves for the same");
     }},
  }};
}
