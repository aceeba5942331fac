// plot/axes.h (inside plot/, not part of its API): what an axis shows (its
// range, its ticks and their numbers) and the frame around the data: margins
// made as wide as the numbers and labels that go in them, so that no label
// runs into a number, however wide (0.0001, 1e-18) the numbers are.
//
// A frame, from the picture's edge inwards (ch = the text's height):
//   left    pad | y label | gap | widest y number | gap | the plot area
//   bottom  the plot area | gap | x numbers | gap | x label | pad
//   top     pad | title | gap | the plot area (room for half a y number)
//   right   the plot area | what the figure keeps there (legend, colour bar)
#pragma once

#include <string>
#include <vector>

#include "plot/canvas.h"

namespace ember::plot::detail {

/// An axis's extent in axis units: the value, or log10 of it on a log axis.
struct Range {
  double lo, hi;
};
double to_axis(double v, bool log);
/// Beyond +-1e300 the plot's own arithmetic (ranges, ticks) would overflow:
/// such points are left out and counted, like NaN and Inf.
constexpr double kLargestDrawable = 1e300;
bool shown(double v, bool log);

/// The finite values' range (log10 of the positive ones on a log axis),
/// padded, or the axis's own min/max when given. An error for an empty one.
Range axis_range(const Axis& axis, const std::vector<const std::vector<double>*>& data, bool start_at_zero,
                 const std::string& title);

/// A tick at `at` (axis units), labelled `text`.
struct Tick {
  double at;
  std::string text;
};
/// Evenly spaced ticks, 1, 2 or 5 times a power of ten apart (*step is set
/// to that spacing); lo > hi (a reversed axis) works too.
std::vector<Tick> linear_ticks(Range r, double* step);
/// Ticks of a log axis. A handful of data values (data: the values, not
/// their logs) over at most two decades are labelled themselves (T = 16, 32,
/// 64); otherwise 1, 2, 5 times powers of ten, or fewer over many decades.
std::vector<Tick> log_ticks(Range r, const std::vector<double>& data);

/// One axis as the frame draws it.
struct AxisSpec {
  std::string label;
  Range range;
  std::vector<Tick> ticks;
  bool log = false;
  double step = 0;     // linear: PLplot's tick marks and grid at multiples of it; 0: none
  bool names = false;  // the ticks name bars or cells: none may be left out (the Report says which were)
};

/// Where everything of a frame goes, in pixels.
struct Frame {
  Box area;                  // the plot area
  double x_numbers_y = 0;    // centre line of the x numbers
  double x_label_y = 0;      // ... of the x label
  double y_numbers_x = 0;    // right end of the y numbers
  double y_label_x = 0;      // centre line of the (upward) y label
  double title_y = 0;        // centre line of the title
};

/// The frame that leaves room for the title, the numbers and the labels,
/// and `right` pixels on the right.
Frame layout_frame(Canvas& c, const std::string& title, const AxisSpec& x, const AxisSpec& y, double right);

/// Draws the grid (if asked), the box with its tick marks, the numbers (each
/// that has room: one that would touch its neighbour is left out), the labels
/// and the title. Leaves PLplot's viewport on the plot area, in axis units.
void draw_frame(Canvas& c, const Frame& f, const std::string& title, const AxisSpec& x, const AxisSpec& y, bool grid);

/// x clamped so that a text of width w centred on it stays inside [lo, hi].
double keep_inside(double x, double w, double lo, double hi);

}  // namespace ember::plot::detail
