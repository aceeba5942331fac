// plot/line_plot.cpp: a line plot. Each figure goes the same way:
// the data's ranges and ticks, the looks of its series (told apart), the
// legend's size, the frame laid out around all of that (axes.h), then the
// drawing: frame, data, legend.
#include "plot/plot.h"

#include <plplot/plplot.h>

#include <algorithm>

#include "base/error.h"
#include "plot/axes.h"
#include "plot/canvas.h"
#include "plot/figure.h"
#include "plot/legend.h"

namespace ember::plot {

namespace {

using namespace detail;

Look series_look(const Series& s, Color fallback) {
  return {s.color.value_or(fallback), s.line, s.points, false, s.dash, s.marker, s.width};
}
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

}  // namespace ember::plot
