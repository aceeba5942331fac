// What int8 weights cost a trained model: the tiny GPT of train_gpt trained
// once in float32, then its weights stored in fewer bits (nn/quantize.h) in
// every way ember has, each measured on the same validation batches and
// the same greedy continuations as the float32 model.
//
//   ./build/examples/quantize_gpt                 # train_gpt's model, 600 steps (docs/book/13_gemm_and_bfloat16.md)
//   ./build/examples/quantize_gpt --steps 60 --dim 32 --layers 1 --check
//
// Prints, for float32 and each quantization (int8 with groups of 32, 64,
// 128 and 256, with int8 or float32 activations; bfloat16): the checkpoint's
// bytes against float32's, the validation loss and its change, and how many
// greedy tokens of --prompts continuations of --new characters match
// float32's (and where the first one differs). Writes every checkpoint and
// quantize_gpt.csv to --out. --check exits 1 if int8 with groups of 32
// moves the validation loss by more than --margin nats (the CTest run). The
// checkpoint's ratio depends on the model's shape: the positional table,
// the biases and the layer norms stay float32, a larger part of a smaller
// model.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common/program.h"
#include "common/report.h"
#include "common/tiny_gpt.h"
#include "ember.h"

using namespace ember;

namespace {

struct Flags {
  std::string data = std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz", out = "out/quantize_gpt";
  nn::GPTConfig cfg;
  train::TrainOptions opt;
  int threads = 2;
  int64_t prompts = 8, new_tokens = 200;
  double margin = 0.02;
  bool check = false;
};

struct Variant {
  std::string name;
  std::optional<nn::QuantizeOptions> q;  // none: float32
};

struct Result {
  double val_loss = 0, bytes = 0;
  int64_t same = 0, total = 0;
  std::vector<int64_t> first_diff;  // per prompt: the first differing position, or -1
};

int lesson(Flags& f) {
  set_num_threads(f.threads);
  const std::string text = train::read_text_file(f.data);
  const train::CharTokenizer chars = train::CharTokenizer::from_text(text);
  f.cfg.vocab_size = chars.vocab_size();
  f.opt.lr_decay_steps = f.opt.steps;
  f.opt.min_lr = f.opt.lr / 10;
  f.opt.seed = f.cfg.seed;
  const std::vector<int64_t> tokens = chars.encode(text);
  std::cout << "machine     " << examples::machine_line() << "\n"
            << "model       " << f.cfg.to_string() << ", " << f.opt.steps << " steps of " << f.opt.batch << " x "
            << f.cfg.context_length << " characters\n\n";

  std::cout << "training in float32 ..." << std::endl;
  nn::GPT trained(f.cfg);
  {
    train::Trainer trainer(trained, tokens, f.opt);
    const int64_t every = std::max<int64_t>(1, f.opt.steps / 5);
    while (!trainer.done()) {
      const train::StepLog s = trainer.step();
      if (s.step % every == 0) std::printf("  step %5lld  loss %.4f\n", static_cast<long long>(s.step), s.loss);
      std::fflush(stdout);
    }
  }
  const auto state = trained.state_dict();
  const train::Metadata meta = train::gpt_metadata(f.cfg, train::Tokenizer(chars));

  // the prompts: the starts of evenly spaced lines of the validation part
  const int64_t train_end = int64_t(double(tokens.size()) * (1 - f.opt.val_fraction));
  std::vector<std::vector<int64_t>> prompts;
  for (int64_t p = 0; p < f.prompts; ++p) {
    const int64_t at = train_end + (int64_t(tokens.size()) - train_end - 64) * p / std::max<int64_t>(1, f.prompts);
    prompts.emplace_back(tokens.begin() + at, tokens.begin() + at + 16);
  }

  std::vector<Variant> variants = {{"float32", std::nullopt}};
  for (int64_t g : {32, 64, 128, 256})
    for (auto mode : {gemm::Int8Mode::Int8Activations, gemm::Int8Mode::FloatActivations}) {
      if (g != 32 && mode == gemm::Int8Mode::FloatActivations) continue;  // the activations' choice, at 32 only
      nn::QuantizeOptions q;
      q.group = g, q.mode = mode;
      variants.push_back({"int8 group " + std::to_string(g) + (mode == gemm::Int8Mode::Int8Activations ? ", int8 acts" : ", f32 acts"), q});
    }
  nn::QuantizeOptions bf16;
  bf16.format = gemm::WeightFormat::BFloat16;
  variants.push_back({"bfloat16", bf16});

  std::vector<Result> results;
  std::vector<std::vector<int64_t>> reference;  // float32's continuations
  std::ofstream csv(f.out + "/quantize_gpt.csv");
  csv << "weights,checkpoint_bytes,checkpoint_ratio,val_loss,val_change,greedy_same,greedy_total\n";
  std::printf("\n%-28s %12s %7s %10s %9s %16s  %s\n", "weights", "checkpoint", "ratio", "val loss", "change", "greedy tokens", "first difference per prompt");
  std::printf("%s\n", std::string(112, '-').c_str());
  bool ok = true;
  for (const Variant& v : variants) {
    nn::GPT model(f.cfg);
    model.load_state_dict(state);
    model.eval();
    if (v.q) nn::quantize(model, *v.q);
    std::string file = v.name;
    for (char& ch : file) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    const std::string path = f.out + "/" + file + ".safetensors";
    train::save(model, path, meta);
    Result r;
    r.bytes = double(std::filesystem::file_size(path));
    {
      train::Trainer evaluator(model, tokens, f.opt);  // the same validation batches as training's
      r.val_loss = evaluator.evaluate();
    }
    for (size_t p = 0; p < prompts.size(); ++p) {
      std::vector<int64_t> out = model.generate(prompts[p], f.new_tokens, {.temperature = 0});
      out.erase(out.begin(), out.begin() + int64_t(prompts[p].size()));
      if (!v.q) reference.push_back(out);
      int64_t first = -1;
      for (size_t t = 0; t < out.size(); ++t) {
        const bool same = t < reference[p].size() && out[t] == reference[p][t];
        r.same += same;
        if (!same && first < 0) first = int64_t(t);
      }
      r.total += int64_t(out.size());
      r.first_diff.push_back(first);
    }
    results.push_back(r);
    const Result& base = results.front();
    std::string firsts;
    for (int64_t d : r.first_diff) firsts += (firsts.empty() ? "" : " ") + (d < 0 ? std::string("-") : std::to_string(d));
    std::printf("%-28s %9.2f MB %7.3f %10.4f %+9.4f %8lld / %5lld  %s\n", v.name.c_str(), r.bytes / 1e6, r.bytes / base.bytes,
                r.val_loss, r.val_loss - base.val_loss, static_cast<long long>(r.same), static_cast<long long>(r.total),
                firsts.c_str());
    std::fflush(stdout);
    csv << v.name << "," << r.bytes << "," << r.bytes / base.bytes << "," << r.val_loss << "," << r.val_loss - base.val_loss
        << "," << r.same << "," << r.total << "\n";
    if (v.q && v.q->format == gemm::WeightFormat::Int8 && v.q->group == 32)
      ok = ok && std::fabs(r.val_loss - base.val_loss) <= f.margin;
  }
  std::printf("(checkpoint: the safetensors file train::save writes; ratio: of float32's; greedy tokens: the %lld continuations\n"
              " of %lld characters that match float32's, position by position; first difference: - where all match)\n",
              static_cast<long long>(f.prompts), static_cast<long long>(f.new_tokens));
  const Result& q32 = results[1];
  std::printf("int8, groups of 32: validation loss %+.4f nats (the target: within %.2f), checkpoint %.3f of float32's (the target: at most 0.3)\n",
              q32.val_loss - results[0].val_loss, f.margin, q32.bytes / results[0].bytes);
  std::cout << "wrote " << f.out << "/quantize_gpt.csv and the checkpoints" << std::endl;
  if (f.check && !ok) {
    std::cerr << "quantize_gpt: int8 with groups of 32 moved the validation loss by more than the margin\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"What int8 weights cost a trained GPT: validation loss, greedy tokens and checkpoint bytes."};
  examples::show_defaults(app);
  Flags f;
  examples::tiny_gpt_defaults(f.cfg, f.opt);
  f.opt.steps = 600;
  app.add_option("--data", f.data, "UTF-8 text to train on (.gz accepted)");
  app.add_option("--steps", f.opt.steps, "optimizer steps")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--batch", f.opt.batch, "sequences per step")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--dim", f.cfg.dim, "model dimension")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--layers", f.cfg.layers, "Transformer blocks")->check(ember::examples::at_least<int64_t>(0));
  app.add_option("--heads", f.cfg.heads, "attention heads")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--seed", f.cfg.seed, "seed of the weights and batches");
  app.add_option("--prompts", f.prompts, "greedy continuations compared")->check(ember::examples::between(int64_t{1}, int64_t{64}));
  app.add_option("--new", f.new_tokens, "characters per continuation")->check(ember::examples::between(int64_t{1}, int64_t{2000}));
  app.add_option("--threads", f.threads, "threads")->check(ember::examples::between(1, 256));
  app.add_option("--margin", f.margin, "with --check: the most int8 (groups of 32) may move the validation loss (nats)")
      ->check(ember::examples::at_least(0.0));
  app.add_option("--out", f.out, "directory for the checkpoints and quantize_gpt.csv");
  app.add_flag("--check", f.check, "exit 1 if int8 (groups of 32) moves the validation loss by more than --margin");
  EMBER_PARSE("quantize_gpt", app, argc, argv);
  return examples::run("quantize_gpt", [&] {
    std::filesystem::create_directories(f.out);
    return lesson(f);
  });
}
