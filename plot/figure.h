// plot/figure.h: what the four figures (line_plot.cpp, heatmap.cpp,
// stacked_area.cpp, bar_chart.cpp) share: an axis from data, the mapping from
// data to pixels, the looks of series told apart, reference lines, and cell
// ticks.
#pragma once

#include <string>
#include <vector>

#include "plot/axes.h"
#include "plot/canvas.h"
#include "plot/legend.h"
#include "plot/plot.h"

namespace ember::plot::detail {

// An axis of data with its ticks; data: the values plotted along it (a log
// axis of a few of them labels those).
AxisSpec axis_spec(const Axis& a, Range r, const std::vector<double>& data);


// From data to the picture's pixels, for a frame's plot area.
struct Mapping {
  Box area;
  Range rx, ry;
  bool xlog, ylog;
  double px(double v) const { return area.x0 + (to_axis(v, xlog) - rx.lo) / (rx.hi - rx.lo) * (area.x1 - area.x0); }
  double py(double v) const { return area.y1 - (to_axis(v, ylog) - ry.lo) / (ry.hi - ry.lo) * (area.y1 - area.y0); }
};

void record_window(Report& r, const Mapping& m);

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

Look ref_look(const RefLine& r, Color fallback);

// A reference line across the frame's window, at `at` (axis units).
void draw_ref_line(double at, bool horizontal, Range rx, Range ry, const Look& look, int color);

// Names centred on their rows or columns, or numbers.
std::vector<Tick> cell_ticks(const std::vector<std::string>& names, Range r, double* step);

}  // namespace ember::plot::detail
