// Generation speed of a GPT: prefill (the prompt in one forward) and decode
// (one token at a time), with the KV cache (nn/kv_cache.h) and without it
// (every token recomputes the whole context), against the bound that
// decoding is memory-bound. bench/decode_compare.sh runs it beside
// bench/torch_decode.py (the same model in PyTorch, with its own cache).
//
//   ./build/bench/bench_decode --model gpt2 --prompts 16,64,256,1024 --new 256
//   ./build/bench/bench_decode --model tiny --plot out/decode_tiny.png
//   ./build/bench/bench_decode --model gpt2 --prompts 256 --no-uncached --profile
//   ./build/bench/bench_decode --model gpt2 --weights int8 --prompts 16 --no-uncached
//
// --weights: float32, or the layers' weights in fewer bits (nn/quantize.h):
// int8 (groups of 32, int8 activations: vpdpbusd), int8-f32 (int8 weights,
// float32 activations), bfloat16. The bound counts the bytes those read.
//
// Models (random weights: the speed does not depend on the values):
//   gpt2  GPT-2's 124M shape: V 50257, L 1024, D 768, 12 heads, 12 layers, tanh GELU
//   tiny  train_gpt's shape (V 65, D 128, 4 heads, 3 layers) with a context of 1024
//
// Each decode step ends in the greedy token (argmax of the last logits), as
// both frameworks' generate loops do; sampling is left out of the timing.
// Uncached decoding of the gpt2 model runs one forward of the whole context
// per token (about half a second at 400 tokens), so its time per token is the
// mean over every 16th step (--uncached-every), each step timed whole; the
// cost grows smoothly with the context, so the mean of the sample is the mean.
//
// One line per prompt length ("decode model=... P=... key=value ..."), medians of
// --reps runs; bench/decode_compare.sh reads them.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <unistd.h>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "ember.h"
#include "inspect/profiler.h"
#include "plot/plot.h"

using namespace ember;

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

nn::GPTConfig model_config(const std::string& name) {
  nn::GPTConfig c;
  if (name == "gpt2") {
    c.vocab_size = 50257, c.context_length = 1024, c.dim = 768, c.heads = 12, c.layers = 12;
    c.gelu = GeluApprox::Tanh;
  } else if (name == "tiny") {
    c.vocab_size = 65, c.context_length = 1024, c.dim = 128, c.heads = 4, c.layers = 3;
  } else {
    EMBER_FAIL("bench_decode", "--model must be gpt2 or tiny, got " << name);
  }
  return c;
}

int64_t greedy(const Tensor& logits) { return argmax(logits.select(1, -1).select(0, 0)).item<int64_t>(); }

std::vector<int64_t> random_ids(int64_t n, int64_t V, uint64_t seed) {
  Generator g(seed);
  std::vector<int64_t> ids(static_cast<size_t>(n));
  for (auto& t : ids) t = static_cast<int64_t>(g.next_below(static_cast<uint64_t>(V)));
  return ids;
}

Tensor row(const std::vector<int64_t>& ids) { return tensor(ids, {1, static_cast<int64_t>(ids.size())}); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Prefill and decode speed of a GPT, with and without the KV cache."};
  std::string model_name = "gpt2", prompts_text = "16,64,256,1024", plot_path;
  int64_t new_tokens = 256, uncached_every = 0;
  int reps = 3, threads = 2;
  bool no_uncached = false, profile = false, checkpoint_sizes = false;
  std::string weights = "float32";
  app.add_option("--model", model_name, "gpt2 (GPT-2's 124M shape) or tiny");
  app.add_option("--prompts", prompts_text, "prompt lengths, comma-separated");
  app.add_option("--new", new_tokens, "tokens decoded after each prompt (fewer where the context ends)");
  app.add_option("--reps", reps, "runs per measurement (the median is printed)");
  app.add_option("--threads", threads, "threads for ember and OpenBLAS");
  app.add_option("--weights", weights, "float32, int8, int8-f32 (int8 weights, float32 activations) or bfloat16");
  app.add_flag("--checkpoint-sizes", checkpoint_sizes,
               "only save the model in each format to a temporary file and print its bytes (\"checkpoint WEIGHTS BYTES\")");
  app.add_option("--uncached-every", uncached_every, "time every n-th uncached step (default: 16 for gpt2, 1 for tiny)");
  app.add_flag("--no-uncached", no_uncached, "only prefill and cached decoding");
  app.add_flag("--profile", profile, "profile 32 cached decode steps after each prompt (inspect::Profiler) and print the table");
  app.add_option("--plot", plot_path, "draw time per token against position (cached and uncached) into this PNG");
  CLI11_PARSE(app, argc, argv);

  try {
    set_num_threads(threads);
    NoGradGuard no_grad;
    const nn::GPTConfig c = model_config(model_name);
    if (checkpoint_sizes) {
      const std::string path = (std::filesystem::temp_directory_path() / ("bench_decode_" + std::to_string(::getpid()) + ".safetensors")).string();
      for (const std::string w : {"float32", "bfloat16", "int8", "int8-f32"}) {
        nn::GPT m(c);
        if (w != "float32") nn::quantize(m, {.format = w == "bfloat16" ? gemm::WeightFormat::BFloat16 : gemm::WeightFormat::Int8});
        train::save(m, path);
        std::printf("checkpoint %s %lld\n", w.c_str(), static_cast<long long>(std::filesystem::file_size(path)));
        std::filesystem::remove(path);
      }
      return 0;
    }
    nn::GPT model(c);
    model.eval();
    if (uncached_every <= 0) uncached_every = model_name == "gpt2" ? 16 : 1;
    const int64_t params = model.num_parameters();
    // Bytes a decode step reads: every weight once (the tied head reads the
    // whole token table; of the positions, one row), and the cached keys and
    // values of every layer. Quantized: each quantized matrix's packed bytes
    // (values and scales) instead of its float32 ones.
    double weight_bytes = 4.0 * double(params - c.context_length * c.dim + c.dim);
    if (weights != "float32") {
      nn::QuantizeOptions q;
      if (weights == "bfloat16") q.format = gemm::WeightFormat::BFloat16;
      else if (weights == "int8-f32") q.mode = gemm::Int8Mode::FloatActivations;
      else EMBER_CHECK(weights == "int8", "bench_decode", "--weights must be float32, int8, int8-f32 or bfloat16, got " << weights);
      nn::quantize(model, q);
      for (const auto& [name, w] : nn::quantized_weights(model)) {
        if (name == "embed.token") continue;  // a lookup reads one row; the tied head counts the table
        weight_bytes += double(w->bytes()) - 4.0 * double(w->out_features() * w->in_features());
      }
    }
    const inspect::MachinePeaks peaks = inspect::machine_peaks();
    auto kv_bytes = [&](double position) { return 4.0 * 2.0 * double(c.layers) * position * double(c.dim); };
    std::printf("model %s: V %lld, L %lld, D %lld, %lld heads, %lld layers, %s: %.1f M parameters\n",
                model_name.c_str(), (long long)c.vocab_size, (long long)c.context_length, (long long)c.dim,
                (long long)c.heads, (long long)c.layers,
                weights == "float32" ? "float32" : ("weights " + weights).c_str(), double(params) / 1e6);
    std::printf("machine %s, %d threads: memory %.1f GB/s%s; a decode step reads %.1f MB of weights\n",
                peaks.cpu.c_str(), threads, peaks.memory_gbps, peaks.from_cache ? " (measured before and cached)" : "",
                weight_bytes / 1e6);

    std::vector<int64_t> prompts;
    for (std::stringstream ss(prompts_text); ss.good();) {
      std::string item;
      std::getline(ss, item, ',');
      if (!item.empty()) prompts.push_back(std::stoll(item));
    }
    nn::KVCache cache = model.make_cache();
    for (int64_t P : prompts) {
      EMBER_CHECK(P >= 1 && P <= c.context_length, "bench_decode",
                  "prompt length " << P << " must be in [1, " << c.context_length << "]");
      const int64_t N = std::min(new_tokens, c.context_length - P);
      const std::vector<int64_t> prompt = random_ids(P, c.vocab_size, 7);
      std::vector<double> prefill, cached, uncached;
      for (int r = 0; r < reps + 1; ++r) {  // the first run warms up
        cache.reset();
        double t0 = now_ms();
        int64_t next = greedy(model.forward(row(prompt), cache));
        const double pre = now_ms() - t0;
        t0 = now_ms();
        for (int64_t i = 0; i < N; ++i) next = greedy(model.forward(row({next}), cache));
        const double dec = N > 0 ? (now_ms() - t0) / double(N) : 0;
        double unc = 0;
        if (!no_uncached && N > 0) {
          // the same steps recomputing the context; every uncached_every-th one timed
          std::vector<int64_t> text = prompt;
          text.resize(static_cast<size_t>(P + N), 1);
          double sum = 0;
          int64_t timed = 0;
          for (int64_t i = 0; i < N; i += uncached_every) {
            std::vector<int64_t> ctx(text.begin(), text.begin() + P + i);
            const double u0 = now_ms();
            (void)greedy(model.forward(row(ctx)));
            sum += now_ms() - u0;
            ++timed;
          }
          unc = sum / double(timed);
        }
        if (r == 0) continue;
        prefill.push_back(pre);
        cached.push_back(dec);
        uncached.push_back(unc);
      }
      if (profile && N > 0) {
        cache.reset();
        int64_t next = greedy(model.forward(row(prompt), cache));
        inspect::Profiler prof;
        for (int64_t i = 0; i < std::min<int64_t>(N, 32); ++i) next = greedy(model.forward(row({next}), cache));
        std::printf("# %lld cached decode steps after a prompt of %lld, under the profiler:\n%s\n",
                    (long long)std::min<int64_t>(N, 32), (long long)P, prof.table().c_str());
      }
      const double pre = median(prefill), dec = median(cached), unc = median(uncached);
      const double mid = double(P) + 0.5 * double(N);  // the mean position decoded
      const double bound_ms = (weight_bytes + kv_bytes(mid)) / (peaks.memory_gbps * 1e9) * 1e3;
      std::printf("decode model=%s weights=%s P=%lld N=%lld prefill_ms=%.3f prefill_tok_s=%.1f cached_ms=%.4f cached_tok_s=%.2f",
                  model_name.c_str(), weights.c_str(), (long long)P, (long long)N, pre, double(P) / pre * 1e3, dec,
                  dec > 0 ? 1e3 / dec : 0.0);
      if (!no_uncached && N > 0)
        std::printf(" uncached_ms=%.3f uncached_tok_s=%.2f speedup=%.2f", unc, 1e3 / unc, unc / dec);
      if (N > 0) std::printf(" bound_ms=%.3f bound_tok_s=%.2f of_bound=%.2f", bound_ms, 1e3 / bound_ms, dec / bound_ms);
      std::printf("\n");
      std::fflush(stdout);
    }

    if (!plot_path.empty()) {
      // Time per token against its position: prompt 16, then one token at a
      // time to the end of the context, cached; uncached every 32 positions.
      const int64_t P = 16, L = c.context_length;
      plot::Series cached_s{.label = "with the KV cache"}, uncached_s{.label = "recomputing the context", .points = true},
          bound_s{.label = "memory-bandwidth bound", .dash = plot::Dash::Dashed};
      cache.reset();
      int64_t next = greedy(model.forward(row(random_ids(P, c.vocab_size, 7)), cache));
      for (int64_t pos = P; pos < L; ++pos) {
        const double t0 = now_ms();
        next = greedy(model.forward(row({next}), cache));
        cached_s.x.push_back(double(pos));
        cached_s.y.push_back(now_ms() - t0);
        bound_s.x.push_back(double(pos));
        bound_s.y.push_back((weight_bytes + kv_bytes(double(pos))) / (peaks.memory_gbps * 1e9) * 1e3);
      }
      for (int64_t pos = P; pos < L && !no_uncached; pos += 32) {
        const std::vector<int64_t> ctx = random_ids(pos + 1, c.vocab_size, 9);
        const double t0 = now_ms();
        (void)greedy(model.forward(row(ctx)));
        uncached_s.x.push_back(double(pos));
        uncached_s.y.push_back(now_ms() - t0);
      }
      plot::LinePlot p;
      p.title = "Time per new token of the " + model_name + " model, prompt 16 (" + std::to_string(threads) + " threads)";
      p.x = {.label = "position of the new token"};
      p.y = {.label = "ms per token", .log = true};
      p.series = {uncached_s, cached_s, bound_s};
      p.legend = plot::Corner::TopLeft;
      plot::write_png(p, plot_path);
      std::printf("wrote %s\n", plot_path.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_decode: %s\n", e.what());
    return 1;
  }
  return 0;
}
