// Train a tiny GPT on the CPU and watch it learn: on characters, or with
// --bpe N on the tokens of a byte-level BPE learned on the corpus.
//
//   ./build/examples/train_gpt                       # Shakespeare, defaults (docs/book/07_training_a_gpt.md)
//   ./build/examples/train_gpt --data my.txt --steps 2000 --dim 128 --layers 4
//   ./build/examples/train_gpt --bpe 512             # 256 bytes + 256 merges (docs/book/16_generation.md)
//   ./build/examples/train_gpt --resume out/gpt      # continue a saved run exactly, into the same directory
//   ./build/examples/train_gpt --resume out/gpt --more-steps 500   # train a finished run further
//   mpirun -np 2 ./build/examples/train_gpt          # two processes share each batch
//                                                    # (docs/book/10_several_processes.md)
//   mpirun -np 2 ./build/examples/train_gpt --zero 2 # ... and shard AdamW's state and the gradients (ZeRO)
//
// Writes to --out (default out/gpt; with --resume, the resumed directory):
// a checkpoint (every --save-every steps, at the end and on Ctrl-C) as
// checkpoints/step-N/{model,train_state}.safetensors, complete even if the
// program is killed while saving, with latest -> checkpoints/step-N and
// model.safetensors -> latest/model.safetensors; then loss.csv and loss.png. The same --seed and
// --threads (and number of processes) reproduce the same loss curve bit for bit.
//
// Under mpirun every rank runs this program: each takes its shard of every
// batch (--batch is the whole batch, whatever the number of ranks), the
// gradients are averaged by distributed::DataParallel (with --zero 1|2, by
// distributed::Zero, which also shards the optimizer's state), and rank 0
// alone prints, evaluates and writes files (every rank takes part in a save:
// a sharded run's ranks send rank 0 their part of the state).
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "common/program.h"
#include "common/tiny_gpt.h"
#include "distributed/data_parallel.h"
#include "distributed/zero.h"
#include "ember.h"
#include "inspect/profiler.h"
#include "plot/plot.h"
#include "train/resume.h"
#include "train/step_memory.h"

using namespace ember;

namespace {

std::atomic<bool> interrupted{false};
// The loop finishes its step, saves, exits. (mpirun ends every rank on
// Ctrl-C itself, but passes SIGUSR1 on to them: that stops a job cleanly.)
void on_sigint(int) { interrupted = true; }

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
  std::ostringstream f;
  f << "step,loss,lr,grad_norm,val_loss\n";
  auto num = [&](double v) {
    if (std::isfinite(v)) f << v;  // step 0 has no training loss, lr or norm: empty fields
  };
  for (const auto& s : h) {
    f << s.step << ",";
    num(s.loss);
    f << ",";
    num(s.lr);
    f << ",";
    num(s.grad_norm);
    f << ",";
    if (s.val_loss) num(*s.val_loss);
    f << "\n";
  }
  const std::string text = f.str();
  write_file_atomically(path, {text}, "train_gpt");
}

// Training loss of every step (light dots), validation loss (red, from the
// untrained model at step 0), and the loss of a uniform guess, ln V.
void write_loss_plot(const std::string& path, const std::vector<train::StepLog>& h, const train::Tokenizer& tok,
                     bool log_y) {
  const int64_t vocab = tok.vocab_size();
  const std::string unit = tok.is_bpe() ? "token" : "character";
  plot::Series train{"training loss (one batch)"}, val{"validation loss"};
  train.line = false;
  train.points = true;
  train.color = plot::Color{160, 160, 160};
  val.points = true;
  val.color = plot::Color{200, 30, 30};
  for (const auto& s : h) {
    if (s.step > 0) {
      train.x.push_back(static_cast<double>(s.step));
      train.y.push_back(s.loss);
    }
    if (s.val_loss) {
      val.x.push_back(static_cast<double>(s.step));
      val.y.push_back(*s.val_loss);
    }
  }
  const double ln_v = std::log(static_cast<double>(vocab));
  char ref[128];
  std::snprintf(ref, sizeof ref, "ln V = %.2f (a uniform guess over %lld %ss)", ln_v, static_cast<long long>(vocab),
                unit.c_str());
  plot::LinePlot fig;
  fig.title = tok.is_bpe() ? "Training a GPT on BPE tokens" : "Training a character-level GPT";
  fig.x.label = "step (optimizer updates)";
  fig.y = {.label = "cross-entropy loss (nats per " + unit + ")", .log = log_y};
  fig.series = {train, val};
  fig.hlines = {{ln_v, ref}};
  fig.legend = plot::Corner::Right;
  const plot::Report r = plot::write_png(fig, path);
  if (r.skipped > 0)
    std::cout << "  loss.png: " << r.skipped << (r.skipped == 1 ? " point was" : " points were") << " NaN or infinite (or <= 0 on the log scale) and are not drawn"
              << std::endl;
}

struct Flags {
  std::string data = std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz", out = "out/gpt", resume,
              positional = "learned", loss_plot = "linear", attention = "tiled";
  nn::GPTConfig cfg;
  train::TrainOptions opt;
  int threads = 2;
  int64_t save_every = 200, sample_every = 0, sample_chars = 300, more_steps = 0, profile_step = 0;
  bool no_tie = false, overwrite = false, bf16 = false, checkpoint_activations = false;
  int64_t bucket_kb = distributed::DataParallelOptions{}.bucket_bytes >> 10;
  int zero = 0;  // 0: every rank keeps everything; 1, 2: ZeRO stage (distributed/zero.h)
  int64_t bpe = 0;  // 0: characters; N: a byte-level BPE of N tokens learned on the corpus
  std::optional<train::Tokenizer> resumed_tokenizer;  // with --resume: the checkpoint's
};

// With --resume, the model comes from the checkpoint and the training
// options from its train_state: a model flag is refused (it could not take
// effect), a training flag must agree with the run (or it is refused naming
// the difference), and --more-steps extends the run.
void apply_resume(Flags& f, const CLI::App& app, const train::TrainOptions& run, const train::GPTInfo& ck,
                  int64_t checkpoint_step) {
  for (const char* flag :
       {"--dim", "--layers", "--heads", "--context", "--positional", "--no-tie", "--dropout", "--seed", "--bpe"})
    EMBER_CHECK(app.count(flag) == 0, "train_gpt",
                flag << " describes the model, which --resume " << f.resume
                     << " restores from its checkpoint (" << ck.config.to_string() << "); leave it out");
  train::TrainOptions given = run;
  if (app.count("--batch")) given.batch = f.opt.batch;
  if (app.count("--lr")) given.lr = f.opt.lr;  // (min_lr follows lr: one difference, named once)
  if (app.count("--eval-every")) given.eval_every = f.opt.eval_every;
  std::vector<std::string> diff = train::differing_options(run, given);
  if (app.count("--steps") && f.opt.steps != run.steps)
    diff.insert(diff.begin(), "steps: " + std::to_string(run.steps) + " in the run, " + std::to_string(f.opt.steps) +
                                  " given (to train further, use --more-steps N)");
  if (!diff.empty()) {
    std::string all;
    for (const std::string& d : diff) all += "\n  " + d;
    EMBER_FAIL("train_gpt", "--resume continues the run with its own training options; these flags differ:" << all);
  }
  f.cfg = ck.config;
  f.resumed_tokenizer = ck.tokenizer;
  f.opt = run;
  if (f.opt.lr_decay_steps == 0) f.opt.lr_decay_steps = run.steps;  // the schedule the run was planned with
  if (!app.count("--out")) f.out = f.resume;
  if (f.more_steps > 0) f.opt.steps = checked_add(checkpoint_step, f.more_steps, "train_gpt", "--more-steps beyond the checkpoint's step");
  // A run killed after its last save but before its loss.csv and loss.png
  // were written resumes to write them (and trains no step). Finished is
  // what the resumed run is, whichever --out this one writes.
  const bool outputs_written =
      std::filesystem::exists(f.resume + "/loss.csv") && std::filesystem::exists(f.resume + "/loss.png");
  EMBER_CHECK(f.opt.steps > checkpoint_step || !outputs_written, "train_gpt",
              f.resume << " is at step " << checkpoint_step << " of " << run.steps
                       << ": the run is finished; give --more-steps N to train it further");
}

// The run directory, for this run alone: held until the program ends (a
// second train_gpt on it is refused at once, naming this one), and holding
// no other run's files: a fresh run where a run is already is refused, naming
// it, unless --overwrite removes that run first (train/run_dir.h).
train::RunLock claim_run_dir(const Flags& f) {
  const train::RunDir run = train::gpt_run_dir(f.out);
  train::RunLock hold = run.lock();
  std::error_code ec;
  if (!f.resume.empty() && std::filesystem::equivalent(f.resume, f.out, ec)) return hold;  // the run goes on
  const std::vector<std::string> outputs = {"loss.csv", "loss.png"};
  const std::vector<std::string> there = run.run_files(outputs);
  if (there.empty()) return hold;
  if (!f.overwrite) {
    std::string what;
    if (const std::optional<train::RunSummary> r = train::run_summary(f.out))
      what = "a run saved at step " + std::to_string(r->step) +
             (r->options ? " of " + std::to_string(r->options->steps) : std::string()) +
             (r->run_id.empty() ? std::string() : ", run " + r->run_id);
    else
      for (const std::string& n : there) what += (what.empty() ? "the files of a run: " : ", ") + n;
    EMBER_FAIL("train_gpt", f.out << " already holds " << what << "; continue it with --resume " << f.out
                                  << ", replace it with --overwrite, or give another --out");
  }
  run.remove_run(outputs);
  return hold;
}

// One process, or rank `rank` of `ranks` under mpirun. Only rank 0 speaks:
// the others' standard output is switched off (errors still reach stderr).
struct World {
  int ranks = 1, rank = 0;
  bool main_rank() const { return rank == 0; }
};

World join_world(Flags& f, const CLI::App& app, const std::string& program_name) {
  World w;
  if (distributed::is_initialized()) w.ranks = distributed::world_size();
  if (w.ranks > 1) w.rank = distributed::rank();
  EMBER_CHECK(f.zero == 0 || distributed::is_initialized(), "train_gpt",
              "--zero " << f.zero << " shards the state over the ranks of an MPI job: start it with mpirun -np N (N = 1 "
                                     "too), e.g. mpirun -np 2 " << program_name << " --zero " << f.zero);
  if (!w.main_rank()) std::cout.setstate(std::ios::failbit);
  if (w.ranks > 1 && !app.count("--threads")) {
    // The ranks on one machine share its cores.
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    f.threads = std::max(1, cores / distributed::local_world_size());
  }
  set_num_threads(f.threads);
  return w;
}

// The model and training options from the flags, or with --resume from the
// run's checkpoint (its data file and precision too, unless given).
void settle_options(Flags& f, const CLI::App& app) {
  f.opt.min_lr = f.opt.lr / 10;
  f.opt.seed = f.cfg.seed;
  f.cfg.positional = f.positional == "learned" ? nn::Positional::Learned : nn::Positional::Sinusoidal;
  f.cfg.tie_weights = !f.no_tie;
  EMBER_CHECK(f.more_steps == 0 || !f.resume.empty(), "train_gpt", "--more-steps extends a saved run: use it with --resume DIR");
  if (f.resume.empty()) return;
  const std::string path = train::latest_checkpoint(f.resume).model;
  train::SafetensorsContents model_file = train::read_safetensors(path);
  train::GPTInfo ck = train::gpt_info(model_file.metadata, path);
  if (auto d = model_file.metadata.find("ember.data"); d != model_file.metadata.end() && !app.count("--data"))
    f.data = d->second;
  const int64_t step = parse_int64(model_file.metadata.at("ember.step"), "train_gpt", path + ": ember.step");
  // The precision is the run's, like its other training options.
  const bool run_bf16 = model_file.metadata.count("ember.autocast") > 0;
  EMBER_CHECK(!app.count("--bf16") || run_bf16, "train_gpt",
              "--bf16 was given, but " << f.resume << " was trained in float32; leave it out");
  f.bf16 = run_bf16;
  apply_resume(f, app, train::Trainer::saved_options(f.resume), ck, step);
}

// The text, its tokenizer and its ids; sets the vocabulary size. A fresh run
// takes the text's characters, or with --bpe N learns a BPE on the text; a
// resumed run takes the checkpoint's tokenizer, which must encode the text.
struct Corpus {
  std::string text;
  train::Tokenizer tok;
  std::vector<int64_t> ids;
  double bpe_seconds = 0;  // learning the BPE
  // Bytes per token of the validation part, ids[split..]: a loss per token
  // over it is a loss per byte, comparable across tokenizers.
  double val_bytes_per_token(int64_t split) const {
    const auto n = static_cast<int64_t>(ids.size());
    double bytes = 0;
    for (int64_t i = split; i < n; ++i) bytes += static_cast<double>(tok.decode({ids[static_cast<size_t>(i)]}).size());
    return bytes / static_cast<double>(std::max<int64_t>(1, n - split));
  }
};
Corpus read_corpus(Flags& f) {
  std::string text = train::read_text_file(f.data);
  if (f.resumed_tokenizer) {
    const train::Tokenizer& tok = *f.resumed_tokenizer;
    EMBER_CHECK(tok.is_bpe() || tok.vocab_size() == train::CharTokenizer::from_text(text).vocab_size(), "train_gpt",
                "the checkpoint's vocabulary (" << tok.vocab_size() << " characters) differs from the one of " << f.data
                                                << " (" << train::CharTokenizer::from_text(text).vocab_size() << ")");
    std::vector<int64_t> ids = tok.encode(text);
    return {std::move(text), tok, std::move(ids)};
  }
  f.opt.lr_decay_steps = f.opt.steps;
  if (f.bpe == 0) {
    train::CharTokenizer chars = train::CharTokenizer::from_text(text);  // errors name empty / invalid UTF-8 input
    f.cfg.vocab_size = chars.vocab_size();
    std::vector<int64_t> ids = chars.encode(text);
    return {std::move(text), std::move(chars), std::move(ids)};
  }
  EMBER_CHECK(!text.empty(), "train_gpt", f.data << " is empty: there is nothing to learn a BPE from");
  const auto t0 = std::chrono::steady_clock::now();
  train::BPETokenizer bpe = train::train_bpe(text, f.bpe);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.cfg.vocab_size = bpe.vocab_size();  // fewer than --bpe when no pair occurs twice any more
  std::vector<int64_t> ids = bpe.encode(text);
  return {std::move(text), std::move(bpe), std::move(ids), seconds};
}

// Several ranks: DataParallel, or with --zero its sharded form (also in one
// process, where the one shard is everything: the same code path).
struct Replicas {
  std::unique_ptr<distributed::DataParallel> ddp;
  distributed::Zero* zero = nullptr;
};
Replicas replicate(const Flags& f, const World& w, nn::GPT& model, train::Trainer& trainer, const Corpus& c) {
  Replicas r;
  if (f.zero > 0) {
    auto z = std::make_unique<distributed::Zero>(model.parameters(),
                                                 distributed::ZeroOptions{.stage = f.zero, .bucket_bytes = f.bucket_kb << 10});
    r.zero = z.get();
    r.ddp = std::move(z);
  } else if (w.ranks > 1) {
    r.ddp = std::make_unique<distributed::DataParallel>(model.parameters(),
                                                        distributed::DataParallelOptions{.bucket_bytes = f.bucket_kb << 10});
  }
  if (r.ddp) {
    // Every option, the data and the resumed state, alike on every rank; and
    // what train_gpt adds: the characters or BPE tokens the ids stand for, the precision.
    const train::Metadata tok = c.tok.metadata();
    std::string vocabulary;
    for (const auto& [key, value] : tok) vocabulary += key + "=" + value + ";";
    trainer.set_replicas(*r.ddp, {{"vocabulary", train::fingerprint(vocabulary)},
                                  {"precision", f.bf16 ? "bfloat16 autocast" : "float32"}});
  }
  return r;
}

// A flag that cannot take effect in this run: refused, or said once.
void check_flags_take_effect(const Flags& f, const CLI::App& app, const World& w, const train::Trainer& trainer) {
  EMBER_CHECK(f.profile_step == 0 || (f.profile_step > trainer.steps_done() && f.profile_step <= f.opt.steps), "train_gpt",
              "--profile " << f.profile_step << " is not a step this run takes (it trains steps " << trainer.steps_done() + 1
                           << " to " << f.opt.steps << "): nothing would be profiled");
  if (w.main_rank() && w.ranks == 1 && f.zero == 0 && app.count("--bucket-kb"))
    std::cerr << "train_gpt: note: --bucket-kb has no effect in one process (it cuts the gradients that several "
              << "ranks exchange under mpirun)" << std::endl;
  if (w.main_rank() && f.sample_every > f.opt.steps)
    std::cerr << "train_gpt: note: --sample-every " << f.sample_every << " is beyond the last step (" << f.opt.steps
              << "): the only sample is the one at the end" << std::endl;
}

// What the run is, before its first step.
void print_run(const Flags& f, const World& w, const Corpus& c, const nn::GPT& model, const Replicas& r,
               const train::Trainer& trainer) {
  std::cout << "data        " << f.data << ": " << c.text.size() << " bytes, ";
  if (!c.tok.is_bpe()) {
    std::cout << "vocabulary of " << c.tok.vocab_size() << " characters\n";
  } else {
    char per[32];
    std::snprintf(per, sizeof per, "%.2f", static_cast<double>(c.text.size()) / static_cast<double>(c.ids.size()));
    std::cout << c.ids.size() << " tokens (" << per << " bytes per token)\n"
              << "tokenizer   " << c.tok.describe();
    char took[32];
    std::snprintf(took, sizeof took, "%.2f s", c.bpe_seconds);
    if (!f.resumed_tokenizer) std::cout << ", learned on " << f.data << " in " << took;  // (resumed: read from the checkpoint)
    std::cout << "\n";
  }
  std::cout
            << "model       " << f.cfg.to_string() << "\n"
            << "parameters  " << model.num_parameters() << "\n"
            << "training    " << f.opt.steps << " steps of " << f.opt.batch << " x " << f.cfg.context_length
            << " tokens, AdamW lr " << f.opt.lr << ", " << f.threads << " threads" << (w.ranks > 1 ? " per process" : "")
            << (f.bf16 ? ", products in bfloat16 (autocast)" : "") << "\n"
            << "memory      " << nn::attention_kernel_name(model.attention()) << " attention"
            << (f.checkpoint_activations ? ", every block checkpointed (recomputed in backward)" : "")
            << "; a step saves at most " << train::step_memory(model, f.opt.batch).saved_activations / (1 << 20)
            << " MiB of activations for backward\n"
            << "machine     " << examples::machine_line() << "\n";
  if (r.ddp && w.ranks > 1) {
    std::cout << "processes   " << w.ranks << " (mpirun), " << f.opt.batch / w.ranks
              << " sequences of each batch per process; "
              << "gradients all-reduced in " << r.ddp->buckets().size()
              << (r.ddp->buckets().size() == 1 ? " bucket" : " buckets") << " of at most " << f.bucket_kb << " KiB ("
              << static_cast<double>(r.ddp->stats().bytes) / (1 << 20) << " MiB per step)\n";
  }
  if (r.zero) {
    const distributed::ShardPlan& plan = r.zero->plan();
    std::cout << "sharding    ZeRO stage " << f.zero << ": "
              << (f.zero == 1 ? "the optimizer state" : "the optimizer state and the gradients") << " cut into " << w.ranks
              << (w.ranks == 1 ? " shard" : " shards") << "; this rank keeps AdamW's moments of " << plan.size(r.zero->rank())
              << " of the " << plan.numel << " parameters\n";
  }
  if (trainer.steps_done() > 0) std::cout << "resumed at step " << trainer.steps_done() << ", writing to " << f.out << "\n";
  if (trainer.steps_done() > 0 && trainer.resumed_world_size() != w.ranks)
    std::cout << "note        the checkpoint was trained on " << trainer.resumed_world_size() << " process(es), this run has "
              << w.ranks << ": it continues the same run within float round-off, not bit for bit\n";
  std::cout << std::flush;
}

void write_outputs(const Flags& f, const train::Trainer& trainer, const Corpus& c) {
  write_csv(f.out + "/loss.csv", trainer.history());
  write_loss_plot(f.out + "/loss.png", trainer.history(), c.tok, f.loss_plot == "log");
}

// Diverged (every rank sees the same mean loss): the run stops before a save
// replaces the last good checkpoint.
int stop_diverged(const Flags& f, const World& w, const train::Trainer& trainer, const Corpus& c, const train::StepLog& s,
                  bool tty) {
  if (!w.main_rank()) return 1;
  if (tty) std::cout << "\n";
  write_outputs(f, trainer, c);
  const std::optional<train::Checkpoint> last = train::find_checkpoint(f.out);
  std::cerr << "train_gpt: the loss became " << s.loss << " at step " << s.step
            << ": training diverged (try a smaller --lr than " << f.opt.lr << "); stopped without saving, so "
            << (last ? "the checkpoint of step " + std::to_string(last->step) + " in " + f.out + " is the last good one"
                     : "no checkpoint is in " + f.out + " (the first save was due at step " +
                           std::to_string(std::min(f.save_every, f.opt.steps)) + ")")
            << std::endl;
  return 1;
}

void print_profile(const Flags& f, inspect::Profiler& profiler, int64_t step, bool tty) {
  profiler.stop_watching();
  const std::string json = f.out + "/profile_step_" + std::to_string(step) + ".json";
  profiler.write_chrome_trace(json);
  std::cout << (tty ? "\n" : "") << "--- profile of step " << step << " ---\n"
            << profiler.report(20, 12) << "(trace for chrome://tracing or ui.perfetto.dev: " << json << ")" << std::endl;
}

// The progress line: a terminal gets one line redrawn in place; a log file
// gets a plain line every 5% of the run and at every validation, each one
// flushed so the file can be read while the run goes on.
void print_progress(const Flags& f, const train::StepLog& s, int64_t first_step, double elapsed, bool tty) {
  const double tokens_per_step = static_cast<double>(f.opt.batch) * static_cast<double>(f.cfg.context_length);
  const double done = static_cast<double>(s.step - first_step), left = static_cast<double>(f.opt.steps - s.step);
  const double tok_s = done * tokens_per_step / elapsed, eta = elapsed / done * left;
  // When another program holds a core, fewer threads run (the same bits):
  // the line says so, since it explains a slower tok/s.
  const int in_use = threads_in_use();
  const std::string busy = in_use < f.threads ? "  (" + std::to_string(in_use) + " of " + std::to_string(f.threads) +
                                                    " threads: a core is busy)"
                                              : "";
  char line[240];
  std::snprintf(line, sizeof line, "step %5lld/%lld %s loss %.4f  %7.0f tok/s  ETA %s%s", static_cast<long long>(s.step),
                static_cast<long long>(f.opt.steps),
                bar(static_cast<double>(s.step) / static_cast<double>(f.opt.steps)).c_str(), s.loss, tok_s,
                format_duration(eta).c_str(), busy.c_str());
  const int64_t log_every = std::max<int64_t>(1, f.opt.steps / 20);
  if (tty) std::cout << "\r" << line << "\x1b[K" << std::flush;  // clear what a longer line left
  else if (s.step % log_every == 0 || s.val_loss) std::cout << line << std::endl;
  if (s.val_loss) std::cout << (tty ? "\n" : "") << "  validation loss " << *s.val_loss << std::endl;
}

// The time the gradients' exchange took, from rank 0's counters.
void print_sync_stats(const Flags& f, const Replicas& r) {
  char line[240];
  if (r.zero && r.zero->zero_stats().steps > 0) {
    const distributed::ZeroStats& st = r.zero->zero_stats();
    std::snprintf(line, sizeof line,
                  "sharded step: %.2f ms per step in sync, update and gather (%.2f ms in MPI); %.2f MiB %s and %.2f MiB "
                  "all-gathered per step",
                  1e3 * st.update_seconds / static_cast<double>(st.steps), 1e3 * st.mpi_seconds / static_cast<double>(st.steps),
                  static_cast<double>(st.all_reduce_bytes + st.reduce_scatter_bytes) / (1 << 20),
                  f.zero == 1 ? "all-reduced" : "reduce-scattered", static_cast<double>(st.all_gather_bytes) / (1 << 20));
  } else if (r.ddp && r.ddp->stats().steps > 0) {
    const distributed::SyncStats& st = r.ddp->stats();
    const double per_step = st.sync_seconds / static_cast<double>(st.steps);
    std::snprintf(line, sizeof line, "gradient sync: %.2f ms per step (%.2f ms in MPI), %.2f MiB all-reduced per step",
                  1e3 * per_step, 1e3 * st.mpi_seconds / static_cast<double>(st.steps),
                  static_cast<double>(st.bytes) / (1 << 20));
  } else {
    return;
  }
  std::cout << line << " (rank 0)\n";
}

// Trains to the last step, or until a signal; saves every --save-every steps.
// Returns the exit status once the loop ends (0: go on to the end).
struct Loop {
  const Flags& f;
  const World& w;
  const Corpus& c;
  nn::GPT& model;
  train::Trainer& trainer;
  const Replicas& r;
  const train::Metadata& meta;
  // (mpirun hands each rank a pseudo-terminal even when its own output goes
  // to a file: under it, plain lines.)
  const bool tty = isatty(STDOUT_FILENO) && !distributed::launched();
  const int64_t first_step = trainer.steps_done();
  const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  // Samples start from a newline, or from the first character of a vocabulary without one.
  std::string sample(int64_t chars) const {
    const bool newline = c.tok.is_bpe() || c.tok.chars()->vocab().find('\n') != std::string::npos;
    const std::vector<int64_t> prompt = newline ? c.tok.encode("\n") : std::vector<int64_t>{0};
    return c.tok.decode(model.generate(prompt, chars, 0.8, 0, f.cfg.seed));
  }
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }

  std::optional<int> run() {
    // Every rank stops at the same step: a signal that reached one stops all.
    auto stop = [&] { return r.ddp ? r.ddp->any(interrupted) : interrupted.load(); };
    while (!trainer.done() && !stop()) {
      const bool profiling = w.main_rank() && trainer.steps_done() + 1 == f.profile_step;
      std::optional<inspect::Profiler> profiler;
      if (profiling) profiler.emplace();
      const train::StepLog s = trainer.step();
      if (!std::isfinite(s.loss)) return stop_diverged(f, w, trainer, c, s, tty);
      if (profiling) print_profile(f, *profiler, s.step, tty);
      if (s.step == 1 && first_step == 0)
        std::cout << "validation loss at step 0 (untrained) " << trainer.history().front().val_loss.value_or(NAN)
                  << " (a uniform guess: ln " << c.tok.vocab_size() << " = "
                  << std::log(static_cast<double>(c.tok.vocab_size())) << ")" << std::endl;
      print_progress(f, s, first_step, seconds(), tty);
      // (every rank: a sharded run's ranks send rank 0 their part of the state; rank 0 writes)
      if (s.step % f.save_every == 0 && !trainer.done()) trainer.save(f.out, meta);
      if (w.main_rank() && f.sample_every > 0 && s.step % f.sample_every == 0)
        std::cout << "--- sample ---" << sample(f.sample_chars) << "\n---" << std::endl;
    }
    if (tty) std::cout << "\n";
    return std::nullopt;
  }

  // The last save, the loss files and the summary; 130 when a signal stopped the run.
  int finish(const std::string& program_name) {
    const bool stopped = !trainer.done();
    trainer.save(f.out, meta);
    if (!w.main_rank()) return stopped ? 130 : 0;
    write_outputs(f, trainer, c);
    if (stopped) {
      std::cout << "interrupted: saved step " << trainer.steps_done() << " to " << f.out << "; continue with:\n  "
                << (w.ranks > 1 ? "mpirun -np " + std::to_string(w.ranks) + " " : "") << program_name << " --resume "
                << f.out << std::endl;
      return 130;
    }
    const double secs = seconds();
    print_sync_stats(f, r);
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);  // ru_maxrss: KiB on Linux
    const double val = trainer.history().back().val_loss.value_or(NAN);
    std::cout << "trained " << trainer.steps_done() - first_step << " steps in " << format_duration(secs)
              << "; final validation loss " << val << "\n";
    if (c.tok.is_bpe()) {
      // nats per token / bytes per token: what a character model's loss is
      // (per character, a byte for ASCII text)
      const double bytes = c.val_bytes_per_token(trainer.train_tokens());
      std::cout << "per byte    " << val / bytes << " nats (" << bytes << " bytes per token in the validation text)\n";
    }
    std::cout
              << "peak memory " << usage.ru_maxrss / 1024 << " MiB resident (the whole process)"
              << (w.ranks > 1 ? " on rank 0" : "") << "\n"
              << "wrote " << f.out << "/model.safetensors, train_state.safetensors, loss.csv, loss.png\n"
              << "--- sample (temperature 0.8) ---" << sample(f.sample_chars) << "\n---" << std::endl;
    return 0;
  }
};

int train_main(Flags& f, const CLI::App& app, const std::string& program_name) {
  const World w = join_world(f, app, program_name);
  // The resumed run is held while it is read (here and by trainer.resume,
  // on every rank), so that no other process saves a newer checkpoint in
  // between; then only --out is held.
  train::RunLock reading;
  if (w.main_rank() && !f.resume.empty() && std::filesystem::is_directory(f.resume))
    reading = train::gpt_run_dir(f.resume).lock();
  settle_options(f, app);
  const Corpus c = read_corpus(f);
  nn::GPT model(f.cfg);
  // How each step runs, not what it computes (beyond float round-off for
  // --attention): a run may resume with other choices.
  model.set_attention(f.attention == "stored" ? nn::AttentionKernel::Stored : nn::AttentionKernel::Tiled);
  model.checkpoint_activations = f.checkpoint_activations;
  train::Trainer trainer(model, c.ids, f.opt);
  if (!f.resume.empty()) trainer.resume(f.resume);  // (every rank reads the checkpoint)
  const Replicas r = replicate(f, w, model, trainer, c);
  check_flags_take_effect(f, app, w, trainer);
  train::RunLock hold;
  if (w.main_rank()) hold = claim_run_dir(f);
  reading.release();  // (every rank has read the checkpoint: replicate compared what they read)
  train::Metadata meta = train::gpt_metadata(f.cfg, c.tok);
  meta["ember.data"] = f.data;
  // --bf16: every product of the run (forward, backward, evaluation,
  // sampling) in bfloat16 with float32 sums; weights and the rest float32.
  std::optional<AutocastGuard> autocast;
  if (f.bf16) {
    autocast.emplace();
    meta["ember.autocast"] = "bfloat16";
  }
  print_run(f, w, c, model, r, trainer);
  std::signal(SIGINT, on_sigint);
  std::signal(SIGUSR1, on_sigint);
  Loop loop{f, w, c, model, trainer, r, meta};
  if (const std::optional<int> status = loop.run()) return *status;
  return loop.finish(program_name);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train a tiny GPT on the CPU, on characters or (--bpe N) on BPE tokens."};
  examples::show_defaults(app);
  Flags f;
  examples::tiny_gpt_defaults(f.cfg, f.opt);
  f.opt.steps = 1000;  // val loss ~1.91 (600 steps stop at ~2.04)
  app.add_option("--data", f.data, "UTF-8 text file to train on (.gz accepted)");
  app.add_option("--steps", f.opt.steps, "optimizer steps")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--batch", f.opt.batch, "sequences per step")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--context", f.cfg.context_length, "context length L (characters)")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--dim", f.cfg.dim, "model dimension D")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--layers", f.cfg.layers, "Transformer blocks")->check(ember::examples::at_least<int64_t>(0));
  app.add_option("--heads", f.cfg.heads, "attention heads (must divide --dim)")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--lr", f.opt.lr, "peak learning rate (warmup, then cosine decay to lr/10)")->check(ember::examples::positive_number());
  app.add_option("--seed", f.cfg.seed, "seed of the weights and batches")->check(ember::examples::any_number<uint64_t>());
  app.add_option("--threads", f.threads, "threads for ember and OpenBLAS")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--positional", f.positional, "learned | sinusoidal")->check(CLI::IsMember({"learned", "sinusoidal"}));
  app.add_flag("--overwrite", f.overwrite, "start a fresh run in --out even if it holds a run: that run's files are removed");
  app.add_flag("--no-tie", f.no_tie, "give the LM head its own weight instead of the token embedding's");
  app.add_option("--attention", f.attention, "tiled (keeps one log-sum-exp per row) | stored (keeps the T x T weights)")
      ->check(CLI::IsMember({"tiled", "stored"}));
  app.add_flag("--checkpoint-activations", f.checkpoint_activations,
               "keep only each block's input for backward and recompute the block there (same gradients, bit for bit)");
  app.add_flag("--bf16", f.bf16, "mixed precision: products in bfloat16 with float32 sums (autocast), the rest float32");
  app.add_option("--dropout", f.cfg.dropout, "dropout probability")->check(ember::examples::between(0.0, 0.9));
  app.add_option("--eval-every", f.opt.eval_every, "validation loss every N steps")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--save-every", f.save_every, "checkpoint every N steps")->check(ember::examples::at_least<int64_t>(1));
  app.add_option("--sample-every", f.sample_every, "print a text sample every N steps (0: only at the end)")
      ->check(ember::examples::at_least<int64_t>(0));
  app.add_option("--bpe", f.bpe, "learn a byte-level BPE of N tokens (256 bytes + merges) on --data and train on its tokens (0: characters)")
      ->check(CLI::Validator(
          [](std::string& v) {
            // (at most 2^20 tokens: a checkpoint's metadata holds them all, and a
            // safetensors header may have at most 100 MiB)
            const std::string why = ember::examples::detail::check_number<int64_t>(v, 0, int64_t{1} << 20);
            if (!why.empty()) return why;
            return v == "0" || std::stoll(v) >= 256 ? std::string()
                                                    : "must be 0 (characters) or at least 256 (one token per byte), got " + v;
          },
          "0 or 256 to 1048576"));
  app.add_option("--sample-chars", f.sample_chars, "length of the samples (in tokens with --bpe)")->check(ember::examples::at_least<int64_t>(0));
  app.add_option("--out", f.out, "output directory (with --resume: the resumed directory unless given)");
  app.add_option("--resume", f.resume, "directory of a checkpoint to continue from (its model and training options win)");
  app.add_option("--more-steps", f.more_steps, "with --resume: train N steps beyond the checkpoint (at the schedule's final lr once the planned steps are done)")
      ->check(ember::examples::at_least<int64_t>(1))
      ->default_str("");  // (none)
  app.add_option("--profile", f.profile_step, "profile step N (1-based): print the per-op table, write a Chrome trace")
      ->check(ember::examples::at_least<int64_t>(1))
      ->default_str("");  // (none)
  app.add_option("--loss-plot", f.loss_plot, "y axis of loss.png: linear | log")->check(CLI::IsMember({"linear", "log"}));
  app.add_option("--zero", f.zero,
                 "ZeRO stage: 1 shards AdamW's moments over the ranks, 2 the gradients as well (0: every rank keeps all)")
      ->check(ember::examples::between(0, 2));
  app.add_option("--bucket-kb", f.bucket_kb, "under mpirun: the most KiB of gradients per all-reduce")
      ->check(ember::examples::between(int64_t{1}, int64_t{1} << 20));
  EMBER_PARSE("train_gpt", app, argc, argv);
  // Started by mpirun: join the job. A rank that then fails ends them all
  // (distributed::abort), since the others would wait for it in their next all-reduce.
  if (distributed::launched() && examples::run("train_gpt", [] {
        distributed::init();
        return 0;
      }) != 0)
    return 1;
  const int status = examples::run(
      "train_gpt", distributed::where(), [&] { return train_main(f, app, argv[0]); },
      [] {
        if (distributed::is_initialized() && distributed::world_size() > 1) distributed::abort(1);
      });
  if (distributed::is_initialized()) {
    // Every rank waits here for rank 0's last save: mpirun ends the whole
    // job as soon as one rank exits with a non-zero status (130 when stopped).
    distributed::barrier();
    distributed::finalize();
  }
  return status;
}
