// plot/canvas.h (inside plot/, not part of its API): one PLplot stream
// drawing into memory, and the text on it.
//
// PLplot's Cairo driver draws text with Pango, whose widths PLplot does not
// hand out (its plstrl is not exported by Debian's libplplot). Text is
// therefore measured the way it will look: measure() draws each string on a
// scratch stream of the same character height and finds its ink (one pass
// for a whole figure's strings). With the sizes known before anything is
// drawn, the margins fit the tick values and labels (axes.h), and text() can
// record the box of every string it draws, in the Report.
//
// Coordinates here are the picture's pixels from its top-left corner; a
// text's reference point is the middle of its letters' height (where PLplot
// puts it), `just` is 0 (left), 0.5 (centred) or 1 (right) along the
// baseline.
#pragma once

#include <mutex>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "plot/plot.h"

namespace ember::plot::detail {

// PLplot's colour map 0 indices: 0 background, 1 text and axes, 2 grid, 3..
// the figure's own colours.
constexpr int kInk = 1, kGrid = 2, kFirstFree = 3;
// PLplot character scales: all text, the title.
constexpr double kTextScale = 0.85, kTitleScale = 1.05;

/// A string's ink, for the reference point (0, 0) and just = 0.
struct TextSize {
  double left = 0, width = 0;     // the ink spans x = left .. left + width
  double above = 0, below = 0;    // ... and y = -above .. below (pixels down are positive)
  double advance() const { return width + 2 * left; }  // the glyphs' advance, bearings included
  double height() const { return above + below; }
};

class Canvas {
 public:
  Canvas(int width, int height, const std::string& title, const std::string& path);
  ~Canvas();
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  int width() const { return width_; }
  int height() const { return height_; }
  const std::string& title() const { return title_; }
  /// The height of capital letters and digits at scale kTextScale, in pixels.
  double char_height() const { return char_height_; }

  /// A colour map 0 index holding c.
  int color(Color c);

  /// Measures every string not measured yet, at its scale, in one pass.
  void measure_all(const std::vector<std::pair<std::string, double>>& texts);
  /// One string's ink (measured now if measure_all did not).
  TextSize measure(const std::string& text, double scale = kTextScale);
  /// The box text(...) would give, without drawing.
  Box box_of(const std::string& text, double x, double y, double just, bool vertical, double scale = kTextScale);
  /// Draws text at (x, y): horizontal, or reading upwards (vertical), and
  /// records its box under `kind` in the report. Returns the box.
  Box text(TextBox::Kind kind, const std::string& text, double x, double y, double just, bool vertical = false,
           double scale = kTextScale);

  /// PLplot's viewport set to a box of pixels, with the window [x0, x1] x [y0, y1].
  void viewport(const Box& b, double x0, double x1, double y0, double y1);
  /// The whole page as the viewport, its window in pixels (y up: PLplot's way).
  void page_viewport();

  Report& report() { return report_; }
  /// Ends the stream (PLplot flushes into the buffer) and writes the PNG.
  void write();

 private:
  void measure_batch(const std::vector<std::pair<std::string, double>>& texts);

  std::lock_guard<std::mutex> lock_;
  int width_, height_;
  std::string title_, path_;
  std::vector<uint8_t> pixels_;
  int stream_ = -1;
  int next_color_ = kFirstFree;
  double default_mm_ = 0, char_height_ = 0, px_per_mm_ = 1;
  // (text, scale) -> its ink; shared by the figures of one character size
  std::map<std::pair<std::string, double>, TextSize>* sizes_ = nullptr;
  Report report_;
};

/// Whether two boxes share any area (touching edges do not).
inline bool overlaps(const Box& a, const Box& b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }
/// b made larger by m pixels on every side.
inline Box grown(const Box& b, double m) { return {b.x0 - m, b.y0 - m, b.x1 + m, b.y1 + m}; }

}  // namespace ember::plot::detail
