// Inside one training step: a tiny GPT takes one AdamW step on Shakespeare
// while all three instruments of inspect/ watch.
//
//   ./build/examples/inside_a_step [--out DIR]      (default out/inside_a_step)
//
// Writes DIR/backward.html (the backward pass to step through in a browser:
// Prev/Next/Play, the arrow keys, ?step=N), DIR/profile.txt (the per-op
// table), DIR/trace.json (open it in chrome://tracing or ui.perfetto.dev)
// and DIR/memory.png (live memory by kind), then prints a short guided
// reading of what happened.
//
// Legend: B batch, T context, D model dim, h heads, V vocabulary, P parameters.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/program.h"
#include "common/report.h"
#include "ember.h"
#include "inspect/inspect.h"
#include "train/step_memory.h"

using namespace ember;

namespace {

struct Options {
  std::string out = "out/inside_a_step";
  std::string data = std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz";
  int64_t dim = 32, layers = 2, heads = 2, context = 16, batch = 4;
};

double mb(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

int program(const Options& o) {
  set_num_threads(2);
  std::filesystem::create_directories(o.out);
  const std::string text = train::read_text_file(o.data);
  const train::CharTokenizer tok = train::CharTokenizer::from_text(text);
  nn::GPTConfig cfg;
  cfg.vocab_size = tok.vocab_size();
  cfg.context_length = o.context;
  cfg.dim = o.dim;
  cfg.heads = o.heads;
  cfg.layers = o.layers;
  nn::GPT model(cfg);
  // The attention whose weights chapter 8 counts (h B T^2 floats): the
  // stored kernel. The default, tiled, keeps none (chapter 15).
  model.set_attention(nn::AttentionKernel::Stored);
  optim::AdamW opt(model.parameters(), /*lr=*/3e-3);
  train::BatchSampler batches(tok.encode(text), o.batch, o.context, 0.1, /*seed=*/1);
  auto [x, y] = batches.sample();
  const int64_t B = o.batch, T = o.context, D = o.dim, h = o.heads, V = cfg.vocab_size, P = model.num_parameters();
  std::printf("one training step of a GPT with %lld parameters (V=%lld, D=%lld, %lld layers, %lld heads), batch %lld x %lld\n",
              (long long)P, (long long)V, (long long)D, (long long)o.layers, (long long)h, (long long)B, (long long)T);
  std::printf("machine: %s\n", examples::machine_line().c_str());

  // One forward and backward unwatched first, so that the watched step does
  // not pay for first-time costs (loading OpenBLAS, starting threads, the
  // allocator's first blocks). No optimizer step: the parameters stay as
  // they are, and the watched step is the first one AdamW takes.
  model.loss(x, y).backward();
  opt.zero_grad();

  // ---- the step, watched ----
  const inspect::MachinePeaks peaks = inspect::machine_peaks();  // measured (or read) before the clocks start
  inspect::MemoryTimeline memory;
  memory.track(model.parameters(), MemoryKind::Parameters);
  inspect::Profiler profile;
  inspect::BackwardTrace trace;
  Tensor loss = model.loss(x, y);
  opt.zero_grad();
  loss.backward();
  const Tensor token_grad = model.embed->token->weight.grad().clone();  // before clipping rescales it
  optim::clip_grad_norm_(model.parameters(), 1.0);
  opt.step();
  const double loss_value = loss.item<double>();

  // ---- what it wrote ----
  const std::string html = o.out + "/backward.html", prof = o.out + "/profile.txt", json = o.out + "/trace.json",
                    png = o.out + "/memory.png";
  trace.to_html(html);
  {
    std::ofstream f(prof);
    f << profile.report();  // by op, then by module, the machine's peaks once
  }
  profile.write_chrome_trace(json);
  examples::check_picture(memory.write_png(png, "Live tensor memory during one training step"), "inside_a_step", png);
  std::printf("loss %.4f (ln V = %.4f)\n\n", loss_value, std::log(static_cast<double>(V)));
  std::printf("%s\n", profile.table(inspect::Profiler::By::Op, 12).c_str());
  std::printf("%s\n", memory.summary().c_str());

  // ---- a guided reading ----
  std::printf("What happened, read from the instruments:\n");
  const auto rows = profile.rows(inspect::Profiler::By::Op);
  const auto slowest = rows.front();
  const double gflops = slowest.total_ms > 0 ? slowest.flops / (slowest.total_ms * 1e6) : 0;
  const std::string pass = slowest.pass();
  std::printf("* The slowest op was %s (%s), %.3f ms of its own in %lld call%s, at %.2f GFLOP/s:\n"
              "  %.1f%% of this machine's sgemm peak (%.1f GFLOP/s). The step took %.2f ms (the instruments'\n"
              "  own time left out): a model this small is dominated by the cost of calling many small ops,\n"
              "  not by arithmetic.\n",
              slowest.key.c_str(), pass == "bwd" ? "backward" : pass == "upd" ? "the update" : "forward",
              slowest.self_ms, (long long)slowest.calls, slowest.calls == 1 ? "" : "s", gflops, peaks.sgemm_gflops > 0 ? 100 * gflops / peaks.sgemm_gflops : 0,
              peaks.sgemm_gflops, profile.span_ms() - profile.others_ms());
  for (const auto& r : rows)
    if (r.key == "matmul") {
      const double g = r.total_ms > 0 ? r.flops / (r.total_ms * 1e6) : 0;
      std::printf("* The forward matmuls did %.2f MFLOP (2 M N K each) at %.2f GFLOP/s, %.1f%% of the peak:\n"
                  "  with D = %lld their matrices are too small to keep the cores busy.\n",
                  r.flops / 1e6, g, peaks.sgemm_gflops > 0 ? 100 * g / peaks.sgemm_gflops : 0, (long long)D);
    }

  const inspect::MemoryTimeline::Peak pk = memory.peak();
  const auto kind = [&](MemoryKind k) { return pk.live[static_cast<size_t>(k)]; };
  // Why it peaked there: the kind that holds the most at the peak.
  size_t top = 0;
  for (size_t k = 0; k < inspect::kMemoryKinds; ++k)
    if (k != static_cast<size_t>(MemoryKind::Instruments) && pk.live[k] > pk.live[top]) top = k;
  std::printf("* Memory peaked at %.3f MB, during %s, with %s the largest share:\n"
              "  %.3f MB parameters, %.3f MB gradients, %.3f MB optimizer state, %.3f MB saved for backward,\n"
              "  %.3f MB temporaries (and %.3f MB that the trace keeps, not counted).\n",
              mb(pk.bytes), pk.label.empty() ? "(between ops)" : pk.label.c_str(),
              memory_kind_name(static_cast<MemoryKind>(top)), mb(kind(MemoryKind::Parameters)),
              mb(kind(MemoryKind::Gradients)), mb(kind(MemoryKind::OptimizerState)),
              mb(kind(MemoryKind::SavedForBackward)), mb(kind(MemoryKind::Temporaries)), mb(kind(MemoryKind::Instruments)));
  // Before the optimizer made its state: the forward/backward high point.
  inspect::MemoryTimeline::Sample fb;
  for (const auto& s : memory.samples())
    if (s.live[static_cast<size_t>(MemoryKind::OptimizerState)] == 0 &&
        inspect::MemoryTimeline::program_total(s.live) > inspect::MemoryTimeline::program_total(fb.live))
      fb = s;
  std::printf("  Before the optimizer ran, the high point was %.3f MB, during %s,\n"
              "  %.3f MB of it saved for backward: the activations live from the forward until backward\n"
              "  walks past the node that saved them.\n"
              "  The first AdamW step then adds its two moments per parameter while every gradient is alive.\n",
              mb(inspect::MemoryTimeline::program_total(fb.live)), fb.label.empty() ? "(between ops)" : fb.label.c_str(),
              mb(fb.live[static_cast<size_t>(MemoryKind::SavedForBackward)]));
  // The closed form of each kind, term by term in train/step_memory.h. The
  // ids and targets are saved too (its saved_batch), but they were made
  // before the timeline started: it does not see them.
  const train::StepMemory closed = train::step_memory(model, B);
  const double saved = static_cast<double>(closed.saved_activations);
  const int64_t live_saved_max = [&] {
    int64_t m = 0;
    for (const auto& s : memory.samples()) m = std::max(m, s.live[static_cast<size_t>(MemoryKind::SavedForBackward)]);
    return m;
  }();
  const int64_t state = memory.live()[static_cast<size_t>(MemoryKind::OptimizerState)];
  std::printf("* Closed form: parameters 4P = %.3f MB, gradients 4P = %.3f MB, AdamW's two moments 8P = %.3f MB\n"
              "  (made by this first step), saved for backward %.0f bytes (a view saved by a node shares\n"
              "  its input's memory and counts once). Measured: the saved tensors reached %lld bytes\n"
              "  (%+lld); the optimizer holds %lld bytes = 8P + 8 per parameter tensor (its step count).\n",
              mb(closed.parameters), mb(closed.gradients), mb(2 * closed.parameters), saved, (long long)live_saved_max,
              (long long)(live_saved_max - static_cast<int64_t>(saved)), (long long)state);

  // Provenance of the tied token embedding: who sent what to its .grad.
  const auto parts = trace.provenance(model.embed->token->weight);
  std::printf("* The tied token embedding (%lld x %lld) received gradient from %zu nodes:\n", (long long)V, (long long)D,
              parts.size());
  for (const auto& p : parts)
    std::printf("    step %3lld %-20s %-22s |g| %.4f, rows touched: %zu of %lld\n", (long long)p.step, p.node.c_str(),
                p.label.c_str(), p.norm, p.rows.size(), (long long)V);
  std::printf("  The lookup sends only the rows of the characters in the batch; the LM head, which reads the\n"
              "  same matrix, sends all %lld rows: with tying, every row moves at every step.\n\n", (long long)V);

  // The numbers above are checked, so that this program fails when an
  // instrument stops telling the truth: the parts add up to .grad bit for
  // bit, the trace ran to the end, and the saved bytes match the closed form.
  int failures = 0;
  const auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::printf("CHECK FAILED: %s\n", what);
      ++failures;
    }
  };
  check(trace.complete(), "the backward trace ran to the end");
  check(equal_bits(inspect::BackwardTrace::sum(parts), token_grad),
        "the provenance parts add up to the token embedding's .grad bit for bit");
  check(static_cast<double>(live_saved_max) == saved, "the saved-for-backward peak equals the closed form");
  check(memory.live()[static_cast<size_t>(MemoryKind::OptimizerState)] == closed.optimizer_state,
        "AdamW holds exactly two moments per parameter and one int64 step count per parameter tensor");
  if (failures > 0) return 1;

  std::printf("wrote %s (open it in a browser; ?step=N opens at step N)\n", html.c_str());
  std::printf("wrote %s, %s (chrome://tracing or ui.perfetto.dev) and %s\n", prof.c_str(), json.c_str(), png.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"One tiny-GPT training step watched by the backward trace, the profiler and the memory timeline."};
  examples::show_defaults(app);
  Options o;
  app.add_option("--out", o.out, "directory for backward.html, profile.txt, trace.json, memory.png");
  app.add_option("--data", o.data, "text to take the batch from");
  app.add_option("--dim", o.dim, "model dimension D")->check(ember::examples::between(int64_t{2}, int64_t{1024}));
  app.add_option("--layers", o.layers, "Transformer blocks")->check(ember::examples::between(int64_t{0}, int64_t{12}));
  app.add_option("--heads", o.heads, "attention heads")->check(ember::examples::between(int64_t{1}, int64_t{64}));
  app.add_option("--context", o.context, "context length T")->check(ember::examples::between(int64_t{1}, int64_t{1024}));
  app.add_option("--batch", o.batch, "batch size B")->check(ember::examples::between(int64_t{1}, int64_t{256}));
  EMBER_PARSE("inside_a_step", app, argc, argv);
  return examples::run("inside_a_step", [&] { return program(o); });
}
