// plot/plot.h: every kind of figure is written as a PNG that decodes to the
// asked size and has something drawn on it; data a plot cannot show (NaN,
// Inf, <= 0 on a log axis) is left out and counted; constant and huge series
// still get a usable range; bad figures and unwritable paths are errors that
// leave nothing behind. The layout: no two texts of a picture overlap (the
// examples' own pictures among them, log axes down to 1e-18), the boxes the
// Report gives are where the ink is, legend entries never look alike, a log
// axis of a few values labels them, an inside legend moves off the data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include "plot/plot.h"
#include "png_decode.h"
#include "test_util.h"

namespace {

using namespace ember;
namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ember_plot_test_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// The decoded picture has the asked size, is not blank (enough pixels that
// are not the white background) and has colour where colour was drawn.
void expect_picture(const std::string& path, int width, int height) {
  test::Png png = test::decode_png(path);
  ASSERT_TRUE(png.ok) << path << ": " << png.error;
  EXPECT_EQ(png.width, width);
  EXPECT_EQ(png.height, height);
  int64_t ink = 0;
  for (size_t i = 0; i + 2 < png.rgb.size(); i += 3)
    if (png.rgb[i] < 200 || png.rgb[i + 1] < 200 || png.rgb[i + 2] < 200) ++ink;
  EXPECT_GT(ink, int64_t{width} * height / 200) << path << " is nearly blank";
}

plot::LinePlot loss_like() {
  plot::LinePlot p;
  p.title = "loss";
  p.x.label = "step";
  p.y.label = "loss (nats)";
  plot::Series s{"train"};
  for (int i = 0; i < 100; ++i) {
    s.x.push_back(i);
    s.y.push_back(2 + std::exp(-i / 20.0));
  }
  p.series = {s};
  p.hlines = {{std::log(65.0), "ln V"}};
  return p;
}

TEST(Plot, LinePlotDecodesWithTheAskedSize) {
  TempDir dir;
  plot::LinePlot p = loss_like();
  p.width = 640;
  p.height = 400;
  plot::Report r = plot::write_png(p, dir.file("line.png"));
  EXPECT_EQ(r.skipped, 0);
  expect_picture(dir.file("line.png"), 640, 400);
  p.y.log = true;
  plot::write_png(p, dir.file("log.png"));
  expect_picture(dir.file("log.png"), 640, 400);
}

// Every cell is drawn where its row and column are, the last ones included
// (plimage colours the cells between its grid points: given only rows x cols
// values it would drop the last row and column and stretch the rest).
TEST(Plot, HeatmapCellsSitOnTheirRowAndColumn) {
  TempDir dir;
  plot::Heatmap h{.title = "cells", .x_label = "c", .y_label = "r", .value_label = "v"};
  h.rows = 4;
  h.cols = 3;
  h.min = 0;
  h.max = 1;
  h.diverging = false;  // 0 white, 1 dark blue
  h.values.assign(12, 0.0);
  for (auto [r, c] : {std::pair{0, 1}, {2, 0}, {3, 2}}) h.values[r * 3 + c] = 1.0;
  h.width = h.height = 400;
  const plot::Report r = plot::write_png(h, dir.file("cells.png"));
  test::Png png = test::decode_png(dir.file("cells.png"));
  ASSERT_TRUE(png.ok) << png.error;
  const plot::Box& a = r.plot_area;  // the map's cells fill the plot area
  EXPECT_GT(a.x1 - a.x0, 150);
  EXPECT_GT(a.y1 - a.y0, 150);
  for (int row = 0; row < 4; ++row)
    for (int col = 0; col < 3; ++col) {
      const int x = static_cast<int>(a.x0 + (a.x1 - a.x0) * (col + 0.5) / 3);
      const int y = static_cast<int>(a.y0 + (a.y1 - a.y0) * (row + 0.5) / 4);
      const int red = png.rgb[(static_cast<size_t>(y) * 400 + x) * 3];
      if (h.values[row * 3 + col] == 1.0)
        EXPECT_LT(red, 100) << "cell (" << row << ", " << col << ") should be dark";
      else
        EXPECT_GT(red, 200) << "cell (" << row << ", " << col << ") should be white";
    }
}

TEST(Plot, HeatmapStackedAreaAndBars) {
  TempDir dir;
  plot::Heatmap h{.title = "table", .x_label = "i", .y_label = "p", .value_label = "v"};
  h.rows = 16;
  h.cols = 8;
  for (int k = 0; k < 128; ++k) h.values.push_back(std::sin(k * 0.3));
  plot::write_png(h, dir.file("heat.png"));
  expect_picture(dir.file("heat.png"), h.width, h.height);

  plot::StackedArea a;
  a.title = "memory";
  a.x.label = "time";
  a.y.label = "MB";
  for (int i = 0; i < 10; ++i) a.xs.push_back(i);
  a.layers = {{"params", std::vector<double>(10, 0.0), std::vector<double>(10, 1.0)},
              {"grads", std::vector<double>(10, 0.0), std::vector<double>(10, 2.0)}};
  plot::write_png(a, dir.file("area.png"));
  expect_picture(dir.file("area.png"), a.width, a.height);

  plot::BarChart b;
  b.title = "time";
  b.y.label = "ms";
  b.names = {"a", "b"};
  b.values = {1, 3};
  plot::write_png(b, dir.file("bars.png"));
  expect_picture(dir.file("bars.png"), b.width, b.height);
}

// What the training loop can hand the loss plot after a diverging run.
TEST(Plot, NonFiniteHugeAndConstantSeriesAreDrawnOrCounted) {
  TempDir dir;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  plot::LinePlot p = loss_like();
  p.series[0].y[10] = nan;
  p.series[0].y[11] = inf;
  p.series[0].y[12] = -inf;
  EXPECT_EQ(plot::write_png(p, dir.file("nan.png")).skipped, 3);
  expect_picture(dir.file("nan.png"), p.width, p.height);

  for (double& v : p.series[0].y) v = 1e11;  // --lr 1e6 territory
  plot::write_png(p, dir.file("huge.png"));
  expect_picture(dir.file("huge.png"), p.width, p.height);

  for (double& v : p.series[0].y) v = 0.0;   // a one-character vocabulary: loss 0 throughout
  p.hlines = {{0.0, "ln 1 = 0"}};
  plot::write_png(p, dir.file("zero.png"));
  expect_picture(dir.file("zero.png"), p.width, p.height);
  p.y.log = true;                            // log of 0: nothing can be drawn, said so
  EXPECT_EQ(plot::write_png(p, dir.file("zero_log.png")).skipped, 100);

  // The extremes of double: a range that overflows (1e308 - -1e308 = inf),
  // tiny values, and a series that is NaN throughout.
  p.y.log = false;
  for (size_t i = 0; i < p.series[0].y.size(); ++i) p.series[0].y[i] = i % 2 ? 1e308 : -1e299;
  EXPECT_EQ(plot::write_png(p, dir.file("extreme.png")).skipped, 50);  // the 1e308s
  expect_picture(dir.file("extreme.png"), p.width, p.height);
  for (size_t i = 0; i < p.series[0].y.size(); ++i) p.series[0].y[i] = 1e-300 * static_cast<double>(i);
  p.y.log = true;
  EXPECT_EQ(plot::write_png(p, dir.file("tiny_log.png")).skipped, 1);  // the 0 at i = 0
  expect_picture(dir.file("tiny_log.png"), p.width, p.height);
  p.y.log = false;
  for (double& v : p.series[0].y) v = nan;
  EXPECT_EQ(plot::write_png(p, dir.file("all_nan.png")).skipped, 100);
  expect_picture(dir.file("all_nan.png"), p.width, p.height);

  plot::LinePlot empty;
  empty.title = "nothing yet";
  plot::write_png(empty, dir.file("empty.png"));  // an empty frame, not an error
  test::Png png = test::decode_png(dir.file("empty.png"));
  EXPECT_TRUE(png.ok);
}

TEST(Plot, BadFiguresAndPathsAreErrorsThatLeaveNothing) {
  TempDir dir;
  plot::LinePlot p = loss_like();
  p.series[0].y.pop_back();
  test::expect_error([&] { plot::write_png(p, dir.file("bad.png")); }, "plot", {"\"loss\"", "100 x values", "99 y values"});
  plot::Heatmap h{.title = "short"};
  h.rows = 2;
  h.cols = 2;
  h.values = {1, 2, 3};
  test::expect_error([&] { plot::write_png(h, dir.file("bad.png")); }, "plot", {"\"short\"", "2 x 2", "4 values"});
  // rows x cols beyond int64: the size check itself must not overflow (the
  // product wraps to 0 here, which an empty list of values would match).
  plot::Heatmap huge{.title = "huge"};
  huge.rows = int64_t{1} << 32;
  huge.cols = int64_t{1} << 32;
  test::expect_error([&] { plot::write_png(huge, dir.file("bad.png")); }, "plot",
                     {"\"huge\"", "4294967296 x 4294967296", "overflows int64"});
  huge.rows = 0;
  test::expect_error([&] { plot::write_png(huge, dir.file("bad.png")); }, "plot", {"\"huge\"", "0 x 4294967296", "no cells"});
  h.values.push_back(4);
  h.min = h.max = 1;
  test::expect_error([&] { plot::write_png(h, dir.file("bad.png")); }, "plot", {"colour range"});
  plot::LinePlot tiny = loss_like();
  tiny.width = 10;
  test::expect_error([&] { plot::write_png(tiny, dir.file("bad.png")); }, "plot", {"10 x"});
  test::expect_error([&] { plot::write_png(loss_like(), dir.file("no/such/dir/x.png")); }, "plot", {"no/such/dir"});
  EXPECT_TRUE(fs::is_empty(dir.path)) << "no file and no temporary is left behind";
}


// ---- the layout ----

// The pictures the examples draw, with data of the same shape and range.

// lesson_c_race's gradient_init.png: a log axis from 1e-16 to 100 whose
// numbers (0.0001) are as wide as the margin; two grey dashed lines.
plot::LinePlot gradient_like() {
  plot::LinePlot p;
  p.title = "Gradient through time at initialisation";
  p.x.label = "distance d from the scored output (steps back in time)";
  p.y = {.label = "|dloss/dh_t| / |dloss/dh_T|, 64 streams", .min = 1e-16, .max = 100.0, .log = true};
  const double rates[] = {0.44, 0.58, 0.62, 0.5};
  const char* names[] = {"RNN, h_t", "LSTM, h_t", "GRU, h_t", "0.5^d (0.5^10 = 0.00098)"};
  for (int k = 0; k < 4; ++k) {
    plot::Series s{names[k]};
    for (int d = 0; d < 35; ++d) s.x.push_back(d), s.y.push_back(std::pow(rates[k], d));
    if (k == 3) s.color = plot::Color{140, 140, 140}, s.width = 1.0;
    p.series.push_back(s);
  }
  plot::Series dots{"LSTM, cell state c_t", p.series[1].x, p.series[2].y, plot::palette(1), false, true};
  p.series.push_back(dots);
  p.vlines = {{10.0, "d = 10", plot::Color{140, 140, 140}}, {30.0, "d = K: the marked symbol", plot::Color{140, 140, 140}}};
  p.legend = plot::Corner::Outside;
  p.width = 1000;
  return p;
}

// A log axis that ranges itself down to 1e-18.
plot::LinePlot tiny_log_like() {
  plot::LinePlot p;
  p.title = "vanishing";
  p.x.label = "step";
  p.y = {.label = "ratio", .log = true};
  plot::Series s{"ratio"};
  for (int i = 0; i <= 36; ++i) s.x.push_back(i), s.y.push_back(std::pow(10.0, -i / 2.0));
  p.series = {s};
  return p;
}

// recall_accuracy.png: a log x axis 1..30, accuracy 0..1.05, the chance
// line and the window's end, both grey and dashed.
plot::LinePlot recall_accuracy_like() {
  plot::LinePlot p;
  p.title = "Recall: naming the marked symbol seen k steps ago";
  p.x = {.label = "distance k (steps back, log scale)", .log = true};
  p.y = {.label = "accuracy (128 new streams per k)", .min = 0.0, .max = 1.05};
  for (const char* name : {"LSTM", "GRU", "Transformer", "RNN", "MLP, window of 8"}) {
    plot::Series s{name};
    for (int k = 1; k <= 30; ++k) s.x.push_back(k), s.y.push_back(name[0] == 'M' && k >= 8 ? 0.12 : 1.0);
    p.series.push_back(s);
  }
  const plot::Color grey{140, 140, 140};
  p.hlines = {{1.0 / 8, "chance (1/8)", grey}};
  p.vlines = {{7.5, "the MLP's window ends", grey}};
  p.legend = plot::Corner::Outside;
  p.width = 1000;
  return p;
}

// step_time.png: a log-log plot of a few lengths T.
plot::LinePlot timing_like(const std::vector<double>& Ts) {
  plot::LinePlot p;
  p.title = "Wall time of one training step, one model at a time";
  p.x = {.label = "sequence length T (log scale; 50k parameters, batch 32)", .log = true};
  p.y = {.label = "ms per step (1 thread)", .log = true};
  for (int m = 0; m < 3; ++m) {
    plot::Series s{"model " + std::to_string(m)};
    s.points = true;
    for (double T : Ts) s.x.push_back(T), s.y.push_back((m + 1) * 0.6 * T);
    p.series.push_back(s);
  }
  p.legend = plot::Corner::Outside;
  p.width = 1000;
  return p;
}

// train_gpt's loss.png after a short run: the training loss falls from the
// top left to the bottom right, the legend asked for at the right edge.
plot::LinePlot gpt_loss_like() {
  plot::LinePlot p;
  p.title = "Training a character-level GPT";
  p.x.label = "step (optimizer updates)";
  p.y.label = "cross-entropy loss (nats per character)";
  plot::Series train{"training loss (one batch)"}, val{"validation loss"};
  train.line = false;
  train.points = true;
  train.color = plot::Color{160, 160, 160};
  val.points = true;
  for (int i = 1; i <= 30; ++i) train.x.push_back(i), train.y.push_back(4.2 - 0.03 * i);
  for (int i : {0, 15, 30}) val.x.push_back(i), val.y.push_back(4.18 - 0.025 * i);
  p.series = {train, val};
  p.hlines = {{std::log(65.0), "ln V = 4.17 (a uniform guess over 65 characters)"}};
  p.legend = plot::Corner::Right;
  return p;
}

// inside_a_step's memory.png: layers, and a reference line with a label of two lines.
plot::StackedArea memory_like() {
  plot::StackedArea a;
  a.title = "Live tensor memory during one training step";
  a.x.label = "time (ms)";
  a.y.label = "live tensor memory (MB)";
  for (int i = 0; i < 50; ++i) a.xs.push_back(i * 0.15);
  for (const char* name : {"parameters", "gradients", "optimizer state", "saved for backward", "temporaries"}) {
    plot::Series layer{name};
    for (int i = 0; i < 50; ++i) layer.y.push_back(0.05 + 0.02 * std::sin(i * 0.3 + name[0]));
    a.layers.push_back(layer);
  }
  a.vlines = {{6.9, "program peak 0.46 MB,\nduring AdamW.step"}};
  a.legend = plot::Corner::Outside;
  a.width = 1100;
  return a;
}

// lesson_c_race's attention.png: names on both axes, a long x label.
plot::Heatmap attention_like() {
  plot::Heatmap h{.title = "Encoder-decoder attention on one reversal",
                  .x_label = "source position j and its symbol (argmax on j = L-1-i at 98.1% of 256 sequences' outputs)",
                  .y_label = "output position i and the symbol it writes",
                  .value_label = "attention weight a_ij"};
  h.rows = h.cols = 10;
  for (int i = 0; i < 100; ++i) h.values.push_back(i % 11 == 0 ? 0.9 : 0.01);
  for (int j = 0; j < 10; ++j) h.col_names.push_back(std::to_string(j) + " " + std::string(1, static_cast<char>('A' + j)));
  h.row_names = h.col_names;
  h.min = 0;
  h.max = 1;
  h.diverging = false;
  h.width = 900;
  h.height = 760;
  return h;
}

std::string problems_of(const plot::Report& r) {
  std::string all;
  for (const std::string& p : plot::layout_problems(r)) all += "\n  " + p;
  return all;
}

std::vector<std::string> texts_of(const plot::Report& r, plot::TextBox::Kind kind) {
  std::vector<std::string> out;
  for (const plot::TextBox& t : r.texts)
    if (t.kind == kind) out.push_back(t.text);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// Every picture the examples draw, and the extremes: no text runs into
// another, none leaves the picture or covers the data, the legend covers no
// other text; and the numbers are there (a test that drops them all would
// pass the overlap check trivially).
TEST(Plot, NoTwoTextsOfAPictureOverlap) {
  TempDir dir;
  using Kind = plot::TextBox::Kind;
  const plot::Report gradient = plot::write_png(gradient_like(), dir.file("gradient.png"));
  EXPECT_EQ(problems_of(gradient), "");
  const std::vector<std::string> y_numbers = texts_of(gradient, Kind::TickLabel);
  for (const char* v : {"1e-16", "1e-12", "1e-08", "0.0001", "1", "100"}) EXPECT_TRUE(has(y_numbers, v)) << v;
  EXPECT_TRUE(has(texts_of(gradient, Kind::AxisLabel), "|dloss/dh_t| / |dloss/dh_T|, 64 streams"));
  EXPECT_TRUE(has(texts_of(gradient, Kind::Title), "Gradient through time at initialisation"));
  EXPECT_EQ(texts_of(gradient, Kind::LegendText).size(), 7u);

  const plot::Report tiny = plot::write_png(tiny_log_like(), dir.file("tiny.png"));
  EXPECT_EQ(problems_of(tiny), "");
  EXPECT_TRUE(has(texts_of(tiny, Kind::TickLabel), "1e-18"));

  std::vector<std::pair<std::string, plot::Report>> others = {
      {"recall accuracy", plot::write_png(recall_accuracy_like(), dir.file("acc.png"))},
      {"timing", plot::write_png(timing_like({16, 64}), dir.file("t2.png"))},
      {"timing, 5 lengths", plot::write_png(timing_like({16, 32, 64, 128, 256}), dir.file("t5.png"))},
      {"gpt loss", plot::write_png(gpt_loss_like(), dir.file("gpt.png"))},
      {"loss", plot::write_png(loss_like(), dir.file("loss.png"))},
      {"memory", plot::write_png(memory_like(), dir.file("memory.png"))},
      {"attention", plot::write_png(attention_like(), dir.file("attention.png"))}};
  plot::LinePlot huge = loss_like();
  for (double& v : huge.series[0].y) v *= 1e11;
  others.push_back({"huge", plot::write_png(huge, dir.file("huge.png"))});
  plot::Heatmap table{.title = "Sinusoidal positional table, D = 32, L = 128", .x_label = "dimension i",
                      .y_label = "position p", .value_label = "table[p, i]"};
  table.rows = 128;
  table.cols = 32;
  for (int k = 0; k < 128 * 32; ++k) table.values.push_back(std::sin(k * 0.1));
  others.push_back({"table", plot::write_png(table, dir.file("table.png"))});
  plot::BarChart bars;
  bars.title = "time per op";
  bars.y.label = "ms";
  bars.names = {"matmul", "softmax", "layer_norm"};
  bars.values = {3, 1, 0.5};
  others.push_back({"bars", plot::write_png(bars, dir.file("bars.png"))});
  for (const auto& [name, r] : others) {
    EXPECT_EQ(problems_of(r), "") << name;
    EXPECT_GE(texts_of(r, Kind::TickLabel).size(), 3u) << name;
  }
}

// The checker itself finds what it should: overlapping texts, a text out of
// the picture or over the data, a text under the legend, look-alike entries.
TEST(Plot, LayoutProblemsNamesWhatIsWrong) {
  plot::Report r;
  r.width = 200;
  r.height = 100;
  r.plot_area = {50, 10, 190, 80};
  r.legend_box = {120, 20, 180, 40};
  using Kind = plot::TextBox::Kind;
  r.texts = {{Kind::AxisLabel, "label", {10, 30, 25, 70}},
             {Kind::TickLabel, "0.0001", {20, 40, 48, 50}},  // runs into the label
             {Kind::Title, "title", {-5, 0, 40, 8}},         // out of the picture
             {Kind::TickLabel, "7", {45, 60, 55, 70}},       // over the data
             {Kind::LegendText, "a", {125, 22, 150, 30}},    // inside the legend: fine
             {Kind::LegendText, "b", {125, 32, 185, 38}}};   // sticks out of it
  r.legend = {{"a", {1, 2, 3}, true}, {"b", {1, 2, 3}, true}};
  const std::vector<std::string> want = {"axis label \"label\" and tick label \"0.0001\" overlap",
                                         "title \"title\" is not inside the picture",
                                         "tick label \"7\" is over the plot area",
                                         "legend text \"b\" sticks out of the legend's frame",
                                         "legend entries \"a\" and \"b\" look alike"};
  EXPECT_EQ(plot::layout_problems(r), want);
  r.legend[1].dash = plot::Dash::Dotted;  // told apart
  EXPECT_EQ(plot::layout_problems(r).size(), 4u);
}

// A bar whose name would touch its neighbour's is drawn without it; the
// Report keeps the name and the check says so. A wider picture has room for
// every name. A text cut short ("..") is a fault too.
TEST(Plot, LayoutProblemsNameABarWithoutItsNameAndACutText) {
  TempDir dir;
  plot::BarChart bars;
  bars.title = "what rank 0 keeps";
  bars.y.label = "MiB";
  for (const char* n : {"1: DDP", "1: ZeRO-1", "1: ZeRO-2", "2: DDP", "2: ZeRO-1", "2: ZeRO-2"}) bars.names.push_back(n);
  bars.values = {9, 9, 9, 9, 7, 6};
  bars.width = 300;
  const plot::Report narrow = plot::write_png(bars, dir.file("narrow.png"));
  ASSERT_FALSE(narrow.names_left_out.empty());
  EXPECT_NE(problems_of(narrow).find("tick label \"" + narrow.names_left_out[0] + "\" was left out"), std::string::npos)
      << problems_of(narrow);
  bars.width = 1300;
  const plot::Report wide = plot::write_png(bars, dir.file("wide.png"));
  EXPECT_TRUE(wide.names_left_out.empty());
  EXPECT_EQ(problems_of(wide), "");

  plot::Report r;
  r.width = 200;
  r.height = 100;
  r.legend_box = {100, 10, 190, 40};
  r.texts = {{plot::TextBox::Kind::LegendText, "during blocks.2.fc2.matmul (MatmulB..", {105, 12, 185, 20}}};
  EXPECT_EQ(plot::layout_problems(r),
            std::vector<std::string>{"legend text \"during blocks.2.fc2.matmul (MatmulB..\" is cut short"});
}

// The boxes of the Report are where the text is drawn: every dark pixel
// outside the plot area (its frame) and the legend lies in a text's box, and
// every box has ink in it.
TEST(Plot, TextBoxesHoldTheTextsInk) {
  TempDir dir;
  plot::BarChart bars;
  bars.title = "time per op (ms)";
  bars.y = {.label = "milliseconds per call", .log = true};
  bars.names = {"matmul", "softmax", "layer_norm", "gelu"};
  bars.values = {3, 0.2, 0.0004, 0.05};
  const std::vector<std::pair<std::string, plot::Report>> figures = {
      {"gradient", plot::write_png(gradient_like(), dir.file("gradient.png"))},
      {"bars", plot::write_png(bars, dir.file("bars.png"))}};
  for (const auto& [name, r] : figures) {
    const test::Png png = test::decode_png(dir.file(name + ".png"));
    ASSERT_TRUE(png.ok) << png.error;
    std::vector<int64_t> ink(r.texts.size(), 0);
    int64_t stray = 0;
    for (int y = 0; y < png.height; ++y)
      for (int x = 0; x < png.width; ++x) {
        const uint8_t* p = &png.rgb[(static_cast<size_t>(y) * png.width + x) * 3];
        if (std::max({p[0], p[1], p[2]}) > 120) continue;  // not the text's dark grey
        auto in = [&](const plot::Box& b, double m) { return x + 0.5 >= b.x0 - m && x + 0.5 <= b.x1 + m && y + 0.5 >= b.y0 - m && y + 0.5 <= b.y1 + m; };
        if (in(r.plot_area, 2) || in(r.legend_box, 1)) continue;
        bool inside = false;
        for (size_t i = 0; i < r.texts.size(); ++i)
          if (in(r.texts[i].box, 1)) inside = true, ++ink[i];
        stray += !inside;
      }
    EXPECT_EQ(stray, 0) << name << ": dark pixels outside every text's box";
    for (size_t i = 0; i < r.texts.size(); ++i) {
      if (r.texts[i].kind != plot::TextBox::Kind::LegendText) {
        EXPECT_GT(ink[i], 10) << name << ": \"" << r.texts[i].text << "\"";
      }
    }
  }
}

// Two grey dashed reference lines (d = 10 and d = K; chance and the window's
// end) get two patterns, and two series given the same look get two too.
TEST(Plot, NoTwoLegendEntriesLookAlike) {
  TempDir dir;
  const plot::Report g = plot::write_png(gradient_like(), dir.file("g.png"));
  ASSERT_EQ(g.legend.size(), 7u);
  const plot::LegendKey &d10 = g.legend[5], &dK = g.legend[6];
  EXPECT_EQ(d10.text, "d = 10");
  EXPECT_EQ(dK.text, "d = K: the marked symbol");
  EXPECT_TRUE(d10.color == dK.color);
  EXPECT_EQ(d10.dash, plot::Dash::Dashed);
  EXPECT_NE(dK.dash, plot::Dash::Dashed);
  const plot::Report a = plot::write_png(recall_accuracy_like(), dir.file("a.png"));
  ASSERT_EQ(a.legend.size(), 7u);
  EXPECT_NE(a.legend[5].dash, a.legend[6].dash) << "chance and the window's end";

  plot::LinePlot same = loss_like();
  same.series.push_back(same.series[0]);
  same.series[1].label = "again";
  same.series[0].color = same.series[1].color = plot::palette(0);
  plot::LinePlot dots = same;
  for (plot::Series& s : dots.series) s.line = false, s.points = true;
  for (const plot::LinePlot& p : {same, dots}) {
    const plot::Report r = plot::write_png(p, dir.file("same.png"));
    EXPECT_EQ(problems_of(r), "");
    ASSERT_EQ(r.legend.size(), 3u);
    EXPECT_TRUE(r.legend[0].dash != r.legend[1].dash || r.legend[0].marker != r.legend[1].marker);
  }
}

// A log axis of two or five lengths T labels each T under its point.
TEST(Plot, AFewValuesOnALogAxisAreEachLabelled) {
  TempDir dir;
  for (const std::vector<double>& Ts : {std::vector<double>{16, 64}, std::vector<double>{16, 32, 64, 128, 256}}) {
    const plot::Report r = plot::write_png(timing_like(Ts), dir.file("t.png"));
    for (double T : Ts) {
      const std::string text = std::to_string(static_cast<int>(T));
      const double x = r.plot_area.x0 + (std::log10(T) - r.x_lo) / (r.x_hi - r.x_lo) * (r.plot_area.x1 - r.plot_area.x0);
      bool found = false;
      for (const plot::TextBox& t : r.texts)
        found = found || (t.kind == plot::TextBox::Kind::TickLabel && t.text == text && t.box.y0 > r.plot_area.y1 &&
                          std::abs((t.box.x0 + t.box.x1) / 2 - x) < 3);
      EXPECT_TRUE(found) << "no tick label " << text << " under x = " << x;
    }
  }
}

// An inside legend asked for where the data is moves to where it is not.
TEST(Plot, AnInsideLegendMovesOffTheData) {
  TempDir dir;
  const plot::LinePlot p = gpt_loss_like();
  const plot::Report r = plot::write_png(p, dir.file("gpt.png"));
  const plot::Box& a = r.plot_area;
  auto px = [&](double v) { return a.x0 + (v - r.x_lo) / (r.x_hi - r.x_lo) * (a.x1 - a.x0); };
  auto py = [&](double v) { return a.y1 - (v - r.y_lo) / (r.y_hi - r.y_lo) * (a.y1 - a.y0); };
  const plot::Box& l = r.legend_box;
  EXPECT_TRUE(l.x0 >= a.x0 && l.x1 <= a.x1 && l.y0 >= a.y0 && l.y1 <= a.y1) << "inside the frame";
  for (const plot::Series& s : p.series)
    for (size_t i = 0; i < s.x.size(); ++i) {
      const double x = px(s.x[i]), y = py(s.y[i]);
      EXPECT_FALSE(x >= l.x0 && x <= l.x1 && y >= l.y0 && y <= l.y1) << s.label << " point " << i << " is under the legend";
    }
  EXPECT_GT(l.y0, py(std::log(65.0))) << "the ln V line runs above it";
}

}  // namespace
