// lesson_c_race, part 7 of 7: the summary table (one row per model, one
// column group per race) and the facts, race by race.
#include "lesson_c_race/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lesson_c_race/format.h"

namespace lesson_c {

void Facts::check(bool ok, const std::string& what) {
  ++checked;
  std::printf("  [%s] %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) failed.push_back(what);
}

namespace {

// The distances whose recall accuracy the table shows: 5, 10, 20, 50 below K, and K.
std::vector<int64_t> table_distances(int64_t K) {
  std::vector<int64_t> ks;
  for (int64_t k : {5, 10, 20, 50})
    if (k < K) ks.push_back(k);
  ks.push_back(K);
  return ks;
}

const Result* find_in(const std::vector<Result>& rs, const Entrant& e) {
  for (const Result& r : rs)
    if (r.entrant.kind == e.kind && r.entrant.input_std == e.input_std) return &r;
  return nullptr;
}

// One model's row: "-" where it did not run the race.
std::vector<std::string> table_row(const Setup& s, const Races& races, const Entrant& e) {
  const int64_t K = s.o.K;
  const Result *rc = find_in(races.recall, e), *rv = find_in(races.reverse, e), *tx = find_in(races.text, e),
               *tm = find_in(races.timing, e);
  const size_t t64 = std::find(s.timing_T.begin(), s.timing_T.end(), 64) - s.timing_T.begin();
  // each race built its own models (its task's vocabulary and classes): three counts
  auto count = [](const Result* r) { return r ? std::to_string(r->params) : std::string("-"); };
  std::vector<std::string> row{label(e, s.arch), count(rc) + " / " + count(rv) + " / " + count(tx)};
  for (int64_t k : table_distances(K)) row.push_back(rc ? fmt("%.2f", rc->accuracy[k - 1]) : "-");
  row.push_back(rc ? (step_reaching(*rc, K) < 0 ? "never" : std::to_string(step_reaching(*rc, K))) : "-");
  row.push_back(rv ? fmt("%.3f", mean_of(rv->accuracy, 0, rv->accuracy.size())) : "-");
  row.push_back(rv && !std::isnan(rv->alignment) ? fmt("%.3f", rv->alignment) : "-");
  row.push_back(tx ? fmt("%.3f", tx->val.back().second) : "-");
  row.push_back(tm && t64 < s.timing_T.size() ? fmt("%.2f", tm->ms_per_step[t64]) : "-");
  row.push_back(tm && t64 < s.timing_T.size() ? fmt("%.0f", tm->ops_per_step[t64]) : "-");
  const bool grads = rc && !rc->grad_init.empty();
  row.push_back(grads && rc->grad_init.size() > 10 ? fmt("%.2g", rc->grad_init[10]) : "-");
  row.push_back(grads ? fmt("%.2g", rc->grad_trained[K]) : "-");
  return row;
}

}  // namespace

std::string summary_table(const Setup& s, const Races& races) {
  const Options& o = s.o;
  std::string table = "Summary (" + std::string(o.quick ? "--quick" : "full run") + ", seed " + std::to_string(o.seed) + ")\n";
  std::vector<int> widths{-27, 21};
  std::vector<std::string> head{"model", "params rec/rev/text"};
  for (int64_t k : table_distances(o.K)) head.push_back("k=" + std::to_string(k)), widths.push_back(5);
  head.push_back("all k at"), widths.push_back(8);
  for (const char* h : {"rev acc", "align", "text val", "ms/step", "ops/step"}) head.push_back(h), widths.push_back(8);
  head.push_back("grad d=10 init"), widths.push_back(14);
  head.push_back("d=K trained"), widths.push_back(11);
  table += table_line(head, widths);
  std::vector<Entrant> rows = s.reverse_models;
  if (s.recall_models.size() > s.stream_models.size()) rows.push_back(s.recall_models.back());
  for (const Entrant& e : rows) table += table_line(table_row(s, races, e), widths);
  table += "params: the recall / reverse / text race's model; k=..: recall accuracy at distance k; all k at: the first\n"
           "step (of " + std::to_string(o.recall_steps) + ", measured every " + std::to_string(s.reach_every) +
           ") at which every k up to K was recalled at >= 90%; rev acc: reverse accuracy;\n"
           "align: the attention's argmax on j = L-1-i; text val: validation loss after " + std::to_string(o.text_steps) +
           " steps (nats per character);\n"
           "ms/step, ops/step: the wall time and the op calls (forward ops + backward nodes) of one training step at\n"
           "T = 64 (text budget, batch " + std::to_string(o.batch) + ", 1 thread);\n"
           "grad: |dloss/dh_t| d steps before the output / at the output, 10 steps back at initialisation (the lesson:\n"
           "0.5^10 = 0.00098) and K steps back, at the marked symbol, after training\n";
  return table;
}

namespace {

void check_budget(Facts& facts, const std::vector<Result>& rs, int64_t budget, const char* race_name) {
  int64_t lo = INT64_MAX, hi = 0;
  for (const Result& r : rs) lo = std::min(lo, r.params), hi = std::max(hi, r.params);
  facts.check(lo * 10 >= budget * 9 && hi * 10 <= budget * 11,
              std::string(race_name) + ": every model has " + std::to_string(budget) + " parameters +-10% (" +
                  std::to_string(lo) + " .. " + std::to_string(hi) + ")");
}

// Race 1: the MLP's window, the gates' reach, attention anywhere.
void check_recall_reach(Facts& facts, const Setup& s, const std::vector<Result>& recall) {
  const int64_t K = s.o.K, w = s.arch.window;
  if (K >= w) {
    const Result& mlp = find(recall, Kind::Window);
    const double inside = mean_of(mlp.accuracy, 0, w - 1), outside = mean_of(mlp.accuracy, w - 1, K);
    facts.check(inside >= 0.9 && outside <= 0.2,
                "the MLP knows what is inside its window and guesses beyond it: accuracy " + fmt("%.2f", inside) +
                    " for k < " + std::to_string(w) + ", " + fmt("%.2f", outside) + " for k >= " + std::to_string(w) +
                    " (chance 0.125)");
  }
  const int64_t lstm = step_reaching(find(recall, Kind::LSTM), K), gru = step_reaching(find(recall, Kind::GRU), K),
                rnn = step_reaching(find(recall, Kind::RNN), K);
  auto when = [&](int64_t step) { return step < 0 ? "not in " + std::to_string(s.o.recall_steps) : std::to_string(step); };
  auto sooner = [](int64_t a, int64_t b) { return a >= 0 && (b < 0 || a < b); };
  facts.check(sooner(lstm, rnn) && sooner(gru, rnn),
              "the gates learn the longest distances sooner: every k up to K recalled (>= 90%) at step " + when(lstm) +
                  " by the LSTM, " + when(gru) + " by the GRU, " + when(rnn) + " by the RNN");
  const size_t far_from = static_cast<size_t>(K - std::max<int64_t>(1, K / 5));  // the farthest fifth of the distances
  const Result& tr = find(recall, Kind::Transformer);
  const double far = mean_of(tr.accuracy, far_from, tr.accuracy.size());
  facts.check(far >= 0.9, "attention looks anywhere: the Transformer's accuracy for k > " + std::to_string(far_from) +
                              " is " + fmt("%.2f", far));
}

// Race 1: the gradient through time, at initialisation and trained.
void check_gradients(Facts& facts, const Setup& s, const std::vector<Result>& recall) {
  const int64_t K = s.o.K;
  const Result &rnn = find(recall, Kind::RNN), &lstm = find(recall, Kind::LSTM), &gru = find(recall, Kind::GRU);
  if (K + s.prefix > 10)
    facts.check(rnn.grad_init[10] < 0.01, "the RNN's gradient vanishes at initialisation: 10 steps back it is " +
                                              fmt("%.2g", rnn.grad_init[10]) +
                                              " of the output's (the lesson's 0.5^10 = 0.00098)");
  facts.check(std::max({rnn.grad_init[K], lstm.grad_init[K], lstm.grad_c_init[K], gru.grad_init[K]}) < 1e-3,
              "at initialisation less than a thousandth of the gradient reaches d = K (RNN " + fmt("%.2g", rnn.grad_init[K]) +
                  ", LSTM h " + fmt("%.2g", lstm.grad_init[K]) + " and c " + fmt("%.2g", lstm.grad_c_init[K]) + ", GRU " +
                  fmt("%.2g", gru.grad_init[K]) + ")");
  facts.check(lstm.grad_c_trained[K] > 1000 * lstm.grad_c_init[K] && gru.grad_trained[K] > 1000 * gru.grad_init[K],
              "training opens the gates: at d = K the gradient grew from " + fmt("%.2g", lstm.grad_c_init[K]) + " to " +
                  fmt("%.2g", lstm.grad_c_trained[K]) + " (LSTM, c) and from " + fmt("%.2g", gru.grad_init[K]) + " to " +
                  fmt("%.2g", gru.grad_trained[K]) + " (GRU)");
}

// Race 2: the encoder-decoder reverses and aligns; the MLP cannot.
void check_reverse(Facts& facts, const Setup& s, const std::vector<Result>& reverse) {
  const Result& s2s = find(reverse, Kind::Seq2seq);
  const double acc = mean_of(s2s.accuracy, 0, s2s.accuracy.size());
  facts.check(acc >= 0.9 && s2s.alignment >= 0.8,
              "the encoder-decoder reverses (accuracy " + fmt("%.3f", acc) + ") and its attention follows the alignment: "
              "argmax_j a_ij = L-1-i at " + fmt("%.1f", 100 * s2s.alignment) + "% of the positions");
  const Result& mlp = find(reverse, Kind::Window);
  const int64_t first_blind = (s.arch.window + 1) / 2;  // output i needs the input 2i+1 steps back
  if (first_blind < s.o.L) {
    const double blind = mean_of(mlp.accuracy, first_blind, s.o.L);
    facts.check(blind <= 0.2, "the MLP cannot reverse what left its window: accuracy " + fmt("%.2f", blind) +
                                  " at output positions i >= " + std::to_string(first_blind) + " (chance 0.125)");
  }
}

// The step timing and the text race.
void check_steps_and_text(Facts& facts, const Setup& s, const Races& races, int64_t vocab) {
  auto ops_grow = [&](Kind k) {
    return find(races.timing, k).ops_per_step.back() / find(races.timing, k).ops_per_step.front();
  };
  const double T_grow = static_cast<double>(s.timing_T.back()) / static_cast<double>(s.timing_T.front());
  facts.check(ops_grow(Kind::Transformer) == 1.0 && std::abs(ops_grow(Kind::RNN) / T_grow - 1) < 0.1 &&
                  std::abs(ops_grow(Kind::LSTM) / T_grow - 1) < 0.1,
              "the recurrent models cut a step into T pieces, the Transformer does not: from T = " +
                  std::to_string(s.timing_T.front()) + " to " + std::to_string(s.timing_T.back()) +
                  " the op calls of a step grow " + fmt("x%.2f", ops_grow(Kind::RNN)) + " (RNN), " +
                  fmt("x%.2f", ops_grow(Kind::LSTM)) + " (LSTM), " + fmt("x%.2f", ops_grow(Kind::Transformer)) +
                  " (Transformer)");
  double worst = 0;
  for (const Result& r : races.text) worst = std::max(worst, r.val.back().second);
  const double lnV = std::log(static_cast<double>(vocab));
  facts.check(worst < lnV - 1.0, "every model learns text: the worst validation loss " + fmt("%.3f", worst) +
                                      " is below ln V - 1 = " + fmt("%.3f", lnV - 1.0));
}

}  // namespace

void check_facts(Facts& facts, const Setup& s, const Races& races, int64_t vocab) {
  check_budget(facts, races.recall, s.o.synthetic_budget, "recall");
  check_budget(facts, races.reverse, s.o.synthetic_budget, "reverse");
  check_budget(facts, races.text, s.o.text_budget, "text");
  bool causal = true;
  for (const Result& r : races.reverse) causal = causal && r.causal;
  facts.check(causal, "no stream model sees its answer: changing the inputs after t changes no output at 0..t");
  check_recall_reach(facts, s, races.recall);
  check_gradients(facts, s, races.recall);
  check_reverse(facts, s, races.reverse);
  check_steps_and_text(facts, s, races, vocab);
}

}  // namespace lesson_c
