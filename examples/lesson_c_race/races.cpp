// lesson_c_race, part 5 of 7: the races (races.h says what each measures).
// race() is what they share: build every entrant at the width that fits the
// budget, then train and measure them, --threads at a time.
#include "lesson_c_race/races.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include "lesson_c_race/format.h"
#include "lesson_c_race/measure.h"

namespace lesson_c {

Setup make_setup(const Options& o) {
  Setup s{.o = o, .arch = {.attention_feedback = o.attention_feedback}};
  s.reach_every = std::max<int64_t>(10, o.recall_steps / 60);
  s.timing_T = o.quick ? std::vector<int64_t>{16, 64} : std::vector<int64_t>{16, 32, 64, 128, 256};
  s.stream_models = {{Kind::LSTM}, {Kind::GRU}, {Kind::Transformer}, {Kind::RNN}, {Kind::Window}};
  s.recall_models = s.stream_models;
  if (!o.quick) s.recall_models.push_back({Kind::RNN, 0.02});
  s.reverse_models = s.stream_models;
  s.reverse_models.insert(s.reverse_models.begin() + 2, {Kind::Seq2seq});
  s.timing_models = s.stream_models;
  s.timing_models.push_back({Kind::Seq2seq});
  return s;
}

namespace {

using Hook = std::function<void(RaceModel&, Result&)>;

// Trains one model per entrant on a task: `before` runs on the new model,
// `train_and_measure` trains and measures it.
std::vector<Result> race(const Setup& s, const std::vector<Entrant>& entrants, const TaskShape& task, int64_t budget,
                         uint64_t init_stream, const Hook& before, const Hook& train_and_measure) {
  std::vector<Result> rs(entrants.size());
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < entrants.size(); ++i)
    jobs.push_back([&, i] {
      Result& r = rs[i];
      r.entrant = entrants[i];
      r.label = label(r.entrant, s.arch);
      r.width = fit_width(r.entrant, task, s.arch, budget);
      Generator init(s.o.seed, init_stream + i);
      std::shared_ptr<RaceModel> m = build(r.entrant, task, s.arch, r.width, init);
      r.params = m->num_parameters();
      if (before) before(*m, r);
      train_and_measure(*m, r);
    });
  run_jobs(jobs, s.o.threads);
  return rs;
}

// The distances at which the reach is measured: about log-spaced, and K.
std::vector<int64_t> reach_distances(int64_t K) {
  std::vector<int64_t> ks;
  for (int64_t k : {1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50, 70, 100, 150, 200, 300, 500, 700, 1000})
    if (k < K) ks.push_back(k);
  ks.push_back(K);
  return ks;
}

// Race 1's table of |dloss/dh_t| at a few distances, beside the lesson's 0.5^d.
void print_gradient_table(const std::vector<Result>& recall, int64_t K) {
  std::printf("\n   |dloss/dh_t| d steps before the output / at the output (backward() with retain_grad), streams with k = %lld:\n",
              static_cast<long long>(K));
  std::vector<int64_t> ds;
  for (int64_t d : {1, 5, 10, 20, 50})
    if (d < K) ds.push_back(d);
  ds.push_back(K);
  std::string line = "   " + std::string(32, ' ');
  for (int64_t d : ds) {
    const std::string h = "d=" + std::to_string(d);
    line += std::string(10 - h.size(), ' ') + h;
  }
  std::printf("%s\n", line.c_str());
  auto print_row = [&](const std::string& name, const std::vector<double>& g) {
    std::string l = "   " + padded(name, 32);
    for (int64_t d : ds) l += fmt("%10.2g", g[d]);
    std::printf("%s\n", l.c_str());
  };
  std::vector<double> lesson;
  for (int64_t d = 0; d <= K; ++d) lesson.push_back(std::pow(0.5, static_cast<double>(d)));
  print_row("the lesson, 0.5^d", lesson);
  for (const Result& r : recall) {
    if (r.grad_init.empty()) continue;
    print_row(r.label + ", h, at init", r.grad_init);
    print_row(r.label + ", h, trained", r.grad_trained);
    if (!r.grad_c_init.empty()) {
      print_row(r.label + ", c, at init", r.grad_c_init);
      print_row(r.label + ", c, trained", r.grad_c_trained);
    }
  }
}

}  // namespace

std::vector<Result> recall_race(const Setup& s) {
  const Options& o = s.o;
  const TaskShape task{2 * kSymbols, kSymbols, s.prefix + o.K + 1};
  const Schedule schedule{o.recall_steps, o.batch, o.lr};
  std::printf("1. Recall: name the marked symbol, k = 1..%lld steps back (log-uniform), streams of T = %lld,\n"
              "   %lld steps, budget %lld parameters\n",
              static_cast<long long>(o.K), static_cast<long long>(task.context), static_cast<long long>(o.recall_steps),
              static_cast<long long>(o.synthetic_budget));
  const std::vector<int64_t> reach_ks = reach_distances(o.K);
  Generator probe_gen(o.seed, kRecallProbe);
  const Batch probe = recall_batch(64, o.K, s.prefix, probe_gen, o.K);  // the mark K steps back
  auto before = [&](RaceModel& m, Result& r) {
    if (auto* rec = dynamic_cast<RecurrentLM*>(&m)) gradient_profile(*rec, probe, r.grad_init, r.grad_c_init);
  };
  auto train_and_measure = [&](RaceModel& m, Result& r) {
    // How far back it recalls, as it trains: the largest k whose accuracy,
    // and that of every shorter distance, is at least 0.9 (32 streams at
    // each of about ten distances; the same streams every time).
    auto measure_reach = [&](int64_t step) {
      Generator gen(o.seed, kRecallReach);
      int64_t reach = 0;
      for (int64_t k : reach_ks) {
        if (accuracy_by_position(m, recall_batch(32, o.K, s.prefix, gen, k))[0] < 0.9) break;
        reach = k;
      }
      r.reach.emplace_back(step, reach);
    };
    train_model(m, r, schedule, [&](Generator& g) { return recall_batch(schedule.batch, o.K, s.prefix, g); },
                Generator(o.seed, kRecallData), measure_reach, s.reach_every);
    if (auto* rec = dynamic_cast<RecurrentLM*>(&m)) gradient_profile(*rec, probe, r.grad_trained, r.grad_c_trained);
    Generator eval(o.seed, kRecallEval);
    for (int64_t k = 1; k <= o.K; ++k)
      r.accuracy.push_back(accuracy_by_position(m, recall_batch(128, o.K, s.prefix, eval, k))[0]);
    const int64_t k10 = std::min<int64_t>(10, o.K);
    report(r, "accuracy at k = 1, " + std::to_string(k10) + ", " + std::to_string(o.K) + ": " + fmt("%.2f", r.accuracy[0]) +
                  ", " + fmt("%.2f", r.accuracy[k10 - 1]) + ", " + fmt("%.2f", r.accuracy.back()));
  };
  std::vector<Result> recall = race(s, s.recall_models, task, o.synthetic_budget, kInitStream, before, train_and_measure);
  print_gradient_table(recall, o.K);
  return recall;
}

namespace {

// The encoder-decoder's attention on the test batch: how often its argmax
// is the aligned source position L-1-i, and the weights of the first example.
void measure_alignment(Seq2seqAttention& s2s, const Batch& test, int64_t L, Result& r) {
  NoGradGuard no_grad;
  const int64_t rows = test.src.size(0);
  const std::vector<double> alpha = s2s.run(test).second.contiguous().to_vector<double>();  // (rows, L, L)
  int64_t aligned = 0;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t i = 0; i < L; ++i) {
      const double* a = &alpha[(row * L + i) * L];
      aligned += std::max_element(a, a + L) - a == L - 1 - i;
    }
  r.alignment = static_cast<double>(aligned) / static_cast<double>(rows * L);
  r.heat.assign(alpha.begin(), alpha.begin() + L * L);
  const std::vector<int64_t> src = test.src.contiguous().to_vector<int64_t>();
  r.heat_src.assign(src.begin(), src.begin() + L);
}

}  // namespace

std::vector<Result> reverse_race(const Setup& s) {
  const Options& o = s.o;
  const TaskShape task{kSymbols + 1, kSymbols, 2 * o.L};
  const Schedule schedule{o.reverse_steps, o.batch, o.lr};
  std::printf("\n2. Reverse %lld symbols: the stream models read s SEP and write r (teacher forcing); the encoder-\n"
              "   decoder reads s and writes r; %lld steps, budget %lld parameters\n",
              static_cast<long long>(o.L), static_cast<long long>(o.reverse_steps),
              static_cast<long long>(o.synthetic_budget));
  Generator causal_gen(o.seed, kReverseEval);
  const Batch causal_probe = reverse_batch(4, o.L, causal_gen);
  auto before = [&](RaceModel& m, Result& r) {
    if (r.entrant.kind == Kind::Seq2seq) return;  // reads the answers only through the decoder input, by design
    for (int64_t t = 0; t + 1 < 2 * o.L; ++t) r.causal = r.causal && is_causal(m, causal_probe, t);
  };
  auto train_and_measure = [&](RaceModel& m, Result& r) {
    train_model(m, r, schedule, [&](Generator& g) { return reverse_batch(schedule.batch, o.L, g); },
                Generator(o.seed, kReverseData));
    Generator eval(o.seed, kReverseEval);
    const Batch test = reverse_batch(256, o.L, eval);
    r.accuracy = accuracy_by_position(m, test);
    if (auto* s2s = dynamic_cast<Seq2seqAttention*>(&m)) measure_alignment(*s2s, test, o.L, r);
    report(r, "accuracy " + fmt("%.3f", mean_of(r.accuracy, 0, r.accuracy.size())) +
                  (std::isnan(r.alignment) ? "" : ", attention argmax on L-1-i: " + fmt("%.3f", r.alignment)));
  };
  return race(s, s.reverse_models, task, o.synthetic_budget, kInitStream + 10, before, train_and_measure);
}

std::vector<Result> text_race(const Setup& s, const Text& text) {
  const Options& o = s.o;
  const int64_t V = text.tok.vocab_size();
  const TaskShape task{V, V, o.text_context};
  const Schedule schedule{o.text_steps, o.batch, o.lr};
  const int64_t eval_every = std::max<int64_t>(1, o.text_steps / 10);
  std::printf("\n3. Next character of %s (%zu characters, V = %lld), T = %lld, %lld steps, budget %lld parameters\n",
              std::filesystem::path(o.data).filename().c_str(), text.tokens.size(), static_cast<long long>(V),
              static_cast<long long>(o.text_context), static_cast<long long>(o.text_steps),
              static_cast<long long>(o.text_budget));
  auto train_and_measure = [&](RaceModel& m, Result& r) {
    // every model draws the same windows: its own sampler with the same seed
    train::BatchSampler sampler(text.tokens, schedule.batch, o.text_context, 0.1, o.seed + kTextData);
    auto validate = [&](int64_t step) {
      NoGradGuard no_grad;
      Generator val_gen(o.seed, kTextVal);  // the same 8 validation batches every time
      double sum = 0;
      for (int n = 0; n < 8; ++n) {
        auto [x, y] = sampler.sample(true, val_gen);
        sum += cross_entropy(m.logits({x, y, {}, {}, {}}), y).item<double>() / 8;
      }
      r.val.emplace_back(step, sum);
    };
    auto next = [&](Generator&) {
      auto [x, y] = sampler.sample(false);
      return Batch{x, y, {}, {}, {}};
    };
    train_model(m, r, schedule, next, Generator(0), validate, eval_every);
    report(r, "validation loss " + fmt("%.3f", r.val.front().second) + " -> " + fmt("%.3f", r.val.back().second));
  };
  return race(s, s.stream_models, task, o.text_budget, kInitStream + 20, nullptr, train_and_measure);
}

std::vector<Result> timing_race(const Setup& s, const Text& text) {
  const Options& o = s.o;
  const int64_t V = text.tok.vocab_size();
  std::printf("\n4. One training step at the text budget, batch 32, one model at a time on one thread:\n"
              "   wall time (median of %d) and op calls (forward ops + backward nodes)\n", o.quick ? 3 : 7);
  std::vector<Result> timing(s.timing_models.size());
  for (size_t i = 0; i < s.timing_models.size(); ++i) {
    Result& r = timing[i];
    r.entrant = s.timing_models[i];
    r.label = label(r.entrant, s.arch);
    std::string line = "  " + padded(r.label, 30);
    for (int64_t T : s.timing_T) {
      const bool s2s = r.entrant.kind == Kind::Seq2seq;
      const TaskShape task = s2s ? TaskShape{V + 1, V, T} : TaskShape{V, V, T};
      Generator init(o.seed, kTiming), data(o.seed, kTiming);
      std::shared_ptr<RaceModel> m = build(r.entrant, task, s.arch, fit_width(r.entrant, task, s.arch, o.text_budget), init);
      Batch b;
      if (s2s) {
        b = reverse_batch(o.batch, T / 2, data);  // T/2 symbols read, T/2 written
      } else {
        std::vector<int64_t> ids(o.batch * T);
        for (auto& id : ids) id = static_cast<int64_t>(data.next_below(V));
        b.ids = b.targets = tensor(ids, {o.batch, T});
      }
      r.ms_per_step.push_back(ms_per_step(*m, b, o.quick ? 3 : 7));
      r.ops_per_step.push_back(ops_per_step(*m, b));
      line += "  T=" + std::to_string(T) + ": " + fmt("%.1f ms", r.ms_per_step.back()) + fmt(" %.0f ops", r.ops_per_step.back());
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  return timing;
}

}  // namespace lesson_c
