// plot/bar_chart.cpp: a bar chart: grouped, or stacked.
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
  x.names = !p.names.empty();
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
  x.names = !p.names.empty();
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

}  // namespace ember::plot
