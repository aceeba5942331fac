// lesson_c_race, part 6 of 7: the pictures. Each model keeps its colour and
// its marker in every figure; write_pictures at the bottom says which figure
// shows what. Where models lie on top of each other (accuracy 1.0), each
// puts its markers at other points than the others, so every one shows.
#include "lesson_c_race/plots.h"

#include <algorithm>
#include <cmath>

#include "lesson_c_race/format.h"
#include "plot/plot.h"

namespace lesson_c {

namespace {

plot::Color color_of(Kind k) {
  switch (k) {
    case Kind::Window: return plot::palette(7);
    case Kind::RNN: return plot::palette(3);
    case Kind::LSTM: return plot::palette(0);
    case Kind::GRU: return plot::palette(2);
    case Kind::Seq2seq: return plot::palette(4);
    case Kind::Transformer: return plot::palette(1);
  }
  return plot::palette(9);
}
plot::Color color_of(const Entrant& e) { return e.input_std == 1.0 ? color_of(e.kind) : plot::palette(6); }
const plot::Color kGrey{140, 140, 140};

plot::Marker marker_of(Kind k) {
  switch (k) {
    case Kind::Window: return plot::Marker::Cross;
    case Kind::RNN: return plot::Marker::TriangleDown;
    case Kind::LSTM: return plot::Marker::Triangle;
    case Kind::GRU: return plot::Marker::Square;
    case Kind::Seq2seq: return plot::Marker::Diamond;
    case Kind::Transformer: return plot::Marker::Circle;
  }
  return plot::Marker::Dot;
}

// Model i of n as a line with its markers. staggered: a marker at every
// n-th point only, from point i on, so that models on the same values do
// not cover each other's markers.
plot::Series model_series(const Result& r, size_t i, size_t n, bool staggered) {
  plot::Series s{r.label};
  s.color = color_of(r.entrant);
  s.points = true;
  s.marker = marker_of(r.entrant.kind);
  if (staggered) s.marker_every = n, s.first_marker = i;
  return s;
}

// Per-step losses averaged over consecutive windows: the curve of the
// expected loss without the noise of single batches.
plot::Series smoothed_loss(const Result& r) {
  plot::Series s{r.label};
  s.color = color_of(r.entrant);
  const size_t n = r.loss.size(), w = std::max<size_t>(1, n / 60);
  for (size_t a = 0; a < n; a += w) {
    const size_t b = std::min(n, a + w);
    s.x.push_back(0.5 * static_cast<double>(a + 1 + b));
    s.y.push_back(mean_of(r.loss, a, b));
  }
  return s;
}

plot::Report loss_plot(const std::vector<Result>& rs, const std::string& title, double chance, const std::string& chance_label,
               const std::string& path, bool with_val = false) {
  plot::LinePlot fig;
  fig.title = title;
  fig.x.label = "training step (Adam updates, the same batches for every model)";
  fig.y.label = with_val ? "loss (nats/char): lines training, dots validation" : "training loss (nats per scored symbol)";
  if (!with_val) fig.y.min = 0.0;
  for (const Result& r : rs) {
    fig.series.push_back(smoothed_loss(r));
    if (with_val && !r.val.empty()) {
      plot::Series v{""};  // same colour, no legend entry
      v.color = color_of(r.entrant);
      v.line = false;
      v.points = true;
      for (const auto& [step, loss] : r.val) {
        v.x.push_back(static_cast<double>(step));
        v.y.push_back(loss);
      }
      fig.series.push_back(v);
    }
  }
  fig.hlines = {{chance, chance_label, kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  return plot::write_png(fig, path);
}

plot::Report reach_plot(const std::vector<Result>& rs, int64_t K, const Architecture& a, const std::string& path) {
  plot::LinePlot fig;
  fig.title = "Recall: how far back each model remembers, as it trains";
  fig.x.label = "training step";
  fig.y = {.label = "reach: every k up to it recalled at >= 90%", .min = 0.0,
           .max = static_cast<double>(K) * 1.05};
  for (size_t i = 0; i < rs.size(); ++i) {
    const Result& r = rs[i];
    plot::Series s = model_series(r, i, rs.size(), true);
    for (const auto& [step, reach] : r.reach) {
      s.x.push_back(static_cast<double>(step));
      s.y.push_back(reach);
    }
    fig.series.push_back(s);
  }
  fig.hlines = {{static_cast<double>(a.window) - 1, "the MLP's window: k < " + std::to_string(a.window), kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  return plot::write_png(fig, path);
}

plot::Report recall_accuracy_plot(const std::vector<Result>& rs, const Architecture& a, const std::string& path) {
  plot::LinePlot fig;
  fig.title = "Recall: naming the marked symbol seen k steps ago";
  fig.x = {.label = "distance k (steps back, log scale)", .log = true};
  fig.y = {.label = "accuracy (128 new streams per k)", .min = 0.0, .max = 1.05};
  for (size_t i = 0; i < rs.size(); ++i) {
    const Result& r = rs[i];
    plot::Series s = model_series(r, i, rs.size(), true);
    for (size_t k = 1; k <= r.accuracy.size(); ++k) {
      s.x.push_back(static_cast<double>(k));
      s.y.push_back(r.accuracy[k - 1]);
    }
    fig.series.push_back(s);
  }
  fig.hlines = {{1.0 / kSymbols, "chance (1/8)", kGrey}};
  fig.vlines = {{static_cast<double>(a.window) - 0.5, "the MLP's window ends", kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  return plot::write_png(fig, path);
}

plot::Report reverse_accuracy_plot(const std::vector<Result>& rs, int64_t L, const std::string& path) {
  plot::LinePlot fig;
  fig.title = "Reverse " + std::to_string(L) + " symbols: accuracy at each output position";
  fig.x = {.label = "output position i (a stream model reads its source 2i+1 steps back)",
           .min = -0.3, .max = static_cast<double>(L) - 0.7};
  fig.y = {.label = "accuracy (256 new sequences)", .min = 0.0, .max = 1.05};
  for (size_t m = 0; m < rs.size(); ++m) {
    const Result& r = rs[m];
    plot::Series s = model_series(r, m, rs.size(), false);
    for (size_t i = 0; i < r.accuracy.size(); ++i) {
      s.x.push_back(static_cast<double>(i));
      s.y.push_back(r.accuracy[i]);
    }
    fig.series.push_back(s);
  }
  fig.hlines = {{1.0 / kSymbols, "chance (1/8)", kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  return plot::write_png(fig, path);
}

plot::Report gradient_plot(const std::vector<Result>& rs, bool trained, int64_t K, int64_t steps, const std::string& path) {
  plot::LinePlot fig;
  fig.title = trained ? "Gradient through time after " + std::to_string(steps) + " steps on recall"
                      : std::string("Gradient through time at initialisation");
  fig.x.label = "distance d from the scored output (steps back in time)";
  fig.y = {.label = "|dloss/dh_t| / |dloss/dh_T|, 64 streams", .min = 1e-16, .max = 100.0, .log = true};
  for (const Result& r : rs) {
    const std::vector<double>& g = trained ? r.grad_trained : r.grad_init;
    if (g.empty()) continue;
    plot::Series s{r.label + ", h_t"};
    s.color = color_of(r.entrant);
    for (size_t d = 0; d < g.size(); ++d) {
      s.x.push_back(static_cast<double>(d));
      s.y.push_back(g[d]);
    }
    fig.series.push_back(s);
    const std::vector<double>& c = trained ? r.grad_c_trained : r.grad_c_init;
    if (!c.empty()) {
      plot::Series sc{r.label + ", cell state c_t"};
      sc.color = color_of(r.entrant);
      sc.line = false;
      sc.points = true;
      for (size_t d = 0; d < c.size(); ++d) {
        sc.x.push_back(static_cast<double>(d));
        sc.y.push_back(c[d]);
      }
      fig.series.push_back(sc);
    }
  }
  plot::Series ref{"0.5^d (0.5^10 = 0.00098)"};
  ref.color = kGrey;
  ref.width = 1.0;
  for (size_t d = 0; d < (rs.empty() ? 0 : rs.front().grad_init.size()); ++d) {
    ref.x.push_back(static_cast<double>(d));
    ref.y.push_back(std::pow(0.5, static_cast<double>(d)));
  }
  fig.series.push_back(ref);
  fig.vlines = {{10.0, "d = 10", kGrey}, {static_cast<double>(K), "d = K: the marked symbol", kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  return plot::write_png(fig, path);
}

plot::Report attention_plot(const Result& r, int64_t L, const std::string& path) {
  plot::Heatmap fig;
  fig.title = "Encoder-decoder attention on one reversal";
  fig.x_label = "source position j and its symbol (argmax on j = L-1-i at " + fmt("%.1f", 100 * r.alignment) +
                "% of 256 sequences' outputs)";
  fig.y_label = "output position i and the symbol it writes";
  fig.value_label = "attention weight a_ij";
  fig.values = r.heat;
  fig.rows = fig.cols = L;
  fig.min = 0.0;
  fig.max = 1.0;
  fig.diverging = false;
  auto letter = [](int64_t s) { return std::string(1, static_cast<char>('A' + s)); };
  for (int64_t j = 0; j < L; ++j) fig.col_names.push_back(std::to_string(j) + " " + letter(r.heat_src[j]));
  for (int64_t i = 0; i < L; ++i) fig.row_names.push_back(std::to_string(i) + " " + letter(r.heat_src[L - 1 - i]));
  fig.width = 900;
  fig.height = 760;
  return plot::write_png(fig, path);
}

// ms_per_step or ops_per_step against T, one line per model.
plot::Report timing_plot(const std::vector<Result>& rs, const std::vector<int64_t>& Ts, bool ops, int64_t budget,
                 const std::string& path) {
  plot::LinePlot fig;
  fig.title = ops ? "Op calls in one training step: T of them one after another"
                  : "Wall time of one training step, one model at a time";
  fig.x.log = true;
  fig.y = {.label = ops ? "forward ops + backward nodes per step" : "ms per step (1 thread)", .log = true};
  fig.x.label = "sequence length T (log scale; " + std::to_string(budget / 1000) + "k parameters, batch 32)";
  for (size_t m = 0; m < rs.size(); ++m) {
    const Result& r = rs[m];
    plot::Series s = model_series(r, m, rs.size(), false);
    for (size_t i = 0; i < Ts.size(); ++i) {
      s.x.push_back(static_cast<double>(Ts[i]));
      s.y.push_back(ops ? r.ops_per_step[i] : r.ms_per_step[i]);
    }
    fig.series.push_back(s);
  }
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  return plot::write_png(fig, path);
}

}  // namespace

std::vector<std::string> write_pictures(const Setup& s, const Races& races, int64_t vocab, const std::string& dir) {
  const Options& o = s.o;
  const std::string out = dir + "/";
  const std::vector<std::pair<std::string, plot::Report>> written = {
      {"recall_loss", loss_plot(races.recall, "Recall at distance k: training loss", std::log(8.0), "ln 8: guessing 1 of 8",
                                out + "recall_loss.png")},
      {"recall_accuracy", recall_accuracy_plot(races.recall, s.arch, out + "recall_accuracy.png")},
      {"recall_reach", reach_plot(races.recall, o.K, s.arch, out + "recall_reach.png")},
      {"gradient_init", gradient_plot(races.recall, false, o.K, o.recall_steps, out + "gradient_init.png")},
      {"gradient_trained", gradient_plot(races.recall, true, o.K, o.recall_steps, out + "gradient_trained.png")},
      {"reverse_loss", loss_plot(races.reverse, "Reverse " + std::to_string(o.L) + " symbols: training loss", std::log(8.0),
                                 "ln 8: guessing 1 of 8", out + "reverse_loss.png")},
      {"reverse_accuracy", reverse_accuracy_plot(races.reverse, o.L, out + "reverse_accuracy.png")},
      {"attention", attention_plot(find(races.reverse, Kind::Seq2seq), o.L, out + "attention.png")},
      {"text_loss", loss_plot(races.text, "Next character of tinyshakespeare: loss", std::log(static_cast<double>(vocab)),
                              "ln " + std::to_string(vocab) + ": a uniform guess", out + "text_loss.png", true)},
      {"step_time", timing_plot(races.timing, s.timing_T, false, o.text_budget, out + "step_time.png")},
      {"step_ops", timing_plot(races.timing, s.timing_T, true, o.text_budget, out + "step_ops.png")}};
  std::vector<std::string> problems;
  for (const auto& [name, report] : written)
    for (const std::string& p : plot::layout_problems(report)) problems.push_back(name + ".png: " + p);
  return problems;
}

}  // namespace lesson_c
