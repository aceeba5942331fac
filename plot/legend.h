// plot/legend.h (inside plot/, not part of its API): how a series looks
// (colour, dash pattern, marker), looks told apart so that no two legend
// entries are alike, and the legend itself: its size from its measured
// texts, its place (where it hides the least data), its drawing.
//
// A legend, drawn here rather than by PLplot's pllegend so that its size is
// known before the frame is laid out and its place can depend on the data:
//   pad | sample (a line, markers or a filled box) | gap | text | pad
// one entry per row, a text of several lines ("a\nb") on several lines.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "plot/canvas.h"

namespace ember::plot::detail {

/// How one series, layer or reference line is drawn.
struct Look {
  Color color{0, 0, 0};
  bool line = true, points = false, filled = false;
  Dash dash = Dash::Solid;
  Marker marker = Marker::Dot;
  double width = 2.0;
};
/// Alike to a reader of the legend: the same colour, kind of sample, dash
/// pattern (of a line) and marker (of points).
bool alike(const Look& a, const Look& b);
/// Each labelled look alike to an earlier labelled one gets the next dash
/// pattern (a line) or the next marker (points only) until it is not.
void tell_apart(std::vector<Look>& looks, const std::vector<std::string>& labels);

/// PLplot's line pattern set to d.
void set_dash(Dash d);
/// Draws look's markers at (x[i], y[i]) in the current window's units.
void draw_markers(std::vector<double> x, std::vector<double> y, const Look& look);

struct LegendEntry {
  std::string text;
  Look look;
  int color;  // its colour map 0 index
};

/// The legend's size in pixels (its texts are measured here).
struct Size {
  double width = 0, height = 0;
};
Size legend_size(Canvas& c, const std::vector<LegendEntry>& entries);

/// The gap between the plot area and an Outside legend, and the room an
/// Outside legend of that size needs right of the plot area.
double outside_gap(const Canvas& c);
double outside_room(const Canvas& c, Size s);
/// The box of a legend right of the plot area, centred on it.
Box place_outside(const Canvas& c, const Box& area, Size s);
/// The box of a legend inside the plot area: at the asked corner, unless
/// another place hides less, as hides(box) counts it (points and lines).
Box place_inside(const Box& area, Size s, Corner asked, const std::function<int(const Box&)>& hides);

/// Draws the legend in box and records it (box, texts, looks) in the report.
void draw_legend(Canvas& c, const std::vector<LegendEntry>& entries, const Box& box);

/// Whether the segment (x0, y0) - (x1, y1) passes through box.
bool crosses(const Box& box, double x0, double y0, double x1, double y1);

}  // namespace ember::plot::detail
