// plot/canvas.cpp: the PLplot stream of one figure, the measuring of text on
// a scratch stream, text drawn where its box says, and the PNG written at the
// end (canvas.h says why text is measured by drawing it; png.cpp encodes).
#include "plot/canvas.h"

#include <plplot/plplot.h>
#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "plot/png.h"

namespace ember::plot::detail {

namespace {

// PLplot keeps global state (the current stream): one figure at a time.
std::mutex& plplot_mutex() {
  static std::mutex m;
  return m;
}

// A pixel the text drew on: not the white it started as.
bool inked(const uint8_t* p) { return p[3] > 0 && std::min({p[0], p[1], p[2]}) < 250; }

}  // namespace

Canvas::Canvas(int width, int height, const std::string& title, const std::string& path)
    : lock_(plplot_mutex()), width_(width), height_(height), title_(title), path_(path) {
  EMBER_CHECK(width >= 64 && height >= 64 && width <= 8192 && height <= 8192, "plot",
              "\"" << title << "\": size " << width << " x " << height << " must be within 64..8192 pixels");
  pixels_.assign(static_cast<size_t>(width) * height * 4, 255);
  PLINT stream = -1;
  plmkstrm(&stream);
  stream_ = stream;
  plsdev("memcairo");
  plsmema(width, height, pixels_.data());
  plscolbg(255, 255, 255);
  plscmap0n(64);
  plscol0(kInk, 30, 30, 30);
  plscol0(kGrid, 225, 225, 225);
  plinit();
  pladv(0);
  plschr(0, kTextScale);
  PLFLT def = 0, ht = 0, xmin = 0, xmax = 0, ymin = 0, ymax = 0;
  plgchr(&def, &ht);
  plgspa(&xmin, &xmax, &ymin, &ymax);
  default_mm_ = def;
  px_per_mm_ = width / (xmax - xmin);
  char_height_ = ht * px_per_mm_;
  // Sizes measured for one figure hold for every figure of the same
  // character size (PLplot's follows the picture's size): kept, under the
  // PLplot lock, for the next figure (a few thousand strings at most).
  static std::map<double, std::map<std::pair<std::string, double>, TextSize>> measured;
  if (measured.size() > 64) measured.clear();
  sizes_ = &measured[def];
  if (sizes_->size() > 20000) sizes_->clear();
  report_.width = width;
  report_.height = height;
}

Canvas::~Canvas() {
  if (stream_ >= 0) {
    plsstrm(stream_);
    plend1();
  }
}

int Canvas::color(Color c) {
  EMBER_CHECK(next_color_ < 64, "plot", "\"" << title_ << "\": more than 60 colours in one figure");
  plscol0(next_color_, c.r, c.g, c.b);
  return next_color_++;
}

void Canvas::measure_all(const std::vector<std::pair<std::string, double>>& texts) {
  std::vector<std::pair<std::string, double>> todo;
  for (const auto& t : texts)
    if (!t.first.empty() && !sizes_->count(t) && std::find(todo.begin(), todo.end(), t) == todo.end()) todo.push_back(t);
  constexpr size_t kPerPass = 48;  // strings per scratch page: a page of about 1400 pixels' height
  for (size_t i = 0; i < todo.size(); i += kPerPass)
    measure_batch({todo.begin() + static_cast<std::ptrdiff_t>(i),
                   todo.begin() + static_cast<std::ptrdiff_t>(std::min(todo.size(), i + kPerPass))});
}

// Draws each string on its own row of a scratch stream with the figure's
// character height (same driver, same font), left-justified at x = margin,
// then reads each row's ink.
void Canvas::measure_batch(const std::vector<std::pair<std::string, double>>& texts) {
  double largest = 0;
  for (const auto& t : texts) largest = std::max(largest, t.second);
  // a text wider than the picture is measured as wide as it (it cannot be placed anyway)
  const double row = std::ceil(2.2 * char_height_ * largest / kTextScale), margin = 10;
  const int w = width_ + 2 * static_cast<int>(margin), h = static_cast<int>(row * static_cast<double>(texts.size()) + 2 * margin);
  std::vector<uint8_t> page(static_cast<size_t>(w) * h * 4, 255);
  PLINT scratch = -1;
  plmkstrm(&scratch);
  plsdev("memcairo");
  plsmema(w, h, page.data());
  plscolbg(255, 255, 255);
  plscol0(1, 0, 0, 0);
  plinit();
  pladv(0);
  plvpor(0, 1, 0, 1);
  plwind(0, w, 0, h);
  plcol0(1);
  for (size_t i = 0; i < texts.size(); ++i) {
    plschr(default_mm_, texts[i].second);
    plptex(margin, h - (margin + (static_cast<double>(i) + 0.5) * row), 1, 0, 0, texts[i].first.c_str());
  }
  plend1();
  plsstrm(stream_);
  for (size_t i = 0; i < texts.size(); ++i) {
    const int top = static_cast<int>(margin + static_cast<double>(i) * row), bottom = static_cast<int>(top + row);
    int x0 = w, x1 = -1, y0 = h, y1 = -1;
    for (int y = top; y < std::min(bottom, h); ++y)
      for (int x = 0; x < w; ++x)
        if (inked(&page[(static_cast<size_t>(y) * w + x) * 4])) {
          x0 = std::min(x0, x), x1 = std::max(x1, x);
          y0 = std::min(y0, y), y1 = std::max(y1, y);
        }
    const double centre = margin + (static_cast<double>(i) + 0.5) * row;
    (*sizes_)[texts[i]] = x1 < 0 ? TextSize{} : TextSize{x0 - margin, x1 + 1.0 - x0, centre - y0, y1 + 1.0 - centre};
  }
}

TextSize Canvas::measure(const std::string& text, double scale) {
  if (text.empty()) return {};
  const auto key = std::make_pair(text, scale);
  if (!sizes_->count(key)) measure_batch({key});
  return sizes_->at(key);
}

Box Canvas::box_of(const std::string& text, double x, double y, double just, bool vertical, double scale) {
  const TextSize m = measure(text, scale);
  if (m.width <= 0) return {x, y, x, y};
  const double start = just * m.advance();
  if (!vertical) return {x - start + m.left, y - m.above, x - start + m.left + m.width, y + m.below};
  // reading upwards: the text's "up" is the picture's left, its "along" the picture's up
  return {x - m.above, y + start - m.left - m.width, x + m.below, y + start - m.left};
}

Box Canvas::text(TextBox::Kind kind, const std::string& text, double x, double y, double just, bool vertical,
                 double scale) {
  if (text.empty()) return {x, y, x, y};
  PLFLT vx0, vx1, vy0, vy1, wx0, wx1, wy0, wy1;
  plgvpd(&vx0, &vx1, &vy0, &vy1);
  plgvpw(&wx0, &wx1, &wy0, &wy1);
  page_viewport();
  plschr(0, scale);
  plcol0(kInk);
  plptex(x, height_ - y, vertical ? 0 : 1, vertical ? 1 : 0, just, text.c_str());
  plschr(0, kTextScale);
  plvpor(vx0, vx1, vy0, vy1);
  plwind(wx0, wx1, wy0, wy1);
  const Box b = box_of(text, x, y, just, vertical, scale);
  if (b.x1 > b.x0) report_.texts.push_back({kind, text, b});
  return b;
}

void Canvas::viewport(const Box& b, double x0, double x1, double y0, double y1) {
  plvpor(b.x0 / width_, b.x1 / width_, 1 - b.y1 / height_, 1 - b.y0 / height_);
  plwind(x0, x1, y0, y1);
}

void Canvas::page_viewport() {
  plvpor(0, 1, 0, 1);
  plwind(0, width_, 0, height_);
}

void Canvas::write() {
  plsstrm(stream_);
  plend1();
  stream_ = -1;
  write_rgb_png(path_, pixels_.data(), width_, height_, "plot");
}

}  // namespace ember::plot::detail
