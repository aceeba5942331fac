/// @file
/// plot: the pictures ember draws — line plots, heatmaps, stacked areas and
/// bar charts, each with a title, labelled axes with tick values, a legend or
/// a colour bar. Examples and tools describe a figure as plain data (numbers,
/// labels, colours) and call write_png; nothing here knows about tensors.
///
/// The drawing is PLplot's (Debian libplplot-dev, through its Cairo driver
/// into memory: anti-aliased lines and real fonts), the PNG encoding
/// stb_image_write's. PLplot was chosen over Cairo alone (which would mean
/// writing axes, tick placement, legends and colour bars by hand) and over
/// gnuplot (a second process to drive through a pipe, whose errors arrive as
/// text): it is a C library with all of those built in, and it draws into a
/// buffer we control, so a failed write never leaves half a file behind.
///
/// Robust to the data it is given: NaN and Inf points, values beyond +-1e300
/// (and values <= 0 on a log axis) are left out and counted in the returned
/// Report, a constant
/// series gets a small range around its value, and a series of huge values
/// gets ticks in scientific notation. Errors (an empty figure, an unwritable
/// path) throw ember::Error naming the figure's title and the path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember::plot {

struct Color {
  uint8_t r, g, b;
};
/// A palette of ten colours that stay distinguishable side by side.
Color palette(size_t i);

struct Axis {
  std::string label{};              // with units, e.g. "loss (nats)"
  std::optional<double> min{}, max{};   // default: the data's range, padded a little
  bool log = false;                 // log10 scale; values <= 0 are left out
};

struct Series {
  std::string label{};                // legend text; "" keeps it out of the legend
  std::vector<double> x{}, y{};         // the same length
  std::optional<Color> color{};       // default: the next palette colour
  bool line = true;                 // joined by a line
  bool points = false;              // a dot at every point
  double width = 2.0;               // line width in pixels
};

/// A dashed reference line across the plot, e.g. "ln V = 4.17 (uniform guess)".
struct RefLine {
  double at{};
  std::string label{};
  std::optional<Color> color{};
};

//// Where a legend sits: inside the plot, or (Outside) in a column right of it.
enum class Corner { TopRight, TopLeft, BottomRight, BottomLeft, Right, Outside };

struct LinePlot {
  std::string title{};
  Axis x{}, y{};
  std::vector<Series> series{};
  std::vector<RefLine> hlines{};    // horizontal, at y = at
  std::vector<RefLine> vlines{};    // vertical, at x = at
  Corner legend = Corner::TopRight;
  int width = 900, height = 520;
};

/// values[r * cols + c]: row r is drawn r-th from the top, column c c-th from
/// the left, coloured on the scale [min, max] shown by the colour bar.
struct Heatmap {
  std::string title{}, x_label{}, y_label{}, value_label{};
  std::vector<double> values{};
  int64_t rows = 0, cols = 0;
  double min = -1, max = 1;
  bool diverging = true;            // blue - white - red around the middle; else white to dark blue
  std::vector<std::string> row_names{}, col_names{};  // optional tick labels (one per row / column)
  int width = 760, height = 640;
};

/// Layers stacked on top of each other over a shared x: layer k is drawn
/// between the sum of layers 0..k-1 and the sum of layers 0..k.
struct StackedArea {
  std::string title{};
  Axis x{}, y{};
  std::vector<double> xs{};
  std::vector<Series> layers{};     // each layer's y has xs.size() values >= 0
  std::vector<RefLine> vlines{};
  Corner legend = Corner::TopRight;
  int width = 900, height = 520;
};

struct BarChart {
  std::string title{};
  Axis y{};
  std::vector<std::string> names{};   // one bar each, left to right
  std::vector<double> values{};
  std::optional<Color> color{};
  int width = 900, height = 520;
};

/// What a figure could not show.
struct Report {
  int64_t skipped = 0;              // points left out: NaN, Inf, beyond +-1e300, or <= 0 on a log axis
};

/// Each draws the figure and writes it to path as a PNG, atomically (a
/// temporary file renamed over path).
Report write_png(const LinePlot& plot, const std::string& path);
Report write_png(const Heatmap& plot, const std::string& path);
Report write_png(const StackedArea& plot, const std::string& path);
Report write_png(const BarChart& plot, const std::string& path);

}  // namespace ember::plot
