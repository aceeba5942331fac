// plot/plot.h: every kind of figure is written as a PNG that decodes to the
// asked size and has something drawn on it; data a plot cannot show (NaN,
// Inf, <= 0 on a log axis) is left out and counted; constant and huge series
// still get a usable range; bad figures and unwritable paths are errors that
// leave nothing behind.
#include <gtest/gtest.h>

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
// values it used to drop the last row and column and stretch the rest).
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
  plot::write_png(h, dir.file("cells.png"));
  test::Png png = test::decode_png(dir.file("cells.png"));
  ASSERT_TRUE(png.ok) << png.error;
  // the map's viewport: x 0.12 .. 0.84 of the width, y 0.10 .. 0.87 from the top
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) {
      const int x = static_cast<int>(400 * (0.12 + 0.72 * (c + 0.5) / 3));
      const int y = static_cast<int>(400 * (0.10 + 0.77 * (r + 0.5) / 4));
      const int red = png.rgb[(static_cast<size_t>(y) * 400 + x) * 3];
      if (h.values[r * 3 + c] == 1.0)
        EXPECT_LT(red, 100) << "cell (" << r << ", " << c << ") should be dark";
      else
        EXPECT_GT(red, 200) << "cell (" << r << ", " << c << ") should be white";
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

}  // namespace
