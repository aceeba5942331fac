// Train a tiny character-level GPT on the CPU and watch it learn.
//
//   ./build/examples/train_gpt                      # Shakespeare, defaults (see README: about a minute, val loss ~1.9)
//   ./build/examples/train_gpt --data my.txt --steps 2000 --dim 128 --layers 4
//   ./build/examples/train_gpt --resume out/gpt     # continue a saved run exactly
//
// Writes to --out (default out/gpt): model.safetensors + train_state.safetensors
// (every --save-every steps, at the end and on Ctrl-C), loss.csv and loss.png.
// The same --seed and --threads reproduce the same loss curve bit for bit.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/png.h"
#include "ember.h"
#include "train/trainer.h"

using namespace ember;

namespace {

std::atomic<bool> interrupted{false};
void on_sigint(int) { interrupted = true; }  // the loop finishes its step, saves, exits

std::string format_duration(double s) {
  char buf[32];
  int m = static_cast<int>(s) / 60, sec = static_cast<int>(s) % 60;
  std::snprintf(buf, sizeof buf, "%d:%02d", m, sec);
  return buf;
}

// "[#########.........]"
std::string bar(double frac, int width = 24) {
  int filled = static_cast<int>(frac * width + 0.5);
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

void write_csv(const std::string& path, const std::vector<train::StepLog>& h) {
  std::ofstream f(path);
  f << "step,loss,lr,grad_norm,val_loss\n";
  for (const auto& s : h) {
    f << s.step << "," << s.loss << "," << s.lr << "," << s.grad_norm << ",";
    if (s.val_loss) f << *s.val_loss;
    f << "\n";
  }
}

// Training loss (grey) and validation loss (red) against the step, on a
// shared y axis from 0 to the highest loss; gridlines at every 0.5 of loss.
void write_plot(const std::string& path, const std::vector<train::StepLog>& h) {
  using examples::Image;
  const int W = 800, H = 400, pad = 40;
  Image img(W, H);
  double ymax = 0;
  for (const auto& s : h) ymax = std::max({ymax, s.loss, s.val_loss.value_or(0)});
  ymax = std::ceil(ymax * 2) / 2;
  const double xmax = std::max<double>(1, static_cast<double>(h.back().step));
  auto px = [&](double step) { return pad + static_cast<int>((W - 2 * pad) * step / xmax); };
  auto py = [&](double loss) { return H - pad - static_cast<int>((H - 2 * pad) * loss / ymax); };
  for (double y = 0; y <= ymax + 1e-9; y += 0.5) img.fill_rect(pad, py(y), W - 2 * pad, 1, {225, 225, 225});
  img.fill_rect(pad, pad, 1, H - 2 * pad, {0, 0, 0});
  img.fill_rect(pad, H - pad, W - 2 * pad, 1, {0, 0, 0});
  for (const auto& s : h) img.fill_rect(px(static_cast<double>(s.step)), py(s.loss), 2, 2, {150, 150, 150});
  for (const auto& s : h)
    if (s.val_loss) img.fill_rect(px(static_cast<double>(s.step)) - 3, py(*s.val_loss) - 3, 7, 7, {200, 30, 30});
  if (!examples::write_png(path, img)) std::cerr << "train_gpt: could not write " << path << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train a tiny character-level GPT on the CPU."};
  std::string data = std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz", out = "out/gpt", resume, positional = "learned";
  nn::GPTConfig cfg;
  cfg.context_length = 64;
  cfg.dim = 128;
  cfg.heads = 4;
  cfg.layers = 3;
  train::TrainOptions opt;
  opt.steps = 1000;  // val loss ~1.91 (600 steps stop at ~2.04)
  opt.batch = 16;
  opt.lr = 3e-3;
  int threads = 2;
  int64_t save_every = 200, sample_every = 0, sample_chars = 300;
  bool no_tie = false;
  app.add_option("--data", data, "UTF-8 text file to train on (.gz accepted)");
  app.add_option("--steps", opt.steps, "optimizer steps")->check(CLI::PositiveNumber);
  app.add_option("--batch", opt.batch, "sequences per step")->check(CLI::PositiveNumber);
  app.add_option("--context", cfg.context_length, "context length L (characters)")->check(CLI::PositiveNumber);
  app.add_option("--dim", cfg.dim, "model dimension D")->check(CLI::PositiveNumber);
  app.add_option("--layers", cfg.layers, "Transformer blocks")->check(CLI::NonNegativeNumber);
  app.add_option("--heads", cfg.heads, "attention heads (must divide --dim)")->check(CLI::PositiveNumber);
  app.add_option("--lr", opt.lr, "peak learning rate (warmup, then cosine decay to lr/10)")->check(CLI::PositiveNumber);
  app.add_option("--seed", cfg.seed, "seed of the weights and batches");
  app.add_option("--threads", threads, "threads for ember and OpenBLAS")->check(CLI::PositiveNumber);
  app.add_option("--positional", positional, "learned | sinusoidal")->check(CLI::IsMember({"learned", "sinusoidal"}));
  app.add_flag("--no-tie", no_tie, "give the LM head its own weight instead of the token embedding's");
  app.add_option("--dropout", cfg.dropout, "dropout probability")->check(CLI::Range(0.0, 0.9));
  app.add_option("--eval-every", opt.eval_every, "validation loss every N steps")->check(CLI::PositiveNumber);
  app.add_option("--save-every", save_every, "checkpoint every N steps")->check(CLI::PositiveNumber);
  app.add_option("--sample-every", sample_every, "print a text sample every N steps (0: only at the end)");
  app.add_option("--sample-chars", sample_chars, "length of the samples")->check(CLI::NonNegativeNumber);
  app.add_option("--out", out, "output directory");
  app.add_option("--resume", resume, "directory of a checkpoint to continue from (its config wins)");
  CLI11_PARSE(app, argc, argv);

  try {
    set_num_threads(threads);
    std::string text = train::read_text_file(data);
    train::CharTokenizer tok = train::CharTokenizer::from_text(text);  // errors name empty / invalid UTF-8 input
    opt.min_lr = opt.lr / 10;
    opt.seed = cfg.seed;
    cfg.vocab_size = tok.vocab_size();
    cfg.positional = positional == "learned" ? nn::Positional::Learned : nn::Positional::Sinusoidal;
    cfg.tie_weights = !no_tie;
    if (!resume.empty()) {
      const std::string path = resume + "/model.safetensors";
      train::GPTInfo ck = train::gpt_info(train::read_safetensors(path).metadata, path);
      cfg = ck.config;
      EMBER_CHECK(ck.tokenizer.vocab() == tok.vocab(), "train_gpt",
                  "the checkpoint's vocabulary differs from the one of " << data);
    }
    nn::GPT model(cfg);
    train::Trainer trainer(model, tok.encode(text), opt);
    if (!resume.empty()) trainer.resume(resume);
    const train::Metadata meta = train::gpt_metadata(cfg, tok);

    std::cout << "data        " << data << ": " << text.size() << " bytes, vocabulary of " << tok.vocab_size()
              << " characters\n"
              << "model       " << cfg.to_string() << "\n"
              << "parameters  " << model.num_parameters() << "\n"
              << "training    " << opt.steps << " steps of " << opt.batch << " x " << cfg.context_length
              << " tokens, AdamW lr " << opt.lr << ", " << threads << " threads\n";
    if (trainer.steps_done() == 0)
      std::cout << "initial validation loss " << trainer.evaluate() << " (uniform guess: ln " << tok.vocab_size()
                << " = " << std::log(static_cast<double>(tok.vocab_size())) << ")\n";
    else
      std::cout << "resumed at step " << trainer.steps_done() << "\n";

    std::filesystem::create_directories(out);
    std::signal(SIGINT, on_sigint);
    const bool tty = isatty(STDOUT_FILENO);
    const double tokens_per_step = static_cast<double>(opt.batch * cfg.context_length);
    const int64_t first_step = trainer.steps_done();
    auto t0 = std::chrono::steady_clock::now();
    auto sample = [&](int64_t chars) {
      std::vector<int64_t> ids = model.generate(tok.encode("\n"), chars, 0.8, 0, cfg.seed);
      return tok.decode(ids);
    };
    while (!trainer.done() && !interrupted) {
      train::StepLog s = trainer.step();
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double done = static_cast<double>(s.step - first_step), left = static_cast<double>(opt.steps - s.step);
      double tok_s = done * tokens_per_step / elapsed, eta = elapsed / done * left;
      char line[200];
      std::snprintf(line, sizeof line, "step %5lld/%lld %s loss %.4f  %7.0f tok/s  ETA %s", static_cast<long long>(s.step),
                    static_cast<long long>(opt.steps), bar(static_cast<double>(s.step) / static_cast<double>(opt.steps)).c_str(),
                    s.loss, tok_s, format_duration(eta).c_str());
      // A terminal gets one line redrawn in place; a log file gets a plain
      // line every 5% of the run and at every validation.
      const int64_t log_every = std::max<int64_t>(1, opt.steps / 20);
      if (tty) std::cout << "\r" << line << std::flush;
      else if (s.step % log_every == 0 || s.val_loss) std::cout << line << "\n";
      if (s.val_loss) std::cout << (tty ? "\n" : "") << "  validation loss " << *s.val_loss << "\n";
      if (s.step % save_every == 0 && !trainer.done()) trainer.save(out, meta);
      if (sample_every > 0 && s.step % sample_every == 0) std::cout << "--- sample ---" << sample(sample_chars) << "\n---\n";
    }
    if (tty) std::cout << "\n";
    trainer.save(out, meta);
    write_csv(out + "/loss.csv", trainer.history());
    write_plot(out + "/loss.png", trainer.history());
    if (interrupted) {
      std::cout << "interrupted: saved step " << trainer.steps_done() << " to " << out << " (continue with --resume " << out
                << ")\n";
      return 130;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "trained " << trainer.steps_done() - first_step << " steps in " << format_duration(secs) << "; final validation loss "
              << trainer.history().back().val_loss.value_or(NAN) << "\n"
              << "wrote " << out << "/model.safetensors, train_state.safetensors, loss.csv, loss.png\n"
              << "  loss.png: grey dots = training loss per step, red squares = validation loss,\n"
              << "  gridlines every 0.5 of loss from 0 (bottom), steps left to right\n"
              << "--- sample (temperature 0.8) ---" << sample(sample_chars) << "\n---\n";
  } catch (const Error& e) {
    std::cerr << "train_gpt: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
