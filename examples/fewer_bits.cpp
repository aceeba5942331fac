// Fewer bits: what bfloat16 mixed precision costs and what it buys. The
// tiny GPT of train_gpt trained twice from the same seed, in float32 and
// under autocast (products in bfloat16, float32 sums, everything else
// float32), and the error of each op in bfloat16 against float64.
//
//   ./build/examples/fewer_bits                  # train_gpt's model, 600 steps each (docs/book/13_gemm_and_bfloat16.md)
//   ./build/examples/fewer_bits --steps 100 --dim 32 --layers 1 --out out/bits
//
// Prints, for one batch through the untrained model:
//   * every op kind's worst error against float64, given the same inputs
//     (each op alone), in float32 and under autocast; for the products also
//     the worst error over the bfloat16 rounding bound (<= 1 always);
//   * the loss of the whole forward in the three precisions;
// then trains both runs and prints their validation losses and speed.
// Writes loss_curves.png (both runs on one picture) and fewer_bits.csv.
// --check exits 1 if a product breaks its bound or the final validation
// losses differ by more than --margin (the CTest run).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/program.h"
#include "common/report.h"
#include "common/tiny_gpt.h"
#include "ember.h"
#include "inspect/hub.h"
#include "plot/plot.h"
#include "tensor/kernels.h"

using namespace ember;

namespace {

struct Flags {
  std::string data = std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz", out = "out/fewer_bits";
  nn::GPTConfig cfg;
  train::TrainOptions opt;
  int threads = 2;
  double margin = 0.05;
  bool check = false;
};

// ---- each op alone, in three precisions ----

// The inputs of every call of the ops below, as one forward saw them.
class OpRecorder : public inspect::Instrument {
 public:
  struct Call {
    std::string op;
    std::vector<Tensor> inputs;
  };
  OpRecorder() { start(); }
  ~OpRecorder() override { stop(); }
  void op_begin(const char* op, const std::vector<const Tensor*>& inputs) override {
    const std::string name = op;
    if (name != "matmul" && name != "layer_norm" && name != "gelu" && name != "scaled_softmax" && name != "cross_entropy")
      return;
    Call c{name, {}};
    for (const Tensor* t : inputs) c.inputs.push_back(t->detach().contiguous());
    calls.push_back(std::move(c));
  }
  std::vector<Call> calls;
};

// The op again, on these inputs (the GPT's arguments: layer_norm's default
// eps, causal attention scaled by 1 / sqrt(head dim)).
Tensor rerun(const OpRecorder::Call& c, const nn::GPTConfig& cfg, DType dt) {
  std::vector<Tensor> in;
  for (const Tensor& t : c.inputs) in.push_back(t.dtype() == kFloat32 ? t.to(dt) : t);
  if (c.op == "matmul") return matmul(in[0], in[1]);
  if (c.op == "layer_norm") return layer_norm(in[0], in[1], in[2]);
  if (c.op == "gelu") return gelu(in[0]);
  if (c.op == "scaled_softmax") return scaled_softmax(in[0], 1.0 / std::sqrt(double(cfg.dim / cfg.heads)), true);
  return cross_entropy(in[0], in[1]);
}

struct OpError {
  int64_t calls = 0;
  double f32 = 0, bf16 = 0;  // worst max|out - exact| / max|exact| over the calls
  double bound = 0;          // products: worst |out - exact| / (bf16 bound sum|a||b|)
};

double relative(const Tensor& got, const Tensor& exact) {
  const std::vector<double> g = got.to_vector<double>(), e = exact.to_vector<double>();
  double err = 0, size = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    err = std::max(err, std::fabs(g[i] - e[i]));
    size = std::max(size, std::fabs(e[i]));
  }
  return size > 0 ? err / size : err;
}

// For a product: the worst error over the bound of tensor/gemm/step7_bfloat16.cpp.
double over_bound(const Tensor& a, const Tensor& b, const Tensor& got, const Tensor& exact) {
  const int64_t K = a.size(-1);
  const double u = std::ldexp(1.0, -8), v = std::ldexp(1.0, -24), g = K * v / (1 - K * v);
  const Tensor scale = matmul(abs(a.to(kFloat64)), abs(b.to(kFloat64)));  // sum_k |a||b|
  const std::vector<double> s = scale.to_vector<double>(), o = got.to_vector<double>(), e = exact.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < e.size(); ++i) worst = std::max(worst, std::fabs(o[i] - e[i]) / (((1 + u) * (1 + u) * (1 + g) - 1) * s[i] + 1e-300));
  return worst;
}

std::map<std::string, OpError> op_errors(const OpRecorder& rec, const nn::GPTConfig& cfg) {
  std::map<std::string, OpError> out;
  NoGradGuard no_grad;
  for (const OpRecorder::Call& c : rec.calls) {
    const Tensor exact = rerun(c, cfg, kFloat64), f32 = rerun(c, cfg, kFloat32);
    Tensor bf16;
    {
      AutocastGuard autocast;
      bf16 = rerun(c, cfg, kFloat32);
    }
    OpError& e = out[c.op];
    e.calls++;
    e.f32 = std::max(e.f32, relative(f32, exact));
    e.bf16 = std::max(e.bf16, relative(bf16, exact));
    if (c.op == "matmul") e.bound = std::max(e.bound, over_bound(c.inputs[0], c.inputs[1], bf16, exact));
  }
  return out;
}

// ---- training ----

struct Run {
  std::vector<train::StepLog> history;
  double seconds = 0;
};

Run train_run(const Flags& f, const std::vector<int64_t>& tokens, bool bf16) {
  nn::GPT model(f.cfg);
  train::Trainer trainer(model, tokens, f.opt);
  std::optional<AutocastGuard> autocast;
  if (bf16) autocast.emplace();
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t every = std::max<int64_t>(1, f.opt.steps / 10);
  while (!trainer.done()) {
    const train::StepLog s = trainer.step();
    if (s.step % every == 0 || s.val_loss)
      std::printf("  %s step %5lld  loss %.4f%s\n", bf16 ? "bfloat16" : "float32 ", static_cast<long long>(s.step), s.loss,
                  s.val_loss ? ("  validation " + std::to_string(*s.val_loss)).c_str() : "");
    std::fflush(stdout);
  }
  return {trainer.history(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

void draw_curves(const Run& f32, const Run& bf16, const std::string& path) {
  plot::LinePlot fig;
  fig.title = "The same GPT, the same seed: float32 and bfloat16 autocast";
  fig.x.label = "step (optimizer updates)";
  fig.y.label = "cross-entropy loss (nats per character)";
  fig.legend = plot::Corner::TopRight;
  auto add = [&](const Run& r, const std::string& name, plot::Color train_color, plot::Color val_color) {
    plot::Series train{name + ": training loss (one batch)"}, val{name + ": validation loss"};
    train.color = train_color;
    train.width = 1.0;
    val.color = val_color;
    val.points = true;
    for (const train::StepLog& s : r.history) {
      if (s.step > 0) {
        train.x.push_back(double(s.step));
        train.y.push_back(s.loss);
      }
      if (s.val_loss) {
        val.x.push_back(double(s.step));
        val.y.push_back(*s.val_loss);
      }
    }
    fig.series.push_back(train);
    fig.series.push_back(val);
  };
  add(f32, "float32", {150, 170, 220}, {20, 60, 200});
  add(bf16, "bfloat16", {240, 170, 140}, {210, 60, 20});
  examples::check_picture(plot::layout_problems(plot::write_png(fig, path)), "fewer_bits", path);
}

int lesson(Flags& f) {
  set_num_threads(f.threads);
  const std::string text = train::read_text_file(f.data);
  const train::CharTokenizer tok = train::CharTokenizer::from_text(text);
  f.cfg.vocab_size = tok.vocab_size();
  f.opt.lr_decay_steps = f.opt.steps;
  f.opt.min_lr = f.opt.lr / 10;
  f.opt.seed = f.cfg.seed;
  const std::vector<int64_t> tokens = tok.encode(text);
  std::cout << "machine     " << examples::machine_line() << "\n"
            << "model       " << f.cfg.to_string() << ", " << f.opt.steps << " steps of " << f.opt.batch << " x "
            << f.cfg.context_length << " characters\n\n";

  // One batch through the untrained model.
  nn::GPT model(f.cfg);
  Generator g(f.cfg.seed + 1);
  const int64_t B = f.opt.batch, T = f.cfg.context_length;
  Tensor start = randint(0, int64_t(tokens.size()) - T - 1, {B}, g);
  std::vector<int64_t> xs, ys;
  for (int64_t s : start.to_vector<int64_t>())
    for (int64_t t = 0; t < T; ++t) {
      xs.push_back(tokens[size_t(s + t)]);
      ys.push_back(tokens[size_t(s + t + 1)]);
    }
  const Tensor x = tensor(xs, {B, T}), y = tensor(ys, {B, T});
  OpRecorder rec;
  double loss32 = 0, loss_bf16 = 0, loss64 = 0;
  {
    NoGradGuard no_grad;
    loss32 = model.loss(x, y).item<double>();
    rec.stop_watching();
    AutocastGuard autocast;
    loss_bf16 = model.loss(x, y).item<double>();
  }
  std::printf("each op alone, on the inputs one forward gave it, against float64 (max |error| / max |exact|):\n");
  std::printf("  %-15s %6s %12s %14s %22s\n", "op", "calls", "float32", "bfloat16 (ac)", "bf16 error / bound");
  bool ok = true;
  for (const auto& [op, e] : op_errors(rec, f.cfg)) {
    char bound[32] = "-";
    if (op == "matmul") std::snprintf(bound, sizeof bound, "%.3f", e.bound);
    std::printf("  %-15s %6lld %12.2e %14.2e %22s\n", op.c_str(), static_cast<long long>(e.calls), e.f32, e.bf16, bound);
    if (op == "matmul") ok = ok && e.bound <= 1.0;
  }
  {
    NoGradGuard no_grad;
    model.to(kFloat64);
    loss64 = model.loss(x, y).item<double>();
  }
  std::printf("(autocast changes only the products: every other op reads float32 and computes as before)\n"
              "the whole forward, the loss of this batch: float64 %.9f, float32 %.9f (%+.1e), bfloat16 autocast %.9f (%+.1e)\n\n",
              loss64, loss32, loss32 - loss64, loss_bf16, loss_bf16 - loss64);

  std::cout << "training, the same seed, float32 then bfloat16 autocast ..." << std::endl;
  const Run f32 = train_run(f, tokens, false), bf16 = train_run(f, tokens, true);
  const double v32 = f32.history.back().val_loss.value_or(NAN), vbf = bf16.history.back().val_loss.value_or(NAN);
  const double tokens_run = double(f.opt.steps * f.opt.batch * f.cfg.context_length);
  std::printf("\nfinal validation loss: float32 %.4f, bfloat16 autocast %.4f, difference %+.4f nats (margin %.2f)\n", v32, vbf,
              vbf - v32, f.margin);
  std::printf("speed: float32 %.0f tok/s, bfloat16 autocast %.0f tok/s (%.2fx)\n", tokens_run / f32.seconds,
              tokens_run / bf16.seconds, f32.seconds / bf16.seconds);
  std::ofstream csv(f.out + "/fewer_bits.csv");
  csv << "step,float32_loss,bfloat16_loss,float32_val,bfloat16_val\n";
  for (size_t i = 0; i < f32.history.size() && i < bf16.history.size(); ++i) {
    const train::StepLog &a = f32.history[i], &b = bf16.history[i];
    csv << a.step << "," << a.loss << "," << b.loss << ",";
    if (a.val_loss) csv << *a.val_loss;
    csv << ",";
    if (b.val_loss) csv << *b.val_loss;
    csv << "\n";
  }
  draw_curves(f32, bf16, f.out + "/loss_curves.png");
  std::cout << "wrote " << f.out << "/loss_curves.png, " << f.out << "/fewer_bits.csv" << std::endl;
  ok = ok && std::fabs(vbf - v32) <= f.margin;
  if (f.check && !ok) {
    std::cerr << "fewer_bits: a product broke its bound, or the validation losses differ by more than the margin\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"What bfloat16 mixed precision costs: per-op errors against float64, and float32 vs bfloat16 training."};
  examples::show_defaults(app);
  Flags f;
  examples::tiny_gpt_defaults(f.cfg, f.opt);
  f.opt.steps = 600;
  app.add_option("--data", f.data, "UTF-8 text to train on (.gz accepted)");
  app.add_option("--steps", f.opt.steps, "optimizer steps of each run")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--batch", f.opt.batch, "sequences per step")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--context", f.cfg.context_length, "context length")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--dim", f.cfg.dim, "model dimension")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--layers", f.cfg.layers, "Transformer blocks")->check(ember::examples::at_least<int64_t>(0));
  app.add_option("--heads", f.cfg.heads, "attention heads")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--eval-every", f.opt.eval_every, "validation every N steps")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--seed", f.cfg.seed, "seed of the weights and batches");
  app.add_option("--threads", f.threads, "threads")->check(ember::examples::between(1, 256));
  app.add_option("--margin", f.margin, "with --check: the most the final validation losses may differ (nats)")
      ->check(ember::examples::at_least(0.0));
  app.add_option("--out", f.out, "directory for loss_curves.png and fewer_bits.csv");
  app.add_flag("--check", f.check, "exit 1 if a product breaks its bound or the losses differ by more than --margin");
  EMBER_PARSE("fewer_bits", app, argc, argv);
  return examples::run("fewer_bits", [&] {
    std::filesystem::create_directories(f.out);
    return lesson(f);
  });
}
