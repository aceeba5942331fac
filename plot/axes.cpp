// plot/axes.cpp: ranges, ticks and their numbers, and the frame laid out
// around them (axes.h draws the frame's parts).
#include "plot/axes.h"

#include <plplot/plplot.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/error.h"

namespace ember::plot::detail {

namespace {
// The frame's spacing, in character heights.
constexpr double kPad = 0.6;        // from the picture's edge
constexpr double kNumberGap = 0.5;  // between the plot area and its numbers
constexpr double kLabelGap = 0.6;   // between the numbers and the axis label
constexpr double kTitleGap = 1.0;   // between the title and the plot area (half a y number stands above the area)
constexpr double kNumberSpace = 0.4;  // the least room between two numbers of an axis
}  // namespace

double to_axis(double v, bool log) { return log ? std::log10(v) : v; }
bool shown(double v, bool log) { return std::isfinite(v) && std::abs(v) <= kLargestDrawable && (!log || v > 0); }

Range axis_range(const Axis& axis, const std::vector<const std::vector<double>*>& data, bool start_at_zero,
                 const std::string& title) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto* v : data)
    for (double x : *v)
      if (shown(x, axis.log)) {
        lo = std::min(lo, to_axis(x, axis.log));
        hi = std::max(hi, to_axis(x, axis.log));
      }
  if (start_at_zero && !axis.log) lo = std::min(lo, 0.0);
  if (!std::isfinite(lo)) lo = 0, hi = 1;  // nothing to show: an empty frame
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    const double pad = std::max(std::abs(hi) * 0.1, axis.log ? 0.5 : 1.0);  // a constant series
    lo -= pad;
    hi += pad;
  } else {
    const double pad = 0.04 * (hi - lo);
    lo -= start_at_zero && lo == 0 ? 0 : pad;
    hi += pad;
  }
  if (axis.min) lo = to_axis(*axis.min, axis.log);
  if (axis.max) hi = to_axis(*axis.max, axis.log);
  EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo < hi, "plot",
              "\"" << title << "\": axis \"" << axis.label << "\" has an empty range [" << lo << ", " << hi << "]");
  return {lo, hi};
}

namespace {

// A tick's number: as many decimals as the spacing needs ("0.5", "1.0"), or
// in scientific notation with the digits that tell neighbours apart when the
// numbers are huge or tiny ("1.2e+11").
std::string number(double v, double step, double biggest) {
  if (std::abs(v) < step * 1e-9) v = 0;  // not -0.0 or 1e-17
  char buf[64];
  if (biggest >= 1e6 || biggest < 1e-4) {
    const int digits = std::clamp(static_cast<int>(std::floor(std::log10(biggest)) - std::floor(std::log10(step))) + 1, 1, 15);
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9))), v);
  }
  return buf;
}

std::string value_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::vector<Tick> linear_ticks(Range r, double* step) {
  const double lo = std::min(r.lo, r.hi), hi = std::max(r.lo, r.hi), span = hi - lo;
  // 3 to 8 intervals: the spacing's leading digit follows the span's (as PLplot's own axes choose)
  const double e = std::floor(std::log10(span)), f = std::log10(span) - e, p = std::pow(10.0, e);
  const double s = f > std::log10(6.0) ? 2 * p : f > std::log10(3.0) ? p : f > std::log10(1.5) ? 0.5 * p : 0.2 * p;
  if (step) *step = s;
  const double biggest = std::max(std::abs(lo), std::abs(hi));
  std::vector<Tick> ticks;
  for (double k = std::ceil(lo / s - 1e-9); k * s <= hi + s * 1e-9 && ticks.size() < 100; k += 1)
    ticks.push_back({k * s, number(k * s, s, biggest)});
  return ticks;
}

std::vector<Tick> log_ticks(Range r, const std::vector<double>& data) {
  std::vector<double> values;
  for (double v : data)
    if (shown(v, true) && std::log10(v) >= r.lo - 1e-9 && std::log10(v) <= r.hi + 1e-9) values.push_back(v);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<Tick> ticks;
  if (values.size() >= 2 && values.size() <= 12 && values.back() <= 100 * values.front() * (1 + 1e-9)) {
    for (double v : values) ticks.push_back({std::log10(v), value_text(v)});
    return ticks;
  }
  // Over more than four decades 1, 2, 5 would crowd: whole decades, every
  // n-th of them so that at most about ten are labelled.
  if (r.hi - r.lo > 4) {
    const int every = std::max(1, static_cast<int>(std::ceil((r.hi - r.lo) / 10)));
    for (int e = static_cast<int>(std::ceil(r.lo)); e <= static_cast<int>(std::floor(r.hi)); ++e)
      if (e % every == 0) ticks.push_back({static_cast<double>(e), value_text(std::pow(10.0, e))});
    return ticks;
  }
  // 1, 2, 5 times powers of ten, or every digit (and halves) where that
  // gives fewer than three: a loss between 1.8 and 4.2 gets numbers too.
  const std::vector<std::vector<double>> choices = {{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9},
                                                    {1, 1.2, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9}};
  for (const std::vector<double>& mantissas : choices) {
    ticks.clear();
    for (int e = static_cast<int>(std::floor(r.lo)) - 1; e <= static_cast<int>(std::ceil(r.hi)); ++e)
      for (double m : mantissas) {
        const double v = std::log10(m) + e;
        if (v >= r.lo && v <= r.hi) ticks.push_back({v, value_text(std::pow(10.0, v))});
      }
    if (ticks.size() >= 3) break;
  }
  return ticks;
}

double keep_inside(double x, double w, double lo, double hi) {
  if (w >= hi - lo) return (lo + hi) / 2;
  return std::clamp(x, lo + w / 2, hi - w / 2);
}

Frame layout_frame(Canvas& c, const std::string& title, const AxisSpec& x, const AxisSpec& y, double right) {
  std::vector<std::pair<std::string, double>> texts{{title, kTitleScale}, {x.label, kTextScale}, {y.label, kTextScale}};
  for (const Tick& t : x.ticks) texts.push_back({t.text, kTextScale});
  for (const Tick& t : y.ticks) texts.push_back({t.text, kTextScale});
  c.measure_all(texts);
  const double h = c.char_height(), pad = kPad * h;
  double y_widest = 0, x_tall = h, x_above = 0.5 * h, x_half = 0;
  for (const Tick& t : y.ticks) y_widest = std::max(y_widest, c.measure(t.text).advance());
  for (const Tick& t : x.ticks) {
    const TextSize m = c.measure(t.text);
    x_tall = std::max(x_tall, m.height());
    x_above = std::max(x_above, m.above);
    x_half = std::max(x_half, m.advance() / 2);  // the last number stands half out of the area
  }
  const TextSize tl = c.measure(title, kTitleScale), xl = c.measure(x.label), yl = c.measure(y.label);
  const double left = pad + (yl.width > 0 ? yl.height() + kLabelGap * h : 0) + y_widest + kNumberGap * h;
  const double bottom = pad + (xl.width > 0 ? xl.height() + kLabelGap * h : 0) + x_tall + kNumberGap * h;
  const double top = pad + (tl.width > 0 ? tl.height() : 0) + kTitleGap * h;
  right = std::max({right, pad + x_half, 0.04 * c.width()});
  Frame f;
  f.area = {left, top, std::max(left + 16, c.width() - right), std::max(top + 16, c.height() - bottom)};
  f.title_y = pad + tl.above;
  f.y_numbers_x = left - kNumberGap * h;
  f.y_label_x = f.y_numbers_x - y_widest - kLabelGap * h - yl.below;
  f.x_numbers_y = f.area.y1 + kNumberGap * h + x_above;
  f.x_label_y = f.area.y1 + kNumberGap * h + x_tall + kLabelGap * h + xl.above;
  return f;
}

namespace {

// Grid lines of a log axis at its ticks (PLplot's own are at whole decades).
void log_grid(const AxisSpec& a, bool horizontal) {
  PLFLT wx0, wx1, wy0, wy1;
  plgvpw(&wx0, &wx1, &wy0, &wy1);
  for (const Tick& t : a.ticks) {
    PLFLT xs[2] = {wx0, wx1}, ys[2] = {t.at, t.at};
    if (horizontal) xs[0] = xs[1] = t.at, ys[0] = wy0, ys[1] = wy1;
    plline(2, xs, ys);
  }
}

// An axis's numbers, each at its tick, left out where it would touch the
// last one drawn (a name that is left out goes into the Report: a bar or a
// cell without its name is a fault of the picture, layout_problems says).
void numbers(Canvas& c, const Frame& f, const AxisSpec& a, bool horizontal) {
  const double space = kNumberSpace * c.char_height();
  Box last{};
  bool any = false;
  for (const Tick& t : a.ticks) {
    const double at = (t.at - a.range.lo) / (a.range.hi - a.range.lo);  // fraction of the axis
    if (at < -1e-9 || at > 1 + 1e-9) continue;
    const double x = horizontal ? f.area.x0 + at * (f.area.x1 - f.area.x0) : f.y_numbers_x;
    const double y = horizontal ? f.x_numbers_y : f.area.y1 - at * (f.area.y1 - f.area.y0);
    const double just = horizontal ? 0.5 : 1.0;
    const Box b = c.box_of(t.text, x, y, just, false);
    if ((any && overlaps(grown(last, space), b)) || b.x0 < 0 || b.x1 > c.width()) {
      if (a.names) c.report().names_left_out.push_back(t.text);
      continue;
    }
    c.text(TextBox::Kind::TickLabel, t.text, x, y, just);
    last = b;
    any = true;
  }
}

}  // namespace

void draw_frame(Canvas& c, const Frame& f, const std::string& title, const AxisSpec& x, const AxisSpec& y, bool grid) {
  c.viewport(f.area, x.range.lo, x.range.hi, y.range.lo, y.range.hi);
  plwidth(1);
  if (grid) {
    plcol0(kGrid);
    plbox(!x.log && x.step > 0 ? "g" : "", x.step, 0, !y.log && y.step > 0 ? "g" : "", y.step, 0);
    if (x.log) log_grid(x, true);
    if (y.log) log_grid(y, false);
  }
  plcol0(kInk);
  plbox(!x.log && x.step > 0 ? "bcst" : "bc", x.step, 0, !y.log && y.step > 0 ? "bcst" : "bc", y.step, 0);
  numbers(c, f, x, true);
  numbers(c, f, y, false);
  const double pad = kPad * c.char_height(), mid_x = (f.area.x0 + f.area.x1) / 2, mid_y = (f.area.y0 + f.area.y1) / 2;
  c.text(TextBox::Kind::AxisLabel, x.label, keep_inside(mid_x, c.measure(x.label).advance(), pad, c.width() - pad),
         f.x_label_y, 0.5);
  c.text(TextBox::Kind::AxisLabel, y.label, f.y_label_x,
         keep_inside(mid_y, c.measure(y.label).advance(), pad, c.height() - pad), 0.5, true);
  c.text(TextBox::Kind::Title, title,
         keep_inside(mid_x, c.measure(title, kTitleScale).advance(), pad, c.width() - pad), f.title_y, 0.5, false,
         kTitleScale);
}

}  // namespace ember::plot::detail
