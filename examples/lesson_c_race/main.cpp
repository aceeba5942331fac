// Lesson C, measured: a fixed window, an RNN, an LSTM, a GRU, an
// encoder-decoder with attention and a small Transformer race on the same
// tasks with the same budget, and the pictures show who remembers what.
//
//   lesson_c_race                  # the full race: pictures and summary.txt in out/lesson_c/
//   lesson_c_race --quick --check  # the short race of the test suite, its facts checked
//
// Three races. Every model is built from ember's modules with ember's own
// initialisation (only the input lookup tables are drawn at unit scale, see
// Input in models.h), gets the same number of parameters (within 10%), and is
// trained with Adam at one learning rate on the very same batches (the same
// tokens):
//
//   recall   a stream of symbols, one of them marked; at the end, name the
//            marked symbol. It sits k steps back, k = 1..K drawn log-uniform
//            (every scale of distance equally common). The answer is known,
//            so accuracy can be measured at each k.
//   reverse  read L symbols, write them backwards: a sequence-to-sequence
//            task, where the encoder-decoder's attention should learn to look
//            at source position L-1-i when it writes output i.
//   text     next-character prediction on tinyshakespeare.
//
// and three measurements: the gradient ‖∂loss/∂h_t‖ that reaches each
// hidden state of the recurrent models (backward() with retain_grad), at
// initialisation and after training; the wall time of one training step
// against the sequence length T, one model at a time; and the op calls of
// that step (the inspect/ profiler), which is what "one after another"
// means. Then it checks the facts the pictures should show (--check: exit
// status 1 if one did not happen) and prints the summary table.
//
// The program in seven parts, to read in this order (each .h says what its
// part holds, its .cpp how):
//   1. tasks.h     the recall and reverse batches
//   2. models.h    the six models and the width that fits the budget
//   3. training.h  the training step and loop, the thread pool, Result
//   4. measure.h   accuracy, gradient through time, causality, step time and ops
//   5. races.h     the races themselves
//   6. plots.h     the pictures
//   7. report.h    the summary table and the facts
// and this file, which runs them in that order (format.h: small helpers).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/program.h"
#include "ember.h"
#include "lesson_c_race/format.h"
#include "lesson_c_race/plots.h"
#include "lesson_c_race/races.h"
#include "lesson_c_race/report.h"

namespace lesson_c {
namespace {

// Reads the text and makes the directory first: a bad path fails now, not after the races.
Text read_text(const Options& o) {
  const std::string text = train::read_text_file(o.data);
  Text t{train::CharTokenizer::from_text(text), {}};
  t.tokens = t.tok.encode(text);
  EMBER_CHECK(static_cast<int64_t>(t.tokens.size()) >= 20 * (o.text_context + 1), "lesson_c_race",
              o.data << " has " << t.tokens.size() << " characters; race 3 needs at least " << 20 * (o.text_context + 1));
  std::filesystem::create_directories(o.out);
  return t;
}

int program(const Options& o) {
  const auto t_start = std::chrono::steady_clock::now();
  const Text text = read_text(o);
  const Setup s = make_setup(o);
  set_num_threads(1);  // one model per thread, --threads of them at once
  const std::string at_once =
      o.threads == 1 ? "one model at a time, on one thread" : std::to_string(o.threads) + " models at once, on one thread each";
  std::printf("Lesson C, measured%s: ember's modules and initialisation (inputs looked up at unit scale), Adam lr %g,\n"
              "batch %lld, gradient norm clipped at 1, seed %llu, %s\n\n",
              o.quick ? " (--quick)" : "", o.lr, static_cast<long long>(o.batch), static_cast<unsigned long long>(o.seed),
              at_once.c_str());
  Races races;
  races.recall = recall_race(s);
  races.reverse = reverse_race(s);
  races.text = text_race(s, text);
  races.timing = timing_race(s, text);

  const int64_t vocab = text.tok.vocab_size();
  const std::vector<std::string> layout = write_pictures(s, races, vocab, o.out);
  std::string table = summary_table(s, races);
  std::printf("\nWhat the pictures should show, checked:\n");
  Facts facts;
  check_facts(facts, s, races, vocab);
  std::string problems;
  for (const std::string& p : layout) problems += "\n      " + p;
  facts.check(layout.empty(), "every picture can be read: no text runs into another, no two legend entries look alike" +
                                  problems);

  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  table += "total run time " + fmt("%.0f s", total) + "\n";
  std::printf("\n%s", table.c_str());
  std::ofstream(o.out + "/summary.txt") << table;
  std::printf("\nPictures in %s: recall_loss, recall_accuracy, recall_reach, gradient_init, gradient_trained, reverse_loss,\n"
              "reverse_accuracy, attention, text_loss, step_time, step_ops (.png); the table in summary.txt\n",
              o.out.c_str());
  std::printf("%d facts checked, %zu failed%s\n", facts.checked, facts.failed.size(),
              facts.failed.empty() || o.check ? "" : " (exit status 0: --check makes a failed fact an error)");
  return o.check && !facts.failed.empty() ? 1 : 0;
}

}  // namespace
}  // namespace lesson_c

int main(int argc, char** argv) {
  using lesson_c::Options;
  CLI::App app{"Lesson C, measured: an MLP window, an RNN, an LSTM, a GRU, an encoder-decoder with attention and a "
               "Transformer race on recall at distance k, reversal and tinyshakespeare with the same budget; "
               "pictures of their losses, accuracy against distance, gradients through time, attention and step time."};
  ember::examples::show_defaults(app);
  Options o;
  app.add_flag("--quick", o.quick, "the short race of the test suite: K = 30 and fewer steps");
  app.add_flag("--check", o.check, "exit with status 1 if a fact the pictures should show did not happen");
  app.add_flag("--attention-feedback", o.attention_feedback,
               "the encoder-decoder in Bahdanau's order: the context also fed back into the decoder's GRU");
  app.add_option("--out", o.out, "directory for the pictures and summary.txt");
  app.add_option("--data", o.data, "the text of race 3 (.gz accepted)");
  app.add_option("--seed", o.seed, "seed of every initialisation and batch")
      ->check([](const std::string& v) {  // CLI11 would read -1 as 2^64 - 1
        return v.find('-') == std::string::npos ? std::string() : "a seed is a non-negative integer, got " + v;
      });
  app.add_option("--threads", o.threads,
                 "models trained at once, one thread each (the numbers do not depend on it; on this project's 2-core VM "
                 "a second one gained at most about 1.2x)")
      ->check(CLI::Range(1, 64));
  // the sizes --quick changes (only those not given), with their ranges
  const std::vector<std::tuple<const char*, int64_t*, int64_t, const char*, int64_t, int64_t>> sizes{
      {"--max-distance", &o.K, 30, "K, the longest recall distance", 1, 1000},
      {"--reverse-length", &o.L, 10, "L, the length of the sequences to reverse", 2, 200},
      {"--recall-steps", &o.recall_steps, 300, "training steps of race 1", 1, 10000000},
      {"--reverse-steps", &o.reverse_steps, 300, "training steps of race 2", 1, 10000000},
      {"--text-steps", &o.text_steps, 60, "training steps of race 3", 1, 10000000}};
  for (const auto& [flag, value, quick, what, lo, hi] : sizes)
    app.add_option(flag, *value, std::string(what) + " (--quick: " + std::to_string(quick) + ")")->check(CLI::Range(lo, hi));
  CLI11_PARSE(app, argc, argv);
  for (const auto& [flag, value, quick, what, lo, hi] : sizes)
    if (o.quick && app.count(flag) == 0) *value = quick;
  return ember::examples::run("lesson_c_race", [&] { return lesson_c::program(o); });
}
