// lesson_c_race, part 5 of 7: the races. Each trains one model per kind on a
// task with the same budget and measures it (measure.h); the fourth times
// one training step at several lengths T, one model at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember.h"
#include "lesson_c_race/training.h"

namespace lesson_c {

/// The command line (main.cpp), the full run's sizes by default.
struct Options {
  bool quick = false, check = false, attention_feedback = false;
  std::string out = "out/lesson_c", data = std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz";
  uint64_t seed = 0;
  int threads = 1;
  // the full run's; --quick changes the steps of those not given
  int64_t K = 50, L = 10, recall_steps = 3000, reverse_steps = 1500, text_steps = 1500;
  int64_t synthetic_budget = 20000, text_budget = 50000, text_context = 64, batch = 32;
  double lr = 3e-3;
};

/// What the races share, worked out once from the options.
struct Setup {
  Options o;
  Architecture arch;
  int64_t prefix = 4;                          // recall: positions never marked at the start
  int64_t reach_every = 10;                    // recall: measure the reach every this many steps
  std::vector<int64_t> timing_T{};             // the lengths T of the step timing
  std::vector<Entrant> stream_models{};        // the models that read one stream
  std::vector<Entrant> recall_models{};        // ... and, in the full run, the RNN with ember's input scale
  std::vector<Entrant> reverse_models{};       // the stream models and the encoder-decoder
  std::vector<Entrant> timing_models{};
};
Setup make_setup(const Options& o);

/// The text of race 3, read before any race runs (a bad path fails at once).
struct Text {
  train::CharTokenizer tok;
  std::vector<int64_t> tokens;
};

/// Every race's results, one Result per entrant in the entrants' order.
struct Races {
  std::vector<Result> recall, reverse, text, timing;
};

/// Race 1, recall at distance k: accuracy at every k, the reach during
/// training, the gradient through time before and after training (printed
/// as a table too).
std::vector<Result> recall_race(const Setup& s);
/// Race 2, reverse L symbols: accuracy by output position; the
/// encoder-decoder's alignment and one example's attention weights.
std::vector<Result> reverse_race(const Setup& s);
/// Race 3, the next character of the text: validation loss every tenth of
/// the run.
std::vector<Result> text_race(const Setup& s, const Text& text);
/// Not a race: the wall time and the op calls of one training step at each
/// T of s.timing_T, one model at a time, at the text budget.
std::vector<Result> timing_race(const Setup& s, const Text& text);

}  // namespace lesson_c
