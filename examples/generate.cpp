// Generation's parts on the tiny GPT (docs/book/16_generation.md): decoding
// with a KV cache against recomputing the context, and what each sampling
// option keeps.
//
//   ./build/examples/generate
//   ./build/examples/generate --prompt 8 --seed 3
//
// The model has random weights (its shape is the lesson's tiny GPT): the
// cache must give the logits of recomputing whatever the weights are.
// Exits 1 if a check fails (the prompt's bits, the bound, the greedy tokens).
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/program.h"
#include "ember.h"

using namespace ember;

namespace {

Tensor row(const std::vector<int64_t>& ids, size_t from, size_t to) {
  std::vector<int64_t> part(ids.begin() + static_cast<std::ptrdiff_t>(from), ids.begin() + static_cast<std::ptrdiff_t>(to));
  return tensor(part, {1, static_cast<int64_t>(part.size())});
}

// max |a - b| over max(1, max |b|)
double gap(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double g = 0, scale = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    g = std::max(g, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  return g / scale;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Decoding with a KV cache against recomputing, and the sampling options, on the tiny GPT."};
  examples::show_defaults(app);
  int64_t prompt_len = 8;
  uint64_t seed = 0;
  app.add_option("--prompt", prompt_len, "prompt length (the rest of the context is decoded one token at a time)")
      ->check(examples::at_least<int64_t>(1));
  app.add_option("--seed", seed, "seed of the weights, the prompt and the draws")->check(examples::any_number<uint64_t>());
  EMBER_PARSE("generate", app, argc, argv);

  return examples::run("generate", [&] {
    set_num_threads(2);
    nn::GPTConfig c;  // the lesson's tiny GPT: V 65, L 64, D 64, 4 heads, 2 layers
    c.seed = seed;
    EMBER_CHECK(prompt_len < c.context_length, "generate",
                "--prompt " << prompt_len << " leaves nothing to decode in a context of " << c.context_length);
    nn::GPT model(c);
    model.eval();
    NoGradGuard no_grad;
    Generator g(seed + 1);
    std::vector<int64_t> ids(static_cast<size_t>(c.context_length));
    for (auto& t : ids) t = static_cast<int64_t>(g.next_below(static_cast<uint64_t>(c.vocab_size)));
    const size_t P = static_cast<size_t>(prompt_len), L = ids.size();
    int status = 0;

    nn::KVCache cache = model.make_cache();
    const int64_t d = c.dim / c.heads;
    std::printf("The tiny GPT (V %lld, L %lld, D %lld, %lld heads, %lld layers), random weights; a prompt of %zu tokens,\n"
                "then %zu tokens one at a time:\n",
                (long long)c.vocab_size, (long long)c.context_length, (long long)c.dim, (long long)c.heads,
                (long long)c.layers, P, L - P);
    std::printf("  the cache: per layer, keys (1, %lld, %lld, %lld) and values as many: %lld bytes in float32\n",
                (long long)c.heads, (long long)c.context_length, (long long)d, (long long)cache.nbytes());
    const bool same_bits = model.forward(row(ids, 0, P), cache).to_vector<float>() ==
                           model.forward(row(ids, 0, P)).to_vector<float>();
    std::printf("  the prompt through the empty cache gives forward()'s bits: %s\n", same_bits ? "yes" : "NO");
    status |= !same_bits;
    double worst = 0;
    for (size_t n = P; n < L; ++n) {
      Tensor step = model.forward(row(ids, n, n + 1), cache).select(1, 0);
      worst = std::max(worst, gap(step, model.forward(row(ids, 0, n + 1)).select(1, -1)));
    }
    std::printf("  each step against forward() of every token so far: within 1e-5 of the logits' scale: %s\n",
                worst <= 1e-5 ? "yes" : "NO");
    std::printf("  (largest difference %.3g: a one-row product sums in another order)\n", worst);
    status |= worst > 1e-5;
    std::vector<int64_t> prompt(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(P));
    const std::vector<int64_t> cached = model.generate(prompt, static_cast<int64_t>(L - P), nn::SampleOptions{.temperature = 0});
    const std::vector<int64_t> recomputed =
        model.generate(prompt, static_cast<int64_t>(L - P), nn::SampleOptions{.temperature = 0, .cache = false});
    std::printf("  greedy decoding, cached and recomputed: the same %zu tokens: %s\n", L - P, cached == recomputed ? "yes" : "NO");
    status |= cached != recomputed;
    try {
      model.forward(row(ids, 0, 1), cache);  // the cache is full
    } catch (const Error& e) {
      std::printf("  one token more: %s\n", e.what());
    }

    // The sampling options on logits whose softmax is known.
    const std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
    std::vector<double> lp;
    for (double v : p) lp.push_back(std::log(v));
    const Tensor logits = tensor(lp, {4});
    const int draws = 20000;
    std::printf("\nSampling from p = (0.5, 0.3, 0.15, 0.05), %d draws each (seed %llu): how often each token\n", draws,
                (unsigned long long)seed);
    struct Case {
      const char* name;
      nn::SampleOptions o;
    };
    const std::vector<Case> cases = {
        {"no limit", {}},
        {"temperature 0 (greedy)", {.temperature = 0}},
        {"temperature 0.5", {.temperature = 0.5}},
        {"temperature 2", {.temperature = 2}},
        {"top_k 2", {.top_k = 2}},
        {"top_p 0.7", {.top_p = 0.7}},
        {"temperature 2, top_p 0.7", {.temperature = 2, .top_p = 0.7}},
    };
    for (const Case& k : cases) {
      nn::SampleOptions o = k.o;
      o.seed = seed;
      Generator gen(o.seed);
      std::vector<int> n(4, 0);
      for (int i = 0; i < draws; ++i) ++n[static_cast<size_t>(nn::sample_next(logits, o, gen))];
      std::printf("  %-26s", k.name);
      for (int v : n) std::printf(" %.4f", double(v) / draws);
      std::printf("\n");
    }
    return status;
  });
}
