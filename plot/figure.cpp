// plot/figure.cpp: the figures' shared pieces (figure.h), the palette, and
// layout_problems, the check of a Report.
#include "plot/figure.h"

#include <plplot/plplot.h>

#include <algorithm>
#include <cmath>

namespace ember::plot {

Color palette(size_t i) {
  // The first ten are matplotlib's tab10; then six darker ones, so that up
  // to sixteen series (the roofline's twelve kernels) each get a colour.
  static const Color colors[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},   {148, 103, 189},
                                 {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34},  {23, 190, 207},
                                 {0, 0, 128},    {128, 0, 0},     {0, 100, 0},     {184, 134, 11},  {0, 128, 128},
                                 {85, 26, 139}};
  return colors[i % (sizeof colors / sizeof colors[0])];
}

namespace detail {

AxisSpec axis_spec(const Axis& a, Range r, const std::vector<double>& data) {
  AxisSpec s{a.label, r, {}, a.log, 0};
  s.ticks = a.log ? log_ticks(r, data) : linear_ticks(r, &s.step);
  return s;
}

void record_window(Report& r, const Mapping& m) {
  r.plot_area = m.area;
  r.x_lo = m.rx.lo, r.x_hi = m.rx.hi, r.y_lo = m.ry.lo, r.y_hi = m.ry.hi;
  r.x_log = m.xlog, r.y_log = m.ylog;
}

Look ref_look(const RefLine& r, Color fallback) { return {r.color.value_or(fallback), true, false, false, r.dash, Marker::Dot, 1.5}; }

void draw_ref_line(double at, bool horizontal, Range rx, Range ry, const Look& look, int color) {
  plcol0(color);
  plwidth(look.width);
  set_dash(look.dash);
  PLFLT x[2] = {rx.lo, rx.hi}, y[2] = {at, at};
  if (!horizontal) x[0] = x[1] = at, y[0] = ry.lo, y[1] = ry.hi;
  plline(2, x, y);
  set_dash(Dash::Solid);
}

std::vector<Tick> cell_ticks(const std::vector<std::string>& names, Range r, double* step) {
  if (names.empty()) return linear_ticks(r, step);
  std::vector<Tick> ticks;
  for (size_t i = 0; i < names.size(); ++i) ticks.push_back({static_cast<double>(i) + 0.5, names[i]});
  return ticks;
}

}  // namespace detail

using namespace detail;

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
  for (const std::string& n : r.names_left_out)
    problems.push_back("tick label \"" + n + "\" was left out: it would touch its neighbour (a wider picture or a "
                       "shorter name)");
  for (const TextBox& t : r.texts)
    if (t.text.size() >= 2 && (t.text.ends_with("..") || t.text.ends_with("\u2026")))
      problems.push_back(name(t) + " is cut short");
  for (size_t i = 0; i < r.legend.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const LegendKey &a = r.legend[j], &b = r.legend[i];
      const Look la{a.color, a.line, a.points, a.filled, a.dash, a.marker}, lb{b.color, b.line, b.points, b.filled, b.dash, b.marker};
      const std::string both = "legend entries \"" + a.text + "\" and \"" + b.text + "\"";
      if (alike(la, lb)) problems.push_back(both + " look alike");
    }
  return problems;
}

}  // namespace ember::plot
