// plot/plot.cpp: the four figures. Each goes the same way: the data's
// ranges and ticks, the looks of its series (told apart), the legend's size,
// the frame laid out around all of that (axes.h), then the drawing: frame,
// data, legend. At the bottom, layout_problems: the check of a Report.
#include "plot/plot.h"

#include <plplot/plplot.h>

#include <algorithm>
#include <cmath>

#include "plot/axes.h"
#include "plot/canvas.h"
#include "plot/legend.h"
#include "tensor/error.h"
#include "tensor/shape.h"

namespace ember::plot {

Color palette(size_t i) {
  static const Color colors[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},  {148, 103, 189},
                                 {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  return colors[i % 10];
}

namespace {

using namespace detail;

// An axis of data with its ticks; data: the values plotted along it (a log
// axis of a few of them labels those).
AxisSpec axis_spec(const Axis& a, Range r, const std::vector<double>& data) {
  AxisSpec s{a.label, r, {}, a.log, 0};
  s.ticks = a.log ? log_ticks(r, data) : linear_ticks(r, &s.step);
  return s;
}

// From data to the picture's pixels, for a frame's plot area.
struct Mapping {
  Box area;
  Range rx, ry;
  bool xlog, ylog;
  double px(double v) const { return area.x0 + (to_axis(v, xlog) - rx.lo) / (rx.hi - rx.lo) * (area.x1 - area.x0); }
  double py(double v) const { return area.y1 - (to_axis(v, ylog) - ry.lo) / (ry.hi - ry.lo) * (area.y1 - area.y0); }
};

void record_window(Report& r, const Mapping& m) {
  r.plot_area = m.area;
  r.x_lo = m.rx.lo, r.x_hi = m.rx.hi, r.y_lo = m.ry.lo, r.y_hi = m.ry.hi;
  r.x_log = m.xlog, r.y_log = m.ylog;
}

// The looks of a figure's series and reference lines, told apart, with their
// colour indices, and the legend entries of the labelled ones.
struct Looks {
  std::vector<Look> looks;
  std::vector<std::string> labels;
  std::vector<int> colors;
  std::vector<LegendEntry> entries;
  void add(const Look& look, const std::string& label) {
    looks.push_back(look);
    labels.push_back(label);
  }
  void finish(Canvas& c) {
    tell_apart(looks, labels);
    for (size_t i = 0; i < looks.size(); ++i) {
      colors.push_back(c.color(looks[i].color));
      if (!labels[i].empty()) entries.push_back({labels[i], looks[i], colors[i]});
    }
  }
};
Look series_look(const Series& s, Color fallback) {
  return {s.color.value_or(fallback), s.line, s.points, false, s.dash, s.marker, s.width};
}
Look ref_look(const RefLine& r, Color fallback) { return {r.color.value_or(fallback), true, false, false, r.dash, Marker::Dot, 1.5}; }
const Color kRefGrey{90, 90, 90};

// Draws the finite runs of (x, y) as lines (a NaN breaks the line), or
// (markers = true) the series' markers; returns how many points were left out.
int64_t draw_series(const Series& s, bool xlog, bool ylog, const Look& look, int color, bool markers) {
  plcol0(color);
  plwidth(look.width);
  set_dash(look.dash);
  int64_t skipped = 0;
  std::vector<PLFLT> xs, ys, mx, my;
  auto flush = [&] {
    if (!markers && look.line && xs.size() >= 2) plline(static_cast<PLINT>(xs.size()), xs.data(), ys.data());
    xs.clear();
    ys.clear();
  };
  for (size_t i = 0; i < s.x.size(); ++i) {
    if (!shown(s.x[i], xlog) || !shown(s.y[i], ylog)) {
      ++skipped;
      flush();
      continue;
    }
    xs.push_back(to_axis(s.x[i], xlog));
    ys.push_back(to_axis(s.y[i], ylog));
    if (i >= s.first_marker && (i - s.first_marker) % std::max<size_t>(1, s.marker_every) == 0)
      mx.push_back(xs.back()), my.push_back(ys.back());
  }
  flush();
  set_dash(Dash::Solid);
  if (markers && look.points) draw_markers(mx, my, look);
  return skipped;
}

// A reference line across the frame's window, at `at` (axis units).
void draw_ref_line(double at, bool horizontal, Range rx, Range ry, const Look& look, int color) {
  plcol0(color);
  plwidth(look.width);
  set_dash(look.dash);
  PLFLT x[2] = {rx.lo, rx.hi}, y[2] = {at, at};
  if (!horizontal) x[0] = x[1] = at, y[0] = ry.lo, y[1] = ry.hi;
  plline(2, x, y);
  set_dash(Dash::Solid);
}

// How much of a line plot's data a legend in box would hide: its points in
// it, and the segments and reference lines through it.
int hidden(const Box& box, const LinePlot& p, const Mapping& m) {
  int n = 0;
  for (const Series& s : p.series) {
    bool have_last = false;
    double lx = 0, ly = 0;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!shown(s.x[i], p.x.log) || !shown(s.y[i], p.y.log)) {
        have_last = false;
        continue;
      }
      const double x = m.px(s.x[i]), y = m.py(s.y[i]);
      n += x >= box.x0 && x <= box.x1 && y >= box.y0 && y <= box.y1;
      if (s.line && have_last) n += crosses(box, lx, ly, x, y);
      lx = x, ly = y, have_last = true;
    }
  }
  for (const RefLine& r : p.hlines)
    if (shown(r.at, p.y.log)) n += crosses(box, m.area.x0, m.py(r.at), m.area.x1, m.py(r.at));
  for (const RefLine& r : p.vlines)
    if (shown(r.at, p.x.log)) n += crosses(box, m.px(r.at), m.area.y0, m.px(r.at), m.area.y1);
  return n;
}

void check_series(const Series& s, const std::string& title) {
  EMBER_CHECK(s.x.size() == s.y.size(), "plot",
              "\"" << title << "\": series \"" << s.label << "\" has " << s.x.size() << " x values but " << s.y.size()
                   << " y values");
}

}  // namespace

Report write_png(const LinePlot& p, const std::string& path) {
  for (const Series& s : p.series) check_series(s, p.title);
  Canvas c(p.width, p.height, p.title, path);
  std::vector<const std::vector<double>*> xs, ys;
  std::vector<double> hl, vl, all_x;
  for (const Series& s : p.series) {
    xs.push_back(&s.x);
    ys.push_back(&s.y);
    all_x.insert(all_x.end(), s.x.begin(), s.x.end());
  }
  for (const RefLine& r : p.hlines) hl.push_back(r.at);
  for (const RefLine& r : p.vlines) vl.push_back(r.at);
  ys.push_back(&hl);
  xs.push_back(&vl);
  const Range rx = axis_range(p.x, xs, false, p.title), ry = axis_range(p.y, ys, false, p.title);
  const AxisSpec x = axis_spec(p.x, rx, all_x), y = axis_spec(p.y, ry, {});

  Looks looks;
  for (size_t i = 0; i < p.series.size(); ++i) looks.add(series_look(p.series[i], palette(i)), p.series[i].label);
  std::vector<std::pair<const RefLine*, bool>> refs;  // (line, horizontal)
  for (const RefLine& r : p.hlines)
    if (shown(r.at, p.y.log)) refs.push_back({&r, true});
  for (const RefLine& r : p.vlines)
    if (shown(r.at, p.x.log)) refs.push_back({&r, false});
  for (const auto& [r, horizontal] : refs) looks.add(ref_look(*r, kRefGrey), r->label);
  looks.finish(c);

  const Size legend = legend_size(c, looks.entries);
  const bool outside = p.legend == Corner::Outside && !looks.entries.empty();
  const Frame f = layout_frame(c, p.title, x, y, outside ? outside_room(c, legend) : 0);
  draw_frame(c, f, p.title, x, y, true);
  Report& report = c.report();
  for (size_t i = 0; i < p.series.size(); ++i)  // the lines, the reference lines, then the markers over all
    report.skipped += draw_series(p.series[i], p.x.log, p.y.log, looks.looks[i], looks.colors[i], false);
  for (size_t k = 0; k < refs.size(); ++k) {
    const size_t i = p.series.size() + k;
    const bool horizontal = refs[k].second;
    draw_ref_line(to_axis(refs[k].first->at, horizontal ? p.y.log : p.x.log), horizontal, rx, ry, looks.looks[i],
                  looks.colors[i]);
  }
  for (size_t i = 0; i < p.series.size(); ++i)
    draw_series(p.series[i], p.x.log, p.y.log, looks.looks[i], looks.colors[i], true);
  const Mapping m{f.area, rx, ry, p.x.log, p.y.log};
  if (!looks.entries.empty())
    draw_legend(c, looks.entries,
                outside ? place_outside(c, f.area, legend)
                        : place_inside(f.area, legend, p.legend, [&](const Box& b) { return hidden(b, p, m); }));
  record_window(report, m);
  Report out = report;
  c.write();
  return out;
}

namespace {

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

// Names centred on their rows or columns, or numbers.
std::vector<Tick> cell_ticks(const std::vector<std::string>& names, Range r, double* step) {
  if (names.empty()) return linear_ticks(r, step);
  std::vector<Tick> ticks;
  for (size_t i = 0; i < names.size(); ++i) ticks.push_back({static_cast<double>(i) + 0.5, names[i]});
  return ticks;
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

namespace {

// How much of a stacked area a legend in box would hide: the x positions in
// its width where the stack reaches up into it, and the lines through it.
int hidden(const Box& box, const StackedArea& p, const std::vector<double>& top, const Mapping& m) {
  int n = 0;
  for (size_t i = 0; i < p.xs.size(); ++i) {
    const double x = m.px(p.xs[i]);
    n += x >= box.x0 && x <= box.x1 && m.py(top[i]) < box.y1;
  }
  for (const RefLine& r : p.vlines) n += crosses(box, m.px(r.at), m.area.y0, m.px(r.at), m.area.y1);
  return n;
}

// Layer k fills between bounds[k] and bounds[k + 1] (the running sums).
std::vector<std::vector<double>> stack_bounds(const StackedArea& p, int64_t& skipped) {
  std::vector<double> below(p.xs.size(), 0.0);
  std::vector<std::vector<double>> bounds{below};
  for (const Series& s : p.layers) {
    for (size_t i = 0; i < below.size(); ++i) {
      if (std::isfinite(s.y[i]) && s.y[i] > 0) below[i] += s.y[i];
      else if (!(s.y[i] == 0)) ++skipped;
    }
    bounds.push_back(below);
  }
  return bounds;
}

void draw_layer(const std::vector<double>& xs, const std::vector<double>& lower, const std::vector<double>& upper, int color) {
  // polygon: along the top edge, back along the bottom edge
  std::vector<PLFLT> px, py;
  for (size_t i = 0; i < xs.size(); ++i) px.push_back(xs[i]), py.push_back(upper[i]);
  for (size_t i = xs.size(); i-- > 0;) px.push_back(xs[i]), py.push_back(lower[i]);
  plcol0(color);
  plpsty(0);
  if (px.size() >= 3) plfill(static_cast<PLINT>(px.size()), px.data(), py.data());
}

}  // namespace

Report write_png(const StackedArea& p, const std::string& path) {
  for (const Series& s : p.layers)
    EMBER_CHECK(s.y.size() == p.xs.size(), "plot",
                "\"" << p.title << "\": layer \"" << s.label << "\" has " << s.y.size() << " values for " << p.xs.size()
                     << " x positions");
  EMBER_CHECK(!p.y.log, "plot", "\"" << p.title << "\": a stacked area cannot use a log axis");
  Canvas c(p.width, p.height, p.title, path);
  Report& report = c.report();
  const std::vector<std::vector<double>> bounds = stack_bounds(p, report.skipped);
  std::vector<const std::vector<double>*> xs{&p.xs}, ys{&bounds.back()};
  std::vector<double> vl;
  for (const RefLine& r : p.vlines) vl.push_back(r.at);
  xs.push_back(&vl);
  const Range rx = axis_range(p.x, xs, false, p.title), ry = axis_range(p.y, ys, true, p.title);
  const AxisSpec x = axis_spec(p.x, rx, p.xs), y = axis_spec(p.y, ry, {});
  Looks looks;  // the legend lists the top layer first, as the stack reads
  for (size_t k = p.layers.size(); k-- > 0;)
    looks.add({p.layers[k].color.value_or(palette(k)), false, false, true}, p.layers[k].label);
  for (const RefLine& r : p.vlines) looks.add(ref_look(r, Color{30, 30, 30}), r.label);
  looks.finish(c);
  const Size legend = legend_size(c, looks.entries);
  const bool outside = p.legend == Corner::Outside && !looks.entries.empty();
  const Frame f = layout_frame(c, p.title, x, y, outside ? outside_room(c, legend) : 0);
  draw_frame(c, f, p.title, x, y, true);
  const size_t n = p.layers.size();
  for (size_t k = 0; k < n; ++k) draw_layer(p.xs, bounds[k], bounds[k + 1], looks.colors[n - 1 - k]);
  for (size_t k = 0; k < p.vlines.size(); ++k)
    draw_ref_line(p.vlines[k].at, false, rx, ry, looks.looks[n + k], looks.colors[n + k]);
  plcol0(kInk);
  plwidth(1);
  plbox("bc", 0, 0, "bc", 0, 0);  // the frame again, over the fills
  const Mapping m{f.area, rx, ry, p.x.log, false};
  if (!looks.entries.empty())
    draw_legend(c, looks.entries,
                outside ? place_outside(c, f.area, legend)
                        : place_inside(f.area, legend, p.legend, [&](const Box& b) { return hidden(b, p, bounds.back(), m); }));
  record_window(report, m);
  Report out = report;
  c.write();
  return out;
}

namespace {
Report stacked_bars(const BarChart& p, const std::string& path) {
  const size_t bars = p.names.size();
  EMBER_CHECK(bars > 0 && p.values.empty() && !p.y.log, "plot",
              "\"" << p.title << "\": stacked bars need names, no values and a linear axis");
  std::vector<double> top(bars, 0.0);
  for (const Series& s : p.stacks) {
    EMBER_CHECK(s.y.size() == bars, "plot",
                "\"" << p.title << "\": layer \"" << s.label << "\" has " << s.y.size() << " values for " << bars << " bars");
    for (size_t i = 0; i < bars; ++i) {
      EMBER_CHECK(std::isfinite(s.y[i]) && s.y[i] >= 0, "plot",
                  "\"" << p.title << "\": layer \"" << s.label << "\" has " << s.y[i] << " at bar " << i << "; stacks are >= 0");
      top[i] += s.y[i];
    }
  }
  Canvas c(p.width, p.height, p.title, path);
  Report& report = c.report();
  std::vector<const std::vector<double>*> ys{&top};
  const Range ry = axis_range(p.y, ys, true, p.title);
  AxisSpec x{"", {0, static_cast<double>(bars)}, {}, false, 0};
  x.ticks = cell_ticks(p.names, x.range, nullptr);
  const AxisSpec y = axis_spec(p.y, ry, {});
  Looks looks;  // the legend lists the top layer first, as the stack reads
  for (size_t k = p.stacks.size(); k-- > 0;) looks.add({p.stacks[k].color.value_or(palette(k)), false, false, true}, p.stacks[k].label);
  looks.finish(c);
  const Size legend = legend_size(c, looks.entries);
  const Frame f = layout_frame(c, p.title, x, y, outside_room(c, legend));
  draw_frame(c, f, p.title, x, y, true);
  const size_t n = p.stacks.size();
  for (size_t i = 0; i < bars; ++i) {
    double base = 0;
    for (size_t k = 0; k < n; ++k) {
      const double v = base + p.stacks[k].y[i];
      const double x0 = static_cast<double>(i) + 0.15, x1 = static_cast<double>(i) + 0.85;
      PLFLT px[] = {x0, x1, x1, x0}, py[] = {base, base, v, v};
      plcol0(looks.colors[n - 1 - k]);
      plpsty(0);
      if (v > base) plfill(4, px, py);
      base = v;
    }
  }
  plcol0(kInk);
  plbox("bc", 0, 0, "bc", 0, 0);
  draw_legend(c, looks.entries, place_outside(c, f.area, legend));
  record_window(report, {f.area, x.range, ry, false, false});
  Report out = report;
  c.write();
  return out;
}
}  // namespace

Report write_png(const BarChart& p, const std::string& path) {
  if (!p.stacks.empty()) return stacked_bars(p, path);
  EMBER_CHECK(p.names.size() == p.values.size() && !p.values.empty(), "plot",
              "\"" << p.title << "\": " << p.names.size() << " names for " << p.values.size() << " bars");
  Canvas c(p.width, p.height, p.title, path);
  Report& report = c.report();
  std::vector<const std::vector<double>*> ys{&p.values};
  const Range ry = axis_range(p.y, ys, !p.y.log, p.title);
  const double n = static_cast<double>(p.values.size());
  AxisSpec x{"", {0, n}, {}, false, 0};
  x.ticks = cell_ticks(p.names, x.range, nullptr);
  const AxisSpec y = axis_spec(p.y, ry, {});
  const Frame f = layout_frame(c, p.title, x, y, 0);
  draw_frame(c, f, p.title, x, y, true);
  const int color = c.color(p.color.value_or(palette(0)));
  for (size_t i = 0; i < p.values.size(); ++i) {
    if (!shown(p.values[i], p.y.log)) {
      ++report.skipped;
      continue;
    }
    const double x0 = static_cast<double>(i) + 0.15, x1 = static_cast<double>(i) + 0.85;
    const double base = p.y.log ? ry.lo : 0.0, v = to_axis(p.values[i], p.y.log);
    PLFLT px[] = {x0, x1, x1, x0}, py[] = {base, base, v, v};
    plcol0(color);
    plpsty(0);
    plfill(4, px, py);
  }
  plcol0(kInk);
  plbox("bc", 0, 0, "bc", 0, 0);
  record_window(report, {f.area, x.range, ry, false, p.y.log});
  Report out = report;
  c.write();
  return out;
}

std::vector<std::string> layout_problems(const Report& r) {
  std::vector<std::string> problems;
  static const char* const kinds[] = {"title", "axis label", "tick label", "legend text"};
  auto name = [&](const TextBox& t) { return std::string(kinds[static_cast<int>(t.kind)]) + " \"" + t.text + "\""; };
  const bool has_legend = r.legend_box.x1 > r.legend_box.x0;
  auto inside = [](const Box& in, const Box& out) {
    return in.x0 >= out.x0 && in.x1 <= out.x1 && in.y0 >= out.y0 && in.y1 <= out.y1;
  };
  for (size_t i = 0; i < r.texts.size(); ++i) {
    const TextBox& t = r.texts[i];
    const bool legend = t.kind == TextBox::Kind::LegendText;
    if (!inside(t.box, {0, 0, static_cast<double>(r.width), static_cast<double>(r.height)}))
      problems.push_back(name(t) + " is not inside the picture");
    if (!legend && overlaps(t.box, r.plot_area)) problems.push_back(name(t) + " is over the plot area");
    if (!legend && has_legend && overlaps(t.box, r.legend_box)) problems.push_back(name(t) + " is under the legend");
    if (legend && !inside(t.box, r.legend_box)) problems.push_back(name(t) + " sticks out of the legend's frame");
    for (size_t j = 0; j < i; ++j)
      if (overlaps(t.box, r.texts[j].box)) problems.push_back(name(r.texts[j]) + " and " + name(t) + " overlap");
  }
  for (size_t i = 0; i < r.legend.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const LegendKey &a = r.legend[j], &b = r.legend[i];
      const Look la{a.color, a.line, a.points, a.filled, a.dash, a.marker}, lb{b.color, b.line, b.points, b.filled, b.dash, b.marker};
      if (alike(la, lb)) problems.push_back("legend entries \"" + a.text + "\" and \"" + b.text + "\" look alike");
    }
  return problems;
}

}  // namespace ember::plot
