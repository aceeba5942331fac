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
/// The layout is ember's: every text is measured before anything is drawn
/// (plot/canvas.h), the margins are made as wide as the tick values and
/// labels in them (plot/axes.h), and the legend is placed where it hides no
/// data (plot/legend.h). The Report says where every text went, so a test can
/// check that no two overlap (layout_problems).
///
/// Robust to the data it is given: NaN and Inf points, values beyond +-1e300
/// (and values <= 0 on a log axis) are left out and counted in the returned
/// Report, a constant series gets a small range around its value, and a
/// series of huge values gets ticks in scientific notation. Errors (an empty
/// figure, an unwritable path) throw ember::Error naming the figure's title
/// and the path.
///
/// Files, in reading order: plot.h (this), plot.cpp (the four figures),
/// axes.h/.cpp (ranges, ticks, margins, the frame), legend.h/.cpp (looks,
/// placement), canvas.h/.cpp (the PLplot stream, measuring and drawing text),
/// png.h/.cpp (the RGB PNG every picture is written as).
///
/// Series drawn on top of one another stay visible: all lines are drawn
/// first, then all markers, so every series' markers show (give each its
/// own Marker, and if they coincide point for point, its own first_marker).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember::plot {

struct Color {
  uint8_t r, g, b;
  friend bool operator==(const Color&, const Color&) = default;
};
/// A palette of sixteen colours that stay distinguishable side by side.
Color palette(size_t i);

/// A line's pattern.
enum class Dash { Solid, Dashed, Dotted, DashDot, LongDash };
/// The shape drawn at every point of a series with points = true.
enum class Marker { Dot, Circle, Square, Triangle, Diamond, TriangleDown, Cross, Plus };

struct Axis {
  std::string label{};                  // with units, e.g. "loss (nats)"
  std::optional<double> min{}, max{};   // default: the data's range, padded a little
  bool log = false;                     // log10 scale; values <= 0 are left out
};

struct Series {
  std::string label{};                // legend text; "" keeps it out of the legend
  std::vector<double> x{}, y{};       // the same length
  std::optional<Color> color{};       // default: the next palette colour
  bool line = true;                   // joined by a line
  bool points = false;                // a marker at every point
  double width = 2.0;                 // line width in pixels
  Marker marker = Marker::Dot;        // the points' shape
  Dash dash = Dash::Solid;            // the line's pattern
  // Markers at every n-th point only, from point `first_marker` on: series
  // that lie on top of each other show each its own markers when each
  // starts at another point (lesson_c_race's models at accuracy 1.0).
  size_t marker_every = 1, first_marker = 0;
};

/// A reference line across the plot, e.g. "ln V = 4.17 (uniform guess)".
struct RefLine {
  double at{};
  std::string label{};
  std::optional<Color> color{};
  Dash dash = Dash::Dashed;
};

/// Where a legend sits: inside the plot at a corner (or the middle of the
/// right edge), or Outside, in a column right of the plot. An inside legend
/// that would hide data moves to the inside place that hides the least.
/// Legend entries that would look alike (same colour, pattern and marker) are
/// told apart: the later one gets the next dash pattern (or marker).
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
  /// Stacked bars instead of `values` (left empty): layer k's y[i] is drawn
  /// on top of layers 0..k-1 of bar i, each layer in its colour, named in a
  /// legend beside the frame. Every y has one value >= 0 per bar.
  std::vector<Series> stacks{};
  int width = 900, height = 520;
};

/// A rectangle in pixels of the picture, from its top-left corner.
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // x0 <= x1, y0 <= y1
};

/// One text the figure wrote and the box its ink fills.
struct TextBox {
  enum class Kind { Title, AxisLabel, TickLabel, LegendText };
  Kind kind;
  std::string text;
  Box box;
};

/// How a legend entry looks: its sample is a line, markers, or a filled box.
struct LegendKey {
  std::string text;
  Color color;
  bool line = false, points = false, filled = false;
  Dash dash = Dash::Solid;
  Marker marker = Marker::Dot;
};

/// What a figure could not show, and where it put what it did.
struct Report {
  int64_t skipped = 0;              // points left out: NaN, Inf, beyond +-1e300, or <= 0 on a log axis
  int width = 0, height = 0;        // the picture's size
  Box plot_area{};                  // the frame of the data (a heatmap's cells)
  Box legend_box{};                 // the legend's frame (all zero without a legend)
  std::vector<TextBox> texts{};     // every text drawn, in drawing order
  std::vector<LegendKey> legend{};  // the legend's entries, top to bottom
  std::vector<std::string> names_left_out{};  // names of bars or cells left out (they would touch a neighbour)
  // The data window: what plot_area shows, in axis units (log10 of the
  // value on a log axis).
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  bool x_log = false, y_log = false;
};

/// Each draws the figure and writes it to path as a PNG, atomically (a
/// temporary file renamed over path).
Report write_png(const LinePlot& plot, const std::string& path);
Report write_png(const Heatmap& plot, const std::string& path);
Report write_png(const StackedArea& plot, const std::string& path);
Report write_png(const BarChart& plot, const std::string& path);

/// Rewrites the PNG at path, drawn by another program, the way ember writes
/// its own: 8-bit RGB over white, no transparency (Graphviz's PNGs of
/// autograd_basics come with an alpha channel). An error names the path.
void flatten_png(const std::string& path);

/// What is wrong with a figure's layout, one line each: two texts whose boxes
/// overlap, a text outside the picture or over the data, a text other than
/// the legend's over the legend, two legend entries that look alike. Empty
/// when nothing is.
std::vector<std::string> layout_problems(const Report& report);

}  // namespace ember::plot
