#include "plot/plot.h"

#include <plplot/plplot.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <mutex>
#include <cstdio>
#include <string_view>

#include "tensor/error.h"
#include "tensor/io.h"
#include "tensor/shape.h"

namespace ember::plot {

Color palette(size_t i) {
  static const Color colors[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},  {148, 103, 189},
                                 {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  return colors[i % 10];
}

namespace {

// PLplot keeps global state (the current stream): one figure at a time.
std::mutex& plplot_mutex() {
  static std::mutex m;
  return m;
}

// Colour map 0 indices: 0 background, 1 text and axes, 2 grid, 3.. the
// figure's own colours.
constexpr PLINT kInk = 1, kGrid = 2, kFirstFree = 3;

// One PLplot stream drawing into an RGBA buffer of width x height pixels.
class Canvas {
 public:
  Canvas(int width, int height, const std::string& title, const std::string& path)
      : lock_(plplot_mutex()), width_(width), height_(height), title_(title), path_(path) {
    EMBER_CHECK(width >= 64 && height >= 64 && width <= 8192 && height <= 8192, "plot",
                "\"" << title << "\": size " << width << " x " << height << " must be within 64..8192 pixels");
    pixels_.assign(static_cast<size_t>(width) * height * 4, 255);
    plmkstrm(&stream_);
    plsdev("memcairo");
    plsmema(width, height, pixels_.data());
    plscolbg(255, 255, 255);
    plscmap0n(64);
    plscol0(kInk, 30, 30, 30);
    plscol0(kGrid, 225, 225, 225);
    plinit();
    pladv(0);
    plschr(0, 0.85);
  }
  ~Canvas() {
    if (stream_ >= 0) plend1();
  }
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  // A colour map 0 index holding c.
  PLINT color(Color c) {
    EMBER_CHECK(next_color_ < 64, "plot", "\"" << title_ << "\": more than 60 colours in one figure");
    plscol0(next_color_, c.r, c.g, c.b);
    return next_color_++;
  }

  // Ends the stream (PLplot flushes into the buffer) and writes the PNG.
  void write() {
    plend1();
    stream_ = -1;
    std::vector<uint8_t> rgb(static_cast<size_t>(width_) * height_ * 3);
    for (size_t i = 0, n = static_cast<size_t>(width_) * height_; i < n; ++i) {
      // composite over white, so the PNG has no transparency
      const uint8_t* p = &pixels_[i * 4];
      for (int k = 0; k < 3; ++k) rgb[i * 3 + k] = static_cast<uint8_t>((p[k] * p[3] + 255 * (255 - p[3])) / 255);
    }
    std::string png;
    auto append = [](void* ctx, void* data, int size) {
      static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<size_t>(size));
    };
    EMBER_CHECK(stbi_write_png_to_func(append, &png, width_, height_, 3, rgb.data(), width_ * 3) != 0, "plot",
                path_ << ": PNG encoding failed");
    write_file_atomically(path_, {png}, "plot");
  }

  const std::string& title() const { return title_; }

 private:
  std::lock_guard<std::mutex> lock_;
  int width_, height_;
  std::string title_, path_;
  std::vector<uint8_t> pixels_;
  PLINT stream_ = -1;
  PLINT next_color_ = kFirstFree;
};

// A data range [lo, hi] from the finite values (log10 of the positive ones
// for a log axis), padded, or the axis's own min/max when given.
struct Range {
  double lo, hi;
};
double to_axis(double v, bool log) { return log ? std::log10(v) : v; }
// Beyond +-1e300 the plot's own arithmetic (ranges, ticks) would overflow:
// such points are left out and counted, like NaN and Inf.
constexpr double kLargestDrawable = 1e300;
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

// Tick values for a log axis over [10^lo, 10^hi]: 1, 2, 5 times powers of
// ten, or every digit when the range is narrower than that gives three ticks.
// (PLplot labels only whole decades, so a loss between 1.8 and 4.2 would get
// no numbers at all.) Over more than four decades 1, 2, 5 would crowd the
// numbers on top of each other: whole decades then, every n-th of them so
// that at most about ten are labelled.
std::vector<double> log_ticks(double lo, double hi) {
  if (hi - lo > 4) {
    const int every = std::max(1, static_cast<int>(std::ceil((hi - lo) / 10)));
    std::vector<double> decades;
    for (int e = static_cast<int>(std::ceil(lo)); e <= static_cast<int>(std::floor(hi)); ++e)
      if (e % every == 0) decades.push_back(e);
    return decades;
  }
  const std::vector<std::vector<double>> choices = {{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9},
                                                    {1, 1.2, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9}};
  std::vector<double> ticks;
  for (const std::vector<double>& mantissas : choices) {
    ticks.clear();
    for (int e = static_cast<int>(std::floor(lo)) - 1; e <= static_cast<int>(std::ceil(hi)); ++e)
      for (double m : mantissas) {
        const double v = std::log10(m) + e;
        if (v >= lo && v <= hi) ticks.push_back(v);
      }
    if (ticks.size() >= 3) break;
  }
  return ticks;
}

// Ticks, grid lines and numbers of a log axis, drawn by hand (PLplot's own
// show only whole decades, as 10^k); returns the widest number's length in
// characters.
size_t log_axis(Range r, bool horizontal) {
  size_t widest = 0;
  for (double v : log_ticks(r.lo, r.hi)) {
    const double at = (v - r.lo) / (r.hi - r.lo);  // fraction of the axis
    plcol0(kGrid);
    plwidth(1);
    PLFLT wx0, wx1, wy0, wy1;
    plgvpw(&wx0, &wx1, &wy0, &wy1);
    PLFLT x[2] = {wx0, wx1}, y[2] = {v, v};
    if (horizontal) x[0] = x[1] = v, y[0] = wy0, y[1] = wy1;
    plline(2, x, y);
    plcol0(kInk);
    char text[32];
    std::snprintf(text, sizeof text, "%g", std::pow(10.0, v));
    widest = std::max(widest, std::strlen(text));
    if (horizontal)
      plmtex("b", 1.5, at, 0.5, text);
    else
      plmtex("lv", 0.6, at, 1.0, text);
  }
  return widest;
}

// The frame: viewport, window, grid, box with tick values, labels and title.
void frame(const std::string& title, const Axis& x, const Axis& y, Range rx, Range ry, double right = 0.95) {
  plvpor(0.1, right, 0.13, 0.9);
  plwind(rx.lo, rx.hi, ry.lo, ry.hi);
  plcol0(kGrid);
  plwidth(1);
  plbox(x.log ? "" : "g", 0, 0, y.log ? "" : "g", 0, 0);
  if (x.log) log_axis(rx, true);
  const size_t y_numbers = y.log ? log_axis(ry, false) : 0;
  plcol0(kInk);
  plbox(x.log ? "bc" : "bcnst", 0, 0, y.log ? "bc" : "bcnstv", 0, 0);
  pllab(x.label.c_str(), "", "");
  // pllab's place for the y label (5 character heights out) would run into
  // numbers as wide as 0.0001: it moves out with the widest one.
  plmtex("l", std::max(5.0, 1.8 + 0.7 * static_cast<double>(y_numbers)), 0.5, 0.5, y.label.c_str());
  plschr(0, 1.05);
  plmtex("t", 1.6, 0.5, 0.5, title.c_str());
  plschr(0, 0.85);
}

// A legend inside the plot.
struct LegendEntry {
  std::string text;
  PLINT color;
  bool line, points, box, dashed;
};
void legend_at(const std::vector<LegendEntry>& entries, PLINT position, double offset);
void legend(const std::vector<LegendEntry>& entries, Corner corner) {
  if (entries.empty()) return;
  if (corner == Corner::Outside) {
    legend_at(entries, PL_POSITION_OUTSIDE | PL_POSITION_RIGHT, 0.03);
    return;
  }
  const PLINT position = PL_POSITION_INSIDE | (corner == Corner::TopRight      ? PL_POSITION_TOP | PL_POSITION_RIGHT
                                               : corner == Corner::TopLeft     ? PL_POSITION_TOP | PL_POSITION_LEFT
                                               : corner == Corner::BottomRight ? PL_POSITION_BOTTOM | PL_POSITION_RIGHT
                                               : corner == Corner::BottomLeft  ? PL_POSITION_BOTTOM | PL_POSITION_LEFT
                                                                               : PL_POSITION_RIGHT);
  legend_at(entries, position, 0.02);
}

void legend_at(const std::vector<LegendEntry>& entries, PLINT position, double offset) {
  const PLINT n = static_cast<PLINT>(entries.size());
  std::vector<PLINT> opts(n), colors(n), styles(n), patterns(n, 0), symbol_numbers(n, 3);
  std::vector<PLFLT> widths(n, 2.0), scales(n, 1.0), box_scales(n, 0.8), box_widths(n, 1.0);
  std::vector<const char*> text(n), symbols(n, "•");
  for (PLINT i = 0; i < n; ++i) {
    const LegendEntry& e = entries[i];
    opts[i] = e.box ? PL_LEGEND_COLOR_BOX : ((e.line ? PL_LEGEND_LINE : 0) | (e.points ? PL_LEGEND_SYMBOL : 0));
    colors[i] = e.color;
    styles[i] = e.dashed ? 2 : 1;
    text[i] = e.text.c_str();
  }
  std::vector<PLINT> text_colors(n, kInk);
  PLFLT w = 0, h = 0;
  pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, position,
           offset, 0.02, 0.08, 0, kGrid, 1, 0, 1, n, opts.data(), 1.0, 0.9, 2.0, 0.0, text_colors.data(), text.data(),
           colors.data(), patterns.data(), box_scales.data(), box_widths.data(), colors.data(), styles.data(),
           widths.data(), colors.data(), scales.data(), symbol_numbers.data(), symbols.data());
}

// Draws the finite runs of (x, y) as lines (a NaN breaks the line) and/or
// dots; returns how many points were left out.
int64_t draw_series(const Series& s, bool xlog, bool ylog, PLINT color) {
  plcol0(color);
  plwidth(s.width);
  pllsty(1);
  int64_t skipped = 0;
  std::vector<PLFLT> xs, ys;
  auto flush = [&] {
    if (s.line && xs.size() >= 2) plline(static_cast<PLINT>(xs.size()), xs.data(), ys.data());
    if (s.points && !xs.empty()) plstring(static_cast<PLINT>(xs.size()), xs.data(), ys.data(), "•");
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
  }
  flush();
  return skipped;
}

void check_series(const Series& s, const std::string& title) {
  EMBER_CHECK(s.x.size() == s.y.size(), "plot",
              "\"" << title << "\": series \"" << s.label << "\" has " << s.x.size() << " x values but " << s.y.size()
                   << " y values");
}

}  // namespace

Report write_png(const LinePlot& p, const std::string& path) {
  for (const Series& s : p.series) check_series(s, p.title);
  Canvas canvas(p.width, p.height, p.title, path);
  std::vector<const std::vector<double>*> xs, ys;
  for (const Series& s : p.series) {
    xs.push_back(&s.x);
    ys.push_back(&s.y);
  }
  std::vector<double> hl, vl;
  for (const RefLine& r : p.hlines) hl.push_back(r.at);
  for (const RefLine& r : p.vlines) vl.push_back(r.at);
  ys.push_back(&hl);
  xs.push_back(&vl);
  const Range rx = axis_range(p.x, xs, false, p.title), ry = axis_range(p.y, ys, false, p.title);
  frame(p.title, p.x, p.y, rx, ry, p.legend == Corner::Outside ? 0.62 : 0.95);

  Report report;
  std::vector<LegendEntry> entries;
  for (size_t i = 0; i < p.series.size(); ++i) {
    const Series& s = p.series[i];
    const PLINT c = canvas.color(s.color.value_or(palette(i)));
    report.skipped += draw_series(s, p.x.log, p.y.log, c);
    if (!s.label.empty()) entries.push_back({s.label, c, s.line, s.points, false, false});
  }
  auto ref_line = [&](const RefLine& r, bool horizontal) {
    const PLINT c = canvas.color(r.color.value_or(Color{90, 90, 90}));
    plcol0(c);
    plwidth(1.5);
    pllsty(2);  // dashed
    const double at = to_axis(r.at, horizontal ? p.y.log : p.x.log);
    PLFLT x[2] = {rx.lo, rx.hi}, y[2] = {at, at};
    if (!horizontal) x[0] = x[1] = at, y[0] = ry.lo, y[1] = ry.hi;
    plline(2, x, y);
    pllsty(1);
    if (!r.label.empty()) entries.push_back({r.label, c, true, false, false, true});
  };
  for (const RefLine& r : p.hlines)
    if (shown(r.at, p.y.log)) ref_line(r, true);
  for (const RefLine& r : p.vlines)
    if (shown(r.at, p.x.log)) ref_line(r, false);
  legend(entries, p.legend);
  canvas.write();
  return report;
}

Report write_png(const Heatmap& p, const std::string& path) {
  EMBER_CHECK(p.rows > 0 && p.cols > 0, "plot",
              "\"" << p.title << "\": a heatmap of " << p.rows << " x " << p.cols << " has no cells");
  const std::string what = "\"" + p.title + "\": the cells of a heatmap of " + std::to_string(p.rows) + " x " +
                           std::to_string(p.cols);
  const int64_t n_cells = checked_mul(p.rows, p.cols, "plot", what.c_str());
  EMBER_CHECK(static_cast<int64_t>(p.values.size()) == n_cells, "plot",
              "\"" << p.title << "\": a heatmap of " << p.rows << " x " << p.cols << " needs " << n_cells << " values, got "
                   << p.values.size());
  EMBER_CHECK(std::isfinite(p.min) && std::isfinite(p.max) && p.min < p.max, "plot",
              "\"" << p.title << "\": colour range [" << p.min << ", " << p.max << "] is empty");
  EMBER_CHECK(p.row_names.empty() || static_cast<int64_t>(p.row_names.size()) == p.rows, "plot",
              "\"" << p.title << "\": " << p.row_names.size() << " row names for " << p.rows << " rows");
  EMBER_CHECK(p.col_names.empty() || static_cast<int64_t>(p.col_names.size()) == p.cols, "plot",
              "\"" << p.title << "\": " << p.col_names.size() << " column names for " << p.cols << " columns");
  Canvas canvas(p.width, p.height, p.title, path);
  // Colour map 1: the value scale.
  if (p.diverging) {
    PLFLT at[] = {0, 0.5, 1}, r[] = {33 / 255.0, 1, 178 / 255.0}, g[] = {102 / 255.0, 1, 24 / 255.0},
          b[] = {172 / 255.0, 1, 43 / 255.0};
    plscmap1l(1, 3, at, r, g, b, nullptr);
  } else {
    PLFLT at[] = {0, 1}, r[] = {1, 8 / 255.0}, g[] = {1, 48 / 255.0}, b[] = {1, 107 / 255.0};
    plscmap1l(1, 2, at, r, g, b, nullptr);
  }
  // Rows top to bottom: the window's y runs from rows (bottom) to 0 (top).
  const double right = 0.84;
  plvpor(0.12, right, 0.13, 0.9);
  plwind(0, static_cast<double>(p.cols), static_cast<double>(p.rows), 0);
  Report report;
  // plimage treats its nx x ny values as the corners of (nx-1) x (ny-1)
  // cells, each coloured by its lower corner: given only rows x cols values
  // it would stretch them and drop the last row and column. So it gets one
  // more of each (copies of the last), and cell (r, c) covers [c, c+1] x [r, r+1].
  const int64_t nx = p.cols + 1, ny = p.rows + 1;
  std::vector<PLFLT> cells(static_cast<size_t>(nx * ny));
  std::vector<PLFLT*> columns(static_cast<size_t>(nx));  // PLplot indexes [x][y]
  for (int64_t c = 0; c < nx; ++c) {
    columns[c] = &cells[static_cast<size_t>(c * ny)];
    for (int64_t r = 0; r < ny; ++r) {
      double v = p.values[static_cast<size_t>(std::min(r, p.rows - 1) * p.cols + std::min(c, p.cols - 1))];
      if (!std::isfinite(v)) {
        if (r < p.rows && c < p.cols) ++report.skipped;
        v = (p.min + p.max) / 2;  // drawn as the middle of the scale
      }
      columns[c][r] = std::clamp(v, p.min, p.max);
    }
  }
  plimage(columns.data(), static_cast<PLINT>(nx), static_cast<PLINT>(ny), 0, static_cast<double>(p.cols), 0,
          static_cast<double>(p.rows), p.min, p.max, 0, static_cast<double>(p.cols), 0, static_cast<double>(p.rows));
  plcol0(kInk);
  plwidth(1);
  // Tick values: numbers, or one name per row / column, centred on the cells.
  auto named_ticks = [](const std::vector<std::string>& names, const char* side, bool across) {
    const double n = static_cast<double>(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      const double at = (static_cast<double>(i) + 0.5) / n;
      plmtex(side, 0.8, across ? at : 1.0 - at, across ? 0.5 : 1.0, names[i].c_str());
    }
  };
  plbox(p.col_names.empty() ? "bcnst" : "bc", 0, 0, p.row_names.empty() ? "bcnstv" : "bc", 0, 0);
  if (!p.col_names.empty()) named_ticks(p.col_names, "b", true);
  if (!p.row_names.empty()) named_ticks(p.row_names, "lv", false);
  pllab(p.x_label.c_str(), p.y_label.c_str(), "");
  plschr(0, 1.05);
  plmtex("t", 1.6, 0.5, 0.5, p.title.c_str());
  plschr(0, 0.85);

  // The colour bar, right of the map, with its own axis and label.
  PLFLT bar_w = 0, bar_h = 0;
  const PLINT n_values = 64;
  std::vector<PLFLT> levels(n_values);
  for (PLINT i = 0; i < n_values; ++i) levels[i] = p.min + (p.max - p.min) * i / (n_values - 1);
  const PLFLT* level_ptr = levels.data();
  PLINT label_opts[] = {PL_COLORBAR_LABEL_RIGHT};
  const char* labels[] = {p.value_label.c_str()};
  const char* axis_opts[] = {"bcvtm"};
  PLFLT ticks[] = {0};
  PLINT sub_ticks[] = {0};
  PLINT counts[] = {n_values};
  plcolorbar(&bar_w, &bar_h, PL_COLORBAR_IMAGE, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.02, 0, 0.04, 1.0, 0, kInk, 1, 0, 0,
             0, 0, 1, label_opts, labels, 1, axis_opts, ticks, sub_ticks, counts, &level_ptr);
  canvas.write();
  return report;
}

Report write_png(const StackedArea& p, const std::string& path) {
  for (const Series& s : p.layers)
    EMBER_CHECK(s.y.size() == p.xs.size(), "plot",
                "\"" << p.title << "\": layer \"" << s.label << "\" has " << s.y.size() << " values for " << p.xs.size()
                     << " x positions");
  EMBER_CHECK(!p.y.log, "plot", "\"" << p.title << "\": a stacked area cannot use a log axis");
  Canvas canvas(p.width, p.height, p.title, path);
  Report report;
  // The running sums: layer k fills between below[k] and below[k] + y[k].
  std::vector<double> below(p.xs.size(), 0.0), top;
  std::vector<std::vector<double>> bounds{below};
  for (const Series& s : p.layers) {
    top = below;
    for (size_t i = 0; i < top.size(); ++i) {
      if (std::isfinite(s.y[i]) && s.y[i] > 0) top[i] += s.y[i];
      else if (!(s.y[i] == 0)) ++report.skipped;
    }
    bounds.push_back(top);
    below = top;
  }
  std::vector<const std::vector<double>*> xs{&p.xs}, ys{&below};
  std::vector<double> vl;
  for (const RefLine& r : p.vlines) vl.push_back(r.at);
  xs.push_back(&vl);
  const Range rx = axis_range(p.x, xs, false, p.title), ry = axis_range(p.y, ys, true, p.title);
  frame(p.title, p.x, p.y, rx, ry, p.legend == Corner::Outside ? 0.62 : 0.95);
  std::vector<LegendEntry> entries;  // the top layer first, as the stack reads
  for (size_t k = 0; k < p.layers.size(); ++k) {
    const PLINT c = canvas.color(p.layers[k].color.value_or(palette(k)));
    // polygon: along the top edge, back along the bottom edge
    std::vector<PLFLT> px, py;
    for (size_t i = 0; i < p.xs.size(); ++i) px.push_back(p.xs[i]), py.push_back(bounds[k + 1][i]);
    for (size_t i = p.xs.size(); i-- > 0;) px.push_back(p.xs[i]), py.push_back(bounds[k][i]);
    plcol0(c);
    plpsty(0);
    if (px.size() >= 3) plfill(static_cast<PLINT>(px.size()), px.data(), py.data());
    entries.insert(entries.begin(), {p.layers[k].label, c, false, false, true, false});
  }
  for (const RefLine& r : p.vlines) {
    const PLINT c = canvas.color(r.color.value_or(Color{30, 30, 30}));
    plcol0(c);
    plwidth(1.5);
    pllsty(2);
    PLFLT x[2] = {r.at, r.at}, y[2] = {ry.lo, ry.hi};
    plline(2, x, y);
    pllsty(1);
    if (!r.label.empty()) entries.push_back({r.label, c, true, false, false, true});
  }
  plcol0(kInk);
  plbox("bc", 0, 0, "bc", 0, 0);  // the frame again, over the fills
  legend(entries, p.legend);
  canvas.write();
  return report;
}

Report write_png(const BarChart& p, const std::string& path) {
  EMBER_CHECK(p.names.size() == p.values.size() && !p.values.empty(), "plot",
              "\"" << p.title << "\": " << p.names.size() << " names for " << p.values.size() << " bars");
  Canvas canvas(p.width, p.height, p.title, path);
  Report report;
  std::vector<const std::vector<double>*> ys{&p.values};
  Range ry = axis_range(p.y, ys, !p.y.log, p.title);
  const double n = static_cast<double>(p.values.size());
  plvpor(0.1, 0.95, 0.13, 0.9);
  plwind(0, n, ry.lo, ry.hi);
  plcol0(kGrid);
  if (p.y.log) log_axis(ry, false);
  else plbox("", 0, 0, "g", 0, 0);
  const PLINT c = canvas.color(p.color.value_or(palette(0)));
  for (size_t i = 0; i < p.values.size(); ++i) {
    if (!shown(p.values[i], p.y.log)) {
      ++report.skipped;
      continue;
    }
    const double x0 = static_cast<double>(i) + 0.15, x1 = static_cast<double>(i) + 0.85;
    const double base = p.y.log ? ry.lo : 0.0, v = to_axis(p.values[i], p.y.log);
    PLFLT px[] = {x0, x1, x1, x0}, py[] = {base, base, v, v};
    plcol0(c);
    plpsty(0);
    plfill(4, px, py);
  }
  plcol0(kInk);
  plbox("bc", 0, 0, p.y.log ? "bc" : "bcnstv", 0, 0);
  for (size_t i = 0; i < p.names.size(); ++i)
    plmtex("b", 1.2, (static_cast<double>(i) + 0.5) / n, 0.5, p.names[i].c_str());
  pllab("", p.y.label.c_str(), "");
  plschr(0, 1.05);
  plmtex("t", 1.6, 0.5, 0.5, p.title.c_str());
  plschr(0, 0.85);
  canvas.write();
  return report;
}

}  // namespace ember::plot
