// plot/stacked_area.cpp: a stacked area: layers summed from the bottom up.
#include "plot/plot.h"

#include <plplot/plplot.h>

#include <cmath>

#include "base/error.h"
#include "plot/axes.h"
#include "plot/canvas.h"
#include "plot/figure.h"
#include "plot/legend.h"

namespace ember::plot {

namespace {

using namespace detail;

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

}  // namespace ember::plot
