// bench_ember: times ember on a fixed set of workloads.
//
//   bench_ember [--threads N] [--watch WHAT] [--profile] [--bf16] [workload ...]   (default: all, 2 threads)
//
// --bf16 runs every workload under an AutocastGuard: its products in
// bfloat16 with float32 sums (autograd/autocast.h), the rest float32.
//
// --watch trace|profile|memory runs every timed iteration under that inspect/
// instrument (a fresh one per iteration, made and destroyed inside the timed
// region, as a user would use it), to measure what watching costs.
//
// --profile runs each workload once under inspect::Profiler (after two
// unwatched runs) and prints where the time went, by op, instead of timing.
// --blas-info prints the OpenBLAS kernels ember runs on and exits.
// --peaks measures the machine's sgemm rate and memory bandwidth now (what
// a profile's %peak and %bw divide by), caches them when the rest of the
// machine stayed quiet meanwhile, and exits; give --threads first.
//
// Output: a `# machine ...` line (CPU, BLAS kernels, threads), then one line per workload, `name median_ms`, e.g. `matmul_1024 12.345`
// (bench/compare.sh parses it), extra `<name>_ns_per_op` and
// `<name>_tokens_per_s` lines for some, and last `peak_rss_mb N`, the
// process's peak resident memory. Each workload is set up once (untimed), run
// a few times to warm up (caches, allocator, thread pool), then timed `reps`
// times with std::chrono::steady_clock; the median is printed.
//
// bench/torch_reference.py defines the same workloads in PyTorch. To add one,
// add a row to the table in workloads() here and the same one there.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "ember.h"
#include "inspect/inspect.h"
#include "nn/attention.h"
#include "nn/embedding.h"
#include "nn/gpt.h"
#include "tensor/machine/blas_library.h"
#include "train/optim.h"

namespace {

using ember::Tensor;

struct Workload {
  std::string name;
  int reps;
  // Builds the inputs (untimed) and returns the body that is timed.
  std::function<std::function<void()>()> setup;
  // When > 0, also print `<name>_ns_per_op <median / ops_per_run in ns>`.
  int64_t ops_per_run = 0;
  // When > 0, also print `<name>_tokens_per_s <tokens_per_run / median>`.
  int64_t tokens_per_run = 0;
};

// One GPT training step on random ids, as train_gpt takes it: forward,
// loss, zero grads, backward, AdamW step (lr 1e-3, no clipping, no dropout).
// Legend: V vocab, L context, D dim, B batch, T sequence length (<= L).
Workload gpt_train_step(const std::string& name, int reps, int64_t V, int64_t L, int64_t D, int64_t heads,
                        int64_t layers, int64_t B, int64_t T, bool bf16 = false) {
  return {name, reps,
          [=] {
            ember::nn::GPTConfig c;
            c.vocab_size = V;
            c.context_length = L;
            c.dim = D;
            c.heads = heads;
            c.layers = layers;
            auto model = std::make_shared<ember::nn::GPT>(c);
            auto opt = std::make_shared<ember::optim::AdamW>(model->parameters(), /*lr=*/1e-3);
            ember::Generator g(1);
            Tensor x = ember::randint(0, V, {B, T}, g), y = ember::randint(0, V, {B, T}, g);
            return std::function<void()>([model, opt, x, y, bf16] {
              std::optional<ember::AutocastGuard> autocast;
              if (bf16) autocast.emplace();
              Tensor loss = model->loss(x, y);
              opt->zero_grad();
              loss.backward();
              opt->step();
            });
          },
          0, B * T};
}

std::vector<Workload> workloads() {
  std::vector<Workload> w;

  // float32 (1024, 1024) @ (1024, 1024) through ember::matmul.
  w.push_back({"matmul_1024", 10, [] {
                 Tensor a = ember::randn({1024, 1024}), b = ember::randn({1024, 1024});
                 return std::function<void()>([a, b] { Tensor c = ember::matmul(a, b); });
               }});

  // The same product as one direct sgemm on ember's buffers, split by
  // OpenBLAS's own threads (ember runs it single-threaded and splits itself):
  // the floor that matmul_1024 is measured against.
  w.push_back({"cblas_sgemm_1024", 10, [] {
                 Tensor a = ember::randn({1024, 1024}), b = ember::randn({1024, 1024});
                 Tensor c = ember::zeros({1024, 1024});
                 return std::function<void()>([a, b, c] {
                   const int n = 1024;
                   ember::blas::set_num_threads(ember::get_num_threads());
                   ember::blas::sgemm(false, false, n, n, n, 1.0f, a.data_ptr<float>(), n, b.data_ptr<float>(), n,
                                      0.0f, c.data_ptr<float>(), n);
                   ember::blas::set_num_threads(1);
                 });
               }});

  // Two 4M-element tensors of the same shape: the broadcast machinery with
  // equal shapes (the contiguous fast path).
  w.push_back({"add_4M", 20, [] {
                 Tensor a = ember::randn({2048, 2048}), b = ember::randn({2048, 2048});
                 return std::function<void()>([a, b] { Tensor c = a + b; });
               }});

  // A real broadcast: (2048, 2048) + (2048, 1), b's column repeated (stride 0).
  w.push_back({"add_bcast_4M", 20, [] {
                 Tensor a = ember::randn({2048, 2048}), b = ember::randn({2048, 1});
                 return std::function<void()>([a, b] { Tensor c = a + b; });
               }});

  // The other elementwise families at the same size: a select on a bool
  // mask, and a transposed tensor made contiguous (each output row reads a
  // column of the input).
  w.push_back({"where_4M", 20, [] {
                 ember::Generator g(0);
                 Tensor a = ember::randn({2048, 2048}, g), b = ember::randn({2048, 2048}, g);
                 Tensor c = ember::gt(a, b);
                 return std::function<void()>([a, b, c] { Tensor o = ember::where(c, a, b); });
               }});
  w.push_back({"transpose_copy_4M", 20, [] {
                 Tensor a = ember::randn({2048, 2048});
                 return std::function<void()>([a] { Tensor o = a.t().contiguous(); });
               }});

  // The MLP's activation and the block's normalization, forward and backward
  // of a fixed gradient, at the size of GPT-2's MLP hidden layer for 1024
  // tokens (1024, 3072) and of its residual stream for 4096 tokens (4096, 768).
  auto gelu_fwd_bwd = [](const char* name, ember::GeluApprox approx) {
    return Workload{name, 20, [approx] {
                      ember::Generator g(0);
                      Tensor x = ember::randn({1024, 3072}, g), grad = ember::randn({1024, 3072}, g);
                      x.requires_grad_();
                      return std::function<void()>([x, grad, approx]() mutable {
                        ember::backward(ember::gelu(x, approx), grad);
                        x.set_grad(Tensor());
                      });
                    }};
  };
  w.push_back(gelu_fwd_bwd("gelu_fwd_bwd_3M", ember::GeluApprox::None));
  w.push_back(gelu_fwd_bwd("gelu_tanh_fwd_bwd_3M", ember::GeluApprox::Tanh));
  w.push_back({"layer_norm_fwd_bwd_3M", 20, [] {
                 ember::Generator g(0);
                 Tensor x = ember::randn({4096, 768}, g), grad = ember::randn({4096, 768}, g);
                 Tensor weight = ember::randn({768}, g), bias = ember::randn({768}, g);
                 for (Tensor* t : {&x, &weight, &bias}) t->requires_grad_();
                 return std::function<void()>([x, weight, bias, grad]() mutable {
                   ember::backward(ember::layer_norm(x, weight, bias), grad);
                   for (Tensor* t : {&x, &weight, &bias}) t->set_grad(Tensor());
                 });
               }});

  // 10 000 additions of 4-element tensors: nearly all of it is per-op overhead
  // (allocation, shape checks, dispatch), not arithmetic.
  w.push_back({"small_op_overhead", 20,
               [] {
                 Tensor a = ember::randn({4}), b = ember::randn({4});
                 return std::function<void()>([a, b] {
                   for (int i = 0; i < 10000; ++i) Tensor c = a + b;
                 });
               },
               10000});

  // One small op called 10 000 times: the cost of a call, which
  // bench/python_calls.py measures again from Python (ember's binding and
  // PyTorch's), so that bench/python_compare.sh shows what a call from
  // Python adds to one from C++.
  auto call = [](const char* name, std::function<Tensor(const Tensor&)> op) {
    return Workload{name, 20,
                    [op] {
                      Tensor x = ember::randn({4, 4});
                      return std::function<void()>([x, op] {
                        for (int i = 0; i < 10000; ++i) Tensor y = op(x);
                      });
                    },
                    10000};
  };
  w.push_back(call("call_add", [](const Tensor& x) { return x + x; }));
  w.push_back(call("call_exp", [](const Tensor& x) { return x.exp(); }));
  w.push_back(call("call_sum_dim", [](const Tensor& x) { return x.sum({1}); }));
  w.push_back(call("call_matmul", [](const Tensor& x) { return x.matmul(x); }));
  w.push_back(call("call_slice", [](const Tensor& x) { return x.slice(0, 1, 3).select(1, 0); }));

  // Autograd on a long chain of tiny ops: 2000 ops forward (1000 x (mul, add)),
  // then one backward through all of them.
  w.push_back({"chain_2000_small_ops", 20, [] {
                 Tensor x = ember::ones({4});
                 x.requires_grad_();
                 return std::function<void()>([x]() mutable {
                   Tensor y = x;
                   for (int i = 0; i < 1000; ++i) y = y * 1.0001 + 0.5;
                   y.sum().backward();
                   x.set_grad(Tensor());
                 });
               }});

  // matmul forward + backward (two more matmuls of the same size).
  w.push_back({"matmul_fwd_bwd_1024", 5, [] {
                 Tensor a = ember::randn({1024, 1024}), b = ember::randn({1024, 1024});
                 a.requires_grad_();
                 b.requires_grad_();
                 return std::function<void()>([a, b]() mutable {
                   ember::matmul(a, b).sum().backward();
                   a.set_grad(Tensor());
                   b.set_grad(Tensor());
                 });
               }});

  // One pre-LN Transformer block (D = 256, 8 heads, MLP 4D, no dropout,
  // causal) on x (B=8, T=128, D) float32: forward, then out.sum().backward()
  // into x and every parameter; gradients cleared each iteration.
  w.push_back({"attention_block_fwd_bwd", 10, [] {
                 ember::Generator g(0);
                 auto block = std::make_shared<ember::nn::TransformerBlock>(
                     256, 8, ember::nn::TransformerBlockOptions{.mlp_ratio = 4, .causal = true, .generator = &g});
                 Tensor x = ember::randn({8, 128, 256}, g);
                 x.requires_grad_();
                 return std::function<void()>([block, x]() mutable {
                   block->forward(x).sum().backward();
                   block->zero_grad();
                   x.set_grad(Tensor());
                 });
               }});

  // The GPT-2 embedding stage (lesson A at full size): token (V=50257, D=768)
  // + learned positional (L=1024, D) on ids (B=8, T=256), forward, then
  // out.sum().backward() into both tables. Gradients are set to none each
  // iteration, so every backward builds a fresh dense (V, D) gradient (154 MB),
  // as PyTorch's nn.Embedding does by default.
  w.push_back({"embed_fwd_bwd_gpt2", 10, [] {
                 ember::Generator g(0);
                 auto composer = std::make_shared<ember::nn::EmbeddingComposer>(
                     std::make_shared<ember::nn::Embedding>(50257, 768, ember::nn::EmbeddingOptions{.generator = &g}),
                     std::make_shared<ember::nn::LearnedPositionalEmbedding>(1024, 768, ember::nn::InitOptions{.generator = &g}));
                 Tensor ids = ember::randint(0, 50257, {8, 256}, g);
                 return std::function<void()>([composer, ids] {
                   composer->forward(ids).sum().backward();
                   composer->zero_grad();
                 });
               }});

  // The same lookup with the table's gradient left as rows (sparse = true)
  // and a plain SGD step, which then reads and writes only the 2048 rows
  // looked up (torch.nn.Embedding(sparse=True) with torch.optim.SGD).
  w.push_back({"embed_sparse_sgd_step_gpt2", 10, [] {
                 ember::Generator g(0);
                 auto composer = std::make_shared<ember::nn::EmbeddingComposer>(
                     std::make_shared<ember::nn::Embedding>(
                         50257, 768, ember::nn::EmbeddingOptions{.generator = &g, .sparse = true}),
                     std::make_shared<ember::nn::LearnedPositionalEmbedding>(1024, 768, ember::nn::InitOptions{.generator = &g}));
                 auto sgd = std::make_shared<ember::optim::SGD>(composer->parameters(), 1e-3);
                 Tensor ids = ember::randint(0, 50257, {8, 256}, g);
                 return std::function<void()>([composer, sgd, ids] {
                   composer->forward(ids).sum().backward();
                   sgd->step();
                   sgd->zero_grad();
                 });
               }});

  // Forward mode and the transforms (autograd/functional.h) on
  // f(x) = W2 tanh(W1 x), R^64 -> R^16 (hidden 64): the whole Jacobian by 64
  // jvps and by 16 pullbacks; and a Hessian-vector product of
  // sum(tanh(W x)^2) in W (4096 parameters), forward-over-reverse.
  auto mlp_jacobian = [](const char* name, bool forward) {
    return Workload{name, 20, [forward] {
                      Tensor W1 = ember::randn({64, 64}) / 8.0, W2 = ember::randn({16, 64}) / 8.0;
                      Tensor x = ember::randn({64});
                      ember::TensorFn f = [W1, W2](const std::vector<Tensor>& in) {
                        return ember::matmul(W2, ember::tanh(ember::matmul(W1, in[0])));
                      };
                      ember::JacobianFn j = forward ? ember::jacfwd(f) : ember::jacrev(f);
                      return std::function<void()>([j, x] { (void)j({x}); });
                    }};
  };
  w.push_back(mlp_jacobian("jacfwd_64_to_16", true));
  w.push_back(mlp_jacobian("jacrev_64_to_16", false));
  w.push_back({"hvp_4096_params", 20, [] {
                 Tensor W = ember::randn({64, 64}) / 8.0, V = ember::randn({64, 64}), x = ember::randn({64, 32});
                 ember::TensorFn loss = [x](const std::vector<Tensor>& in) {
                   return ember::sum(ember::pow(ember::tanh(ember::matmul(in[0], x)), 2.0));
                 };
                 return std::function<void()>([loss, W, V] { (void)ember::hvp(loss, {W}, V); });
               }});

  // The GPTs of examples/train_gpt, tiny and small (the same definitions in
  // torch_reference.py).
  w.push_back(gpt_train_step("gpt_tiny_train_step", 20, /*V=*/65, /*L=*/64, /*D=*/64, /*heads=*/4, /*layers=*/2,
                             /*B=*/16, /*T=*/64));
  w.push_back(gpt_train_step("gpt_small_train_step", 5, /*V=*/65, /*L=*/256, /*D=*/192, /*heads=*/6, /*layers=*/4,
                             /*B=*/16, /*T=*/128));
  // The same step under bfloat16 autocast (its products in bfloat16 with
  // float32 sums, the rest float32), whatever --bf16 says.
  w.push_back(gpt_train_step("gpt_small_train_step_bf16", 5, 65, 256, 192, 6, 4, 16, 128, /*bf16=*/true));

  return w;
}

// The long-context block (examples/long_context, docs/book/15_memory.md):
// one pre-LN block, D = 256, 8 heads, B = 4, causal, forward and backward of
// a fixed gradient, at T = 128 ... 4096, three ways: "stored" (the T x T
// weights kept), "tiled" (tiled_attention) and "ckpt" (tiled, the block
// checkpointed). Not in the default list (minutes at T = 4096); each is
// meant for its own process (compare.sh runs it so), where
// `<name>_step_mb` is the resident memory the step added on top of what its
// setup had made (ru_maxrss after the runs less ru_maxrss after the setup).
std::vector<Workload> long_workloads() {
  std::vector<Workload> w;
  for (int64_t T : {128, 256, 512, 1024, 2048, 4096}) {
    for (const char* how : {"stored", "tiled", "ckpt"}) {
      const std::string kind = how;
      w.push_back({"long_block_T" + std::to_string(T) + "_" + kind, T >= 2048 ? 3 : 5, [T, kind] {
                     ember::Generator g(0);
                     const auto kernel = kind == "stored" ? ember::nn::AttentionKernel::Stored : ember::nn::AttentionKernel::Tiled;
                     auto block = std::make_shared<ember::nn::TransformerBlock>(
                         256, 8, ember::nn::TransformerBlockOptions{.causal = true, .attention = kernel, .generator = &g});
                     Tensor x = ember::randn({4, T, 256}, g), grad = ember::randn({4, T, 256}, g);
                     x.requires_grad_();
                     const bool ckpt = kind == "ckpt";
                     return std::function<void()>([block, x, grad, ckpt]() mutable {
                       Tensor y = ckpt ? ember::nn::checkpoint(*block, x) : block->forward(x);
                       ember::backward(y, grad);
                       block->zero_grad();
                       x.set_grad(Tensor());
                     });
                   }});
    }
  }
  return w;
}

double max_rss_mb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

enum class Watch { None, Trace, Profile, Memory };

// The body, run under a fresh instrument each time when watching.
std::function<void()> watched(std::function<void()> body, Watch watch) {
  switch (watch) {
    case Watch::None: return body;
    case Watch::Trace: return [body] { ember::inspect::BackwardTrace t; body(); };
    case Watch::Profile: return [body] { ember::inspect::Profiler p; body(); };
    case Watch::Memory: return [body] { ember::inspect::MemoryTimeline m; body(); };
  }
  return body;
}

double median_ms(const Workload& w, int warmup, Watch watch, double* setup_rss_mb = nullptr) {
  std::function<void()> body = watched(w.setup(), watch);
  if (setup_rss_mb) *setup_rss_mb = max_rss_mb();
  for (int i = 0; i < warmup; ++i) body();
  std::vector<double> ms;
  for (int i = 0; i < w.reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    body();
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  Watch watch = Watch::None;
  bool profile = false, bf16 = false;
  std::vector<std::string> wanted;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--watch" && i + 1 < argc) {
      std::string what = argv[++i];
      if (what == "none") watch = Watch::None;
      else if (what == "trace") watch = Watch::Trace;
      else if (what == "profile") watch = Watch::Profile;
      else if (what == "memory") watch = Watch::Memory;
      else {
        std::fprintf(stderr, "bench_ember: --watch takes none, trace, profile or memory, not '%s'\n", what.c_str());
        return 2;
      }
    } else if (arg == "--profile") {
      profile = true;
    } else if (arg == "--bf16") {
      bf16 = true;
    } else if (arg == "--peaks") {
      // The machine's peaks measured now, replacing what is cached (when the
      // rest of the machine stays quiet meanwhile).
      ember::set_num_threads(threads);
      const ember::inspect::MachinePeaks p = ember::inspect::measure_machine_peaks();
      std::printf("# machine %s; %d threads\nsgemm_gflops %.1f\nmemory_gbps %.1f\nothers_cores %.2f\n%s\n", p.cpu.c_str(),
                  p.threads, p.sgemm_gflops, p.memory_gbps, p.others_cores,
                  p.quiet() ? "# cached: profiles measure against these from now on"
                            : "# not cached: other programs ran meanwhile (measure again when the machine is quiet)");
      return 0;
    } else if (arg == "--blas-info") {
      const ember::BlasInfo b = ember::blas_info();
      std::printf("core %s\nsummary %s\nchosen_by_ember %d\nlibrary %s\n", b.core.c_str(), b.summary().c_str(),
                  b.chosen_by_ember ? 1 : 0, b.library.c_str());
      return 0;
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: %s [--threads N] [--watch none|trace|profile|memory] [--profile] [--bf16] [--blas-info] [--peaks] [workload ...]\nworkloads:", argv[0]);
      for (const Workload& w : workloads()) std::printf(" %s", w.name.c_str());
      std::printf("\nlong workloads (only when named):");
      for (const Workload& w : long_workloads()) std::printf(" %s", w.name.c_str());
      std::printf("\n");
      return 0;
    } else {
      wanted.push_back(arg);
    }
  }
  if (threads < 1) {
    std::fprintf(stderr, "bench_ember: --threads needs a positive number\n");
    return 2;
  }
  ember::set_num_threads(threads);
  std::printf("# machine %s; %s\n", ember::blas_info().cpu.c_str(), ember::blas_info().summary().c_str());  // compare.sh skips lines starting with #
  std::optional<ember::AutocastGuard> autocast;  // this thread runs every workload
  if (bf16) {
    autocast.emplace();
    std::printf("# autocast: products in bfloat16 with float32 sums\n");
  }
  ember::manual_seed(0);

  std::vector<Workload> all = workloads();
  for (Workload& w : long_workloads())
    if (std::find(wanted.begin(), wanted.end(), w.name) != wanted.end()) all.push_back(std::move(w));
  for (const std::string& name : wanted) {
    if (std::none_of(all.begin(), all.end(), [&](const Workload& w) { return w.name == name; })) {
      std::fprintf(stderr, "bench_ember: unknown workload '%s' (see --help)\n", name.c_str());
      return 2;
    }
  }
  for (const Workload& w : all) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), w.name) == wanted.end()) continue;
    if (profile) {  // where one run's time goes, by op (after two unwatched runs)
      std::function<void()> body = w.setup();
      body();
      body();
      ember::inspect::Profiler prof;
      body();
      std::printf("# %s, one run under the profiler:\n%s\n", w.name.c_str(), prof.table().c_str());
      continue;
    }
    double setup_rss = 0;
    double ms = median_ms(w, /*warmup=*/2, watch, &setup_rss);
    std::printf("%s %.3f\n", w.name.c_str(), ms);
    if (w.name.rfind("long_", 0) == 0) std::printf("%s_step_mb %.1f\n", w.name.c_str(), max_rss_mb() - setup_rss);
    if (w.ops_per_run > 0) std::printf("%s_ns_per_op %.1f\n", w.name.c_str(), ms * 1e6 / w.ops_per_run);
    if (w.tokens_per_run > 0) std::printf("%s_tokens_per_s %.0f\n", w.name.c_str(), w.tokens_per_run / (ms * 1e-3));
    std::fflush(stdout);
  }
  // The process's peak resident set (Linux: ru_maxrss in KiB). It covers
  // every workload run, so compare.sh runs the GPT ones one per process.
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("peak_rss_mb %.1f\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}
