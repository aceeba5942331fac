// plot/heatmap.cpp: a heatmap: cells coloured by value, with a colour bar.
#include "plot/plot.h"

#include <plplot/plplot.h>

#include <algorithm>
#include <cmath>

#include "base/checked.h"
#include "base/error.h"
#include "plot/axes.h"
#include "plot/canvas.h"
#include "plot/figure.h"

namespace ember::plot {

namespace {

using namespace detail;

// Colour map 1, the heatmap's value scale.
void value_colours(bool diverging) {
  if (diverging) {
    PLFLT at[] = {0, 0.5, 1}, r[] = {33 / 255.0, 1, 178 / 255.0}, g[] = {102 / 255.0, 1, 24 / 255.0},
          b[] = {172 / 255.0, 1, 43 / 255.0};
    plscmap1l(1, 3, at, r, g, b, nullptr);
  } else {
    PLFLT at[] = {0, 1}, r[] = {1, 8 / 255.0}, g[] = {1, 48 / 255.0}, b[] = {1, 107 / 255.0};
    plscmap1l(1, 2, at, r, g, b, nullptr);
  }
}

// The cells. plimage treats its nx x ny values as the corners of (nx-1) x
// (ny-1) cells, each coloured by its lower corner: given only rows x cols
// values it would stretch them and drop the last row and column. So it gets
// one more of each (copies of the last), and cell (r, c) covers [c, c+1] x
// [r, r+1]. Returns the cells that were not finite (drawn as the middle).
int64_t draw_cells(const Heatmap& p) {
  int64_t skipped = 0;
  const int64_t nx = p.cols + 1, ny = p.rows + 1;
  std::vector<PLFLT> cells(static_cast<size_t>(nx * ny));
  std::vector<PLFLT*> columns(static_cast<size_t>(nx));  // PLplot indexes [x][y]
  for (int64_t c = 0; c < nx; ++c) {
    columns[c] = &cells[static_cast<size_t>(c * ny)];
    for (int64_t r = 0; r < ny; ++r) {
      double v = p.values[static_cast<size_t>(std::min(r, p.rows - 1) * p.cols + std::min(c, p.cols - 1))];
      if (!std::isfinite(v)) {
        if (r < p.rows && c < p.cols) ++skipped;
        v = (p.min + p.max) / 2;
      }
      columns[c][r] = std::clamp(v, p.min, p.max);
    }
  }
  const double w = static_cast<double>(p.cols), h = static_cast<double>(p.rows);
  plimage(columns.data(), static_cast<PLINT>(nx), static_cast<PLINT>(ny), 0, w, 0, h, p.min, p.max, 0, w, 0, h);
  return skipped;
}

// The colour bar right of the map: | gap | bar | gap | numbers | gap | label (upwards) | pad |
struct ColourBar {
  std::vector<Tick> ticks;
  double step = 0, widest = 0;
  TextSize label;
  double room(const Canvas& c) const {
    const double h = c.char_height();
    return 1.2 * h + 0.035 * c.width() + 0.5 * h + widest + 0.6 * h + label.height() + 0.6 * h;
  }
};
ColourBar colour_bar(Canvas& c, const Heatmap& p) {
  ColourBar bar;
  bar.ticks = linear_ticks({p.min, p.max}, &bar.step);
  std::vector<std::pair<std::string, double>> texts{{p.value_label, kTextScale}};
  for (const Tick& t : bar.ticks) texts.push_back({t.text, kTextScale});
  c.measure_all(texts);
  for (const Tick& t : bar.ticks) bar.widest = std::max(bar.widest, c.measure(t.text).advance());
  bar.label = c.measure(p.value_label);
  return bar;
}
void draw_colour_bar(Canvas& c, const Heatmap& p, const ColourBar& bar, const Box& area) {
  const double h = c.char_height();
  const Box b{area.x1 + 1.2 * h, area.y0, area.x1 + 1.2 * h + 0.035 * c.width(), area.y1};
  c.viewport(b, 0, 1, p.min, p.max);
  constexpr int kLevels = 64;
  std::vector<PLFLT> levels(2 * kLevels);
  PLFLT* columns[2] = {levels.data(), levels.data() + kLevels};
  for (int i = 0; i < kLevels; ++i) columns[0][i] = columns[1][i] = p.min + (p.max - p.min) * i / (kLevels - 1);
  plimage(columns, 2, kLevels, 0, 1, p.min, p.max, p.min, p.max, 0, 1, p.min, p.max);
  plcol0(kInk);
  plwidth(1);
  plbox("bc", 0, 0, "bcst", bar.step, 0);
  const double x = b.x1 + 0.5 * h;
  for (const Tick& t : bar.ticks) {
    const double at = (t.at - p.min) / (p.max - p.min);
    if (at > -1e-9 && at < 1 + 1e-9) c.text(TextBox::Kind::TickLabel, t.text, x, b.y1 - at * (b.y1 - b.y0), 0);
  }
  c.text(TextBox::Kind::AxisLabel, p.value_label, x + bar.widest + 0.6 * h + bar.label.above,
         keep_inside((b.y0 + b.y1) / 2, bar.label.advance(), 0, c.height()), 0.5, true);
}

}  // namespace

Report write_png(const Heatmap& p, const std::string& path) {
  EMBER_CHECK(p.rows > 0 && p.cols > 0, "plot",
              "\"" << p.title << "\": a heatmap of " << p.rows << " x " << p.cols << " has no cells");
  const std::string what = "\"" + p.title + "\": the cells of a heatmap of " + std::to_string(p.rows) + " x " +
                           std::to_string(p.cols);
  const int64_t n_cells = checked_mul(p.rows, p.cols, "plot", what.c_str());
  EMBER_CHECK(static_cast<int64_t>(p.values.size()) == n_cells, "plot",
              "\"" << p.title << "\": a heatmap of " << p.rows << " x " << p.cols << " needs " << n_cells << " values, got "
                   << p.values.size());
  EMBER_CHECK(std::isfinite(p.min) && std::isfinite(p.max) && p.min < p.max, "plot",
              "\"" << p.title << "\": colour range [" << p.min << ", " << p.max << "] is empty");
  EMBER_CHECK(p.row_names.empty() || static_cast<int64_t>(p.row_names.size()) == p.rows, "plot",
              "\"" << p.title << "\": " << p.row_names.size() << " row names for " << p.rows << " rows");
  EMBER_CHECK(p.col_names.empty() || static_cast<int64_t>(p.col_names.size()) == p.cols, "plot",
              "\"" << p.title << "\": " << p.col_names.size() << " column names for " << p.cols << " columns");
  Canvas c(p.width, p.height, p.title, path);
  value_colours(p.diverging);
  // Rows top to bottom: the window's y runs from rows (bottom) to 0 (top).
  AxisSpec x{p.x_label, {0, static_cast<double>(p.cols)}, {}, false, 0};
  AxisSpec y{p.y_label, {static_cast<double>(p.rows), 0}, {}, false, 0};
  x.ticks = cell_ticks(p.col_names, x.range, p.col_names.empty() ? &x.step : nullptr);
  y.ticks = cell_ticks(p.row_names, y.range, p.row_names.empty() ? &y.step : nullptr);
  x.names = !p.col_names.empty();
  y.names = !p.row_names.empty();
  const ColourBar bar = colour_bar(c, p);
  const Frame f = layout_frame(c, p.title, x, y, bar.room(c));
  c.viewport(f.area, x.range.lo, x.range.hi, y.range.lo, y.range.hi);
  Report& report = c.report();
  report.skipped = draw_cells(p);
  draw_frame(c, f, p.title, x, y, false);
  draw_colour_bar(c, p, bar, f.area);
  record_window(report, {f.area, x.range, y.range, false, false});
  Report out = report;
  c.write();
  return out;
}

}  // namespace ember::plot
