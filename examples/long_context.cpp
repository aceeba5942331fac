// Where the memory of a long context goes, and how to get it back: one
// Transformer block (D = 256, 8 heads, B = 4) and the tiny GPT, at context
// lengths T from 128 to 4096, three ways:
//   stored      attention's (B, h, T, T) weights kept for backward
//   tiled       tiled_attention: one log-sum-exp per row instead (the default)
//   tiled+ckpt  tiled, and every block recomputed in backward (nn::checkpoint)
//
//   ./build/examples/long_context                        # T = 128 ... 4096 (some minutes)
//   ./build/examples/long_context --T 128,256 --reps 1   # a quick look
//   ./build/examples/long_context --png docs/images      # and its four pictures
//
// For each it prints the bytes saved for backward, measured by the memory
// timeline, beside their closed form (and exits 1 if the two differ), the
// peak of all tensor memory in the step, and the step's time (median of
// --reps, measured without the timeline). Then the ratios the chapter
// quotes: docs/book/15_memory.md.
//
// Legend: B batch, T context length, D model dim, h heads, d = D / h,
//         V vocabulary, L layers, f = 4 bytes per float.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <memory>
#include <sstream>

#include "common/program.h"
#include "common/report.h"
#include "common/tiny_gpt.h"
#include "ember.h"
#include "inspect/memory.h"
#include "inspect/profiler.h"
#include "plot/plot.h"
#include "train/step_memory.h"

using namespace ember;

namespace {

struct Options {
  std::string Ts = "128,256,512,1024,2048,4096";
  int reps = 3;
  std::string png;               // directory for the pictures ("" : none)
  int64_t timeline_T = 1024;     // the context of the two memory timelines
};

struct Variant {
  const char* name;
  nn::AttentionKernel kernel;
  bool checkpoint;
};
const Variant kVariants[] = {{"stored", nn::AttentionKernel::Stored, false},
                             {"tiled", nn::AttentionKernel::Tiled, false},
                             {"tiled+ckpt", nn::AttentionKernel::Tiled, true}};

constexpr int64_t kB = 4, kD = 256, kHeads = 8;

struct Result {
  int64_t saved = 0;       // saved for backward at the end of the forward (measured)
  int64_t saved_most = 0;  // the most saved at once during the step (measured)
  int64_t closed = 0;      // the closed form of `saved`
  int64_t closed_most = 0;  // and of `saved_most`
  int64_t peak = 0;  // all tensor memory, at its highest
  double ms = 0;     // median step time
};

std::string mb(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(bytes) / 1e6);
  return buf;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The step, once under a memory timeline (setup calls end_of_forward when
// its forward is done), then `reps` times on the clock.
template <typename Setup>
void measure(Result& r, int reps, const Setup& setup) {
  {
    inspect::MemoryTimeline mem;
    std::function<void()> end_of_forward = [&] {
      r.saved = mem.live()[static_cast<size_t>(MemoryKind::SavedForBackward)];
    };
    setup(&mem, end_of_forward);
    for (const auto& s : mem.samples())
      r.saved_most = std::max(r.saved_most, s.live[static_cast<size_t>(MemoryKind::SavedForBackward)]);
    r.peak = mem.peak().bytes;
  }
  std::vector<double> ms;
  for (int i = 0; reps > 0 && i < reps + 1; ++i) {  // one warm-up
    auto t0 = std::chrono::steady_clock::now();
    setup(nullptr, nullptr);
    if (i > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!ms.empty()) r.ms = median(ms);
}

// One block, forward and backward of a fixed gradient. The input x counts as
// an activation (saved by ln1, and by the checkpoint); the parameters as
// parameters.
Result block_step(int64_t T, const Variant& v, int reps) {
  Generator gen(1);
  nn::TransformerBlock block(kD, kHeads, {.attention = v.kernel, .generator = &gen});
  Tensor x = randn({kB, T, kD}, gen).requires_grad_(), g = randn({kB, T, kD}, gen);
  Result r;
  measure(r, reps, [&](inspect::MemoryTimeline* mem, const std::function<void()>& end_of_forward) {
    if (mem) {
      mem->track(block.parameters(), MemoryKind::Parameters);
      mem->track({x, g}, MemoryKind::Temporaries);
    }
    Tensor y = v.checkpoint ? nn::checkpoint(block, x) : block.forward(x);
    if (end_of_forward) end_of_forward();
    backward(y, g);
    block.zero_grad();
    x.set_grad(Tensor());
  });
  // Per row (sequence, position): 16 D + 4 floats, plus the attention's h
  // (tiled: a log-sum-exp per head) or h T (stored: the weights); with
  // checkpointing the block keeps its input, D, and saves the rest again
  // while backward recomputes it.
  const int64_t a = v.kernel == nn::AttentionKernel::Stored ? kHeads * T : kHeads;
  const int64_t full = 4 * kB * T * (16 * kD + 4 + a);
  r.closed = v.checkpoint ? 4 * kB * T * kD : full;
  r.closed_most = full;
  return r;
}

// Where one block's saved bytes are: every storage its graph keeps, counted
// once, under the first node (in the walk from the output) that keeps it,
// summed by the node's label (the module path and op; labels exist while an
// instrument watches, here a memory timeline).
void saved_by_op(int64_t T, const Variant& v) {
  Generator gen(1);
  nn::TransformerBlock block(kD, kHeads, {.attention = v.kernel, .generator = &gen});
  inspect::MemoryTimeline watching;
  Tensor x = randn({kB, T, kD}, gen).requires_grad_();
  Tensor y = block.forward(x);
  std::set<const void*> counted{x.storage().get()};  // x: below
  for (const Tensor& p : block.parameters()) counted.insert(p.storage().get());  // parameters count as parameters
  std::set<const Node*> seen;
  std::map<std::string, std::pair<int64_t, std::string>> by_label;  // bytes, what
  std::vector<Node*> todo{y.grad_fn().get()};
  int64_t total = 0;
  while (!todo.empty()) {
    Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    for (const SavedRef& s : n->saved()) {
      const Tensor& t = s->peek();
      if (!t.defined() || !counted.insert(t.storage().get()).second) continue;
      auto& [bytes, what] = by_label[n->meta.label];
      bytes += static_cast<int64_t>(t.storage()->nbytes());
      total += static_cast<int64_t>(t.storage()->nbytes());
      what += (what.empty() ? "" : ", ") + std::string(s.name) + " " + shape_str(t.shape());
    }
    for (const Edge& e : n->next)
      if (e.node) todo.push_back(e.node.get());
  }
  const int64_t input = static_cast<int64_t>(x.storage()->nbytes());  // ln1 keeps x, a leaf
  std::printf("  %s, T = %lld: %s MB in all (x included, %s MB)\n", v.name, static_cast<long long>(T),
              mb(total + input).c_str(), mb(input).c_str());
  std::vector<std::pair<int64_t, std::string>> rows;
  for (const auto& [label, bw] : by_label) rows.push_back({bw.first, label + ": " + bw.second});
  std::sort(rows.rbegin(), rows.rend());
  for (const auto& [bytes, what] : rows) std::printf("    %9s MB  %s\n", mb(bytes).c_str(), what.c_str());
}

// Where one block's step goes: the profiler's table, by op, of one forward
// and backward after a warm-up.
void profile_block(int64_t T, const Variant& v) {
  Generator gen(1);
  nn::TransformerBlock block(kD, kHeads, {.attention = v.kernel, .generator = &gen});
  Tensor x = randn({kB, T, kD}, gen).requires_grad_(), g = randn({kB, T, kD}, gen);
  auto step = [&] {
    backward(block.forward(x), g);
    block.zero_grad();
    x.set_grad(Tensor());
  };
  step();
  inspect::Profiler prof;
  step();
  prof.stop_watching();
  std::printf("  %s, T = %lld:\n%s", v.name, static_cast<long long>(T), prof.table(inspect::Profiler::By::Op, 8).c_str());
}

nn::GPTConfig tiny_gpt(int64_t T) {
  nn::GPTConfig c;
  train::TrainOptions unused;
  examples::tiny_gpt_defaults(c, unused);
  c.context_length = T;
  return c;
}

std::vector<Tensor> state_of(const optim::Optimizer& opt) {
  std::vector<Tensor> t;
  for (const auto& [name, tensor] : opt.state()) t.push_back(tensor);
  return t;
}

// What a step finds already there: the parameters, their gradients from the
// step before, and the optimizer's state.
void track_state(inspect::MemoryTimeline& mem, const nn::GPT& gpt, const optim::Optimizer& opt) {
  mem.track(gpt.parameters(), MemoryKind::Parameters);
  std::vector<Tensor> grads;
  for (const Tensor& p : gpt.parameters())
    if (p.grad().defined()) grads.push_back(p.grad());
  mem.track(grads, MemoryKind::Gradients);
  mem.track(state_of(opt), MemoryKind::OptimizerState);
}

// One AdamW step of the tiny GPT on B sequences of length T.
Result gpt_step(int64_t T, int64_t B, const Variant& v, int reps,
                std::unique_ptr<inspect::MemoryTimeline>* keep = nullptr) {
  nn::GPT gpt(tiny_gpt(T));
  gpt.set_attention(v.kernel);
  gpt.checkpoint_activations = v.checkpoint;
  optim::AdamW opt(gpt.parameters(), 1e-3);
  Generator gen(2);
  Tensor ids = randint(0, gpt.config().vocab_size, {B, T}, gen), targets = randint(0, gpt.config().vocab_size, {B, T}, gen);
  auto one = [&](const std::function<void()>& end_of_forward) {
    opt.zero_grad();
    Tensor loss = gpt.loss(ids, targets);
    if (end_of_forward) end_of_forward();
    loss.backward();
    opt.step();
  };
  one(nullptr);  // the optimizer's state exists from here on, as in training
  Result r;
  measure(r, reps, [&](inspect::MemoryTimeline* mem, const std::function<void()>& end_of_forward) {
    if (mem) track_state(*mem, gpt, opt);
    one(end_of_forward);
  });
  r.closed_most = train::step_memory(gpt, B).saved_activations;
  // At the end of the forward: all of it, or, checkpointed, each block's
  // input and the final LayerNorm's, the head's and the loss's (no dropout).
  const nn::GPTConfig& c = gpt.config();
  r.closed = v.checkpoint ? 4 * B * T * (c.layers * c.dim + 2 * c.dim + 2 + c.vocab_size + 1) : r.closed_most;
  if (keep) {  // the timeline of one more step, for its picture
    *keep = std::make_unique<inspect::MemoryTimeline>();
    track_state(**keep, gpt, opt);
    one(nullptr);
    (*keep)->stop_watching();
  }
  return r;
}

std::vector<int64_t> parse_Ts(const std::string& s) {
  std::vector<int64_t> Ts;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::string why = examples::detail::check_number<int64_t>(item, 1, 65536);
    EMBER_CHECK(why.empty(), "long_context", "--T: each context length " << why << " (in --T " << s << ")");
    Ts.push_back(std::stoll(item));
  }
  EMBER_CHECK(!Ts.empty(), "long_context", "--T needs at least one context length");
  return Ts;
}

void line_plot(const std::string& path, const std::string& title, const std::string& ylabel,
               const std::vector<int64_t>& Ts, const std::vector<std::vector<double>>& ys,
               const std::vector<std::string>& labels, const std::vector<plot::Dash>& dashes) {
  plot::LinePlot fig;
  fig.title = title;
  fig.x = {.label = "context length T (tokens)", .log = true};
  fig.y = {.label = ylabel, .log = true};
  for (size_t i = 0; i < ys.size(); ++i) {
    plot::Series s{.label = labels[i], .points = true};
    for (int64_t T : Ts) s.x.push_back(static_cast<double>(T));
    s.y = ys[i];
    s.color = plot::palette(i % 3);
    s.dash = dashes[i];
    s.marker = i < 3 ? plot::Marker::Circle : plot::Marker::Square;
    fig.series.push_back(s);
  }
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  const std::vector<std::string> problems = plot::layout_problems(plot::write_png(fig, path));
  EMBER_CHECK(problems.empty(), "long_context", path << ": " << problems.front());
}

// One line of a table: T, the variant, saved (= its closed form), the most
// saved at once (= its closed form), the peak and the time; `w` the width
// of the MB columns. Returns whether both closed forms held.
bool print_row(int64_t T, const Variant& v, const Result& r, int w) {
  auto eq = [](int64_t a, int64_t b) { return a == b ? "=" : "!="; };
  std::printf("%6lld  %-10s  %*s %s %-*s  %*s %s %-*s  %10s  %10.1f\n", static_cast<long long>(T), v.name, w,
              mb(r.saved).c_str(), eq(r.saved, r.closed), w, mb(r.closed).c_str(), w, mb(r.saved_most).c_str(),
              eq(r.saved_most, r.closed_most), w, mb(r.closed_most).c_str(), mb(r.peak).c_str(), r.ms);
  std::fflush(stdout);
  return r.saved == r.closed && r.saved_most == r.closed_most;
}

int program(const Options& o) {
  set_num_threads(2);
  const std::vector<int64_t> Ts = parse_Ts(o.Ts);
  bool all_equal = true;
  auto check = [&](int64_t measured, int64_t closed) {
    all_equal = all_equal && measured == closed;
    return measured == closed ? "=" : "!=";
  };

  std::printf("One Transformer block, D = %lld, %lld heads, B = %lld, forward and backward, float32\n",
              static_cast<long long>(kD), static_cast<long long>(kHeads), static_cast<long long>(kB));
  std::printf("(saved: at the end of the forward, measured = closed form; most: the most saved at once)\n");
  std::printf("%6s  %-10s  %12s  %12s  %10s  %10s\n", "T", "attention", "saved MB", "most MB", "peak MB", "ms");
  std::vector<std::vector<Result>> block(3);
  for (int64_t T : Ts) {
    for (size_t v = 0; v < 3; ++v) {
      Result r = block_step(T, kVariants[v], o.reps);
      all_equal = print_row(T, kVariants[v], r, 5) && all_equal;
      block[v].push_back(r);
    }
  }

  const nn::GPTConfig shown = tiny_gpt(Ts.front());
  std::printf("\nThe tiny GPT (V = %lld, D = %lld, %lld heads, L = %lld layers), one AdamW step on B = %lld sequences\n",
              static_cast<long long>(shown.vocab_size), static_cast<long long>(shown.dim),
              static_cast<long long>(shown.heads), static_cast<long long>(shown.layers), static_cast<long long>(kB));
  std::printf("(saved: at the end of the forward; most: the most saved at once, train::step_memory's closed form)\n");
  std::printf("%6s  %-10s  %17s  %17s  %10s  %10s\n", "T", "attention", "saved MB", "most MB", "peak MB", "ms");
  std::vector<std::vector<Result>> gpt(3);
  for (int64_t T : Ts) {
    for (size_t v = 0; v < 3; ++v) {
      Result r = gpt_step(T, kB, kVariants[v], o.reps);
      all_equal = print_row(T, kVariants[v], r, 7) && all_equal;
      gpt[v].push_back(r);
    }
  }

  std::printf("\nRatios\n");
  for (size_t i = 0; i < Ts.size(); ++i) {
    const Result &s = block[0][i], &t = block[1][i];
    // The attention op's own saves: q, k, v and the weights, or q, k, v, the output and the log-sum-exps.
    const double T = static_cast<double>(Ts[i]), BT = kB * T, hBT = kHeads * BT;
    const double own_stored = 3 * BT * kD + hBT * T, own_tiled = 4 * BT * kD + hBT;
    std::printf("  block T = %lld: tiled keeps 1/%.2f of stored's bytes (the attention op's own: 1/%.1f); "
                "stored / tiled time %.2f\n",
                static_cast<long long>(Ts[i]), double(s.saved) / double(t.saved), own_stored / own_tiled, s.ms / t.ms);
  }
  for (size_t i = 0; i < Ts.size(); ++i) {
    const Result &t = gpt[1][i], &c = gpt[2][i];
    std::printf("  GPT T = %lld: checkpointing keeps 1/%.2f of tiled's bytes at the end of the forward, 1/%.2f at "
                "the most, for %.2f x its step time\n",
                static_cast<long long>(Ts[i]), double(t.saved) / double(c.saved),
                double(t.saved_most) / double(c.saved_most), c.ms / t.ms);
  }
  {  // the tiny GPT as train_gpt trains it: B = 16, T = 64
    nn::GPTConfig c;
    train::TrainOptions opt;
    examples::tiny_gpt_defaults(c, opt);
    Result t = gpt_step(c.context_length, opt.batch, kVariants[1], o.reps);
    Result k = gpt_step(c.context_length, opt.batch, kVariants[2], o.reps);
    std::printf("  the tiny GPT as train_gpt trains it (B = %lld, T = %lld): checkpointing keeps 1/%.2f of the bytes "
                "at the end of the forward (%s %s %s MB), 1/%.2f at the most (%s %s %s MB), for %.2f x the step time "
                "(%.1f ms against %.1f)\n",
                static_cast<long long>(opt.batch), static_cast<long long>(c.context_length),
                double(t.saved) / double(k.saved), mb(k.saved).c_str(), check(k.saved, k.closed), mb(k.closed).c_str(),
                double(t.saved_most) / double(k.saved_most), mb(k.saved_most).c_str(), check(k.saved_most, k.closed_most),
                mb(k.closed_most).c_str(), k.ms / t.ms, k.ms, t.ms);
  }
  {  // where a block's bytes are, at the longest context up to 2048
    int64_t T = Ts.front();
    for (int64_t t : Ts)
      if (t <= 2048) T = std::max(T, t);
    std::printf("\nWhat one block keeps for backward, by the op that keeps it (each tensor once)\n");
    saved_by_op(T, kVariants[0]);
    saved_by_op(T, kVariants[1]);
    std::printf("\nWhere one block's forward and backward go, by op (the profiler, one step after a warm-up)\n");
    profile_block(T, kVariants[0]);
    profile_block(T, kVariants[1]);
  }

  if (!o.png.empty()) {
    std::filesystem::create_directories(o.png);
    std::vector<std::vector<double>> mem(6), time(6);
    for (size_t v = 0; v < 3; ++v)
      for (size_t i = 0; i < Ts.size(); ++i) {
        mem[v].push_back(block[v][i].saved / 1e6);
        mem[3 + v].push_back(block[v][i].peak / 1e6);
        time[v].push_back(block[v][i].ms);
        time[3 + v].push_back(gpt[v][i].ms);
      }
    const std::vector<plot::Dash> dashes = {plot::Dash::Solid, plot::Dash::Solid, plot::Dash::Solid,
                                            plot::Dash::Dashed, plot::Dash::Dashed, plot::Dash::Dashed};
    line_plot(o.png + "/long_context_memory.png", "One block (D = 256, 8 heads, B = 4): memory against context length",
              "MB", Ts, mem,
              {"stored: saved", "tiled: saved", "tiled+ckpt: saved", "stored: peak", "tiled: peak", "tiled+ckpt: peak"},
              dashes);
    line_plot(o.png + "/long_context_time.png", "Forward and backward time against context length", "ms per step",
              Ts, time,
              {"block, stored", "block, tiled", "block, tiled+ckpt", "tiny GPT, stored", "tiny GPT, tiled",
               "tiny GPT, tiled+ckpt"},
              dashes);
    // One step of the tiny GPT at timeline_T, without and with checkpointing, on the same scale.
    std::unique_ptr<inspect::MemoryTimeline> plain_mem, ckpt_mem;
    gpt_step(o.timeline_T, kB, kVariants[1], 0, &plain_mem);
    gpt_step(o.timeline_T, kB, kVariants[2], 0, &ckpt_mem);
    const double top = std::max(plain_mem->peak().bytes, ckpt_mem->peak().bytes) / 1e6 * 1.1;
    const std::string at = "tiny GPT, B = 4, T = " + std::to_string(o.timeline_T);
    const std::string plain_png = o.png + "/long_context_timeline_plain.png";
    const std::string ckpt_png = o.png + "/long_context_timeline_checkpointed.png";
    examples::check_picture(plain_mem->write_png(plain_png, "One AdamW step, " + at + ", tiled attention", top),
                            "long_context", plain_png);
    examples::check_picture(ckpt_mem->write_png(ckpt_png, "The same step with every block checkpointed", top),
                            "long_context", ckpt_png);
    std::printf("\nwrote %s/long_context_{memory,time,timeline_plain,timeline_checkpointed}.png\n", o.png.c_str());
  }
  if (!all_equal) {
    std::fprintf(stderr, "long_context: a measurement differs from its closed form (the '!=' lines)\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Memory and time of attention at long contexts: stored weights, tiled attention, checkpointing."};
  examples::show_defaults(app);
  Options o;
  app.add_option("--T", o.Ts, "context lengths, separated by commas");
  app.add_option("--reps", o.reps, "timed steps per measurement (the median is shown)")
      ->check(examples::at_least<int>(1));
  app.add_option("--png", o.png, "directory for the four pictures (none when not given)");
  app.add_option("--timeline-T", o.timeline_T, "context length of the two memory timelines")
      ->check(examples::at_least<int64_t>(1));
  EMBER_PARSE("long_context", app, argc, argv);
  return examples::run("long_context", [&] { return program(o); });
}
