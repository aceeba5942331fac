// plot/legend.cpp: dash patterns and markers, looks told apart, and the
// legend: measured, placed, drawn (legend.h has the legend's layout).
#include "plot/legend.h"

#include <plplot/plplot.h>

#include <algorithm>
#include <sstream>

namespace ember::plot::detail {

namespace {

// The legend's spacing, in character heights.
constexpr double kPad = 0.6;          // left and right of the entries
constexpr double kRowPad = 0.35;      // above the first and below the last
constexpr double kSample = 3.2;       // the sample's length: long enough for two long dashes
constexpr double kSampleGap = 0.7;    // between the sample and the text
constexpr double kRow = 1.9;          // one entry of one line
constexpr double kLine = 1.45;        // each further line of an entry
constexpr double kInset = 0.02;       // an inside legend's distance from the frame, of the frame's size

// The patterns a look that repeats another's is given, in this order, and
// the markers.
constexpr Dash kDashes[] = {Dash::Solid, Dash::Dashed, Dash::LongDash, Dash::DashDot, Dash::Dotted};
constexpr Marker kMarkers[] = {Marker::Dot,      Marker::Circle,       Marker::Square, Marker::Triangle,
                               Marker::Diamond, Marker::TriangleDown, Marker::Cross,  Marker::Plus};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (lines.empty()) lines.push_back("");
  return lines;
}

// A glyph of the font and the character scale that makes it about 9 pixels
// wide at the usual text size (the dot stays the small dot it always was).
struct Glyph {
  const char* text;
  double scale;
};
Glyph glyph(Marker m) {
  switch (m) {
    case Marker::Dot: return {"•", 0.85};
    case Marker::Circle: return {"●", 0.55};
    case Marker::Square: return {"■", 0.55};
    case Marker::Triangle: return {"▲", 0.6};
    case Marker::Diamond: return {"◆", 0.62};
    case Marker::TriangleDown: return {"▼", 0.6};
    case Marker::Cross: return {"✕", 0.75};
    case Marker::Plus: return {"+", 0.8};
  }
  return {"•", 0.85};
}

}  // namespace

bool alike(const Look& a, const Look& b) {
  return a.color == b.color && a.line == b.line && a.points == b.points && a.filled == b.filled &&
         (!a.line || a.dash == b.dash) && (!a.points || a.marker == b.marker);
}

void tell_apart(std::vector<Look>& looks, const std::vector<std::string>& labels) {
  auto repeats = [&](size_t i) {
    for (size_t j = 0; j < i; ++j)
      if (!labels[j].empty() && alike(looks[i], looks[j])) return true;
    return false;
  };
  for (size_t i = 0; i < looks.size(); ++i) {
    if (labels[i].empty() || looks[i].filled) continue;
    for (size_t k = 0; k < 8 && repeats(i); ++k) {
      if (looks[i].line) {
        const auto* at = std::find(std::begin(kDashes), std::end(kDashes), looks[i].dash);
        looks[i].dash = at + 1 < std::end(kDashes) ? at[1] : kDashes[0];
      } else {
        const auto* at = std::find(std::begin(kMarkers), std::end(kMarkers), looks[i].marker);
        looks[i].marker = at + 1 < std::end(kMarkers) ? at[1] : kMarkers[0];
      }
    }
  }
}

void set_dash(Dash d) {
  // marks and spaces in micrometres (PLplot's unit for them)
  PLINT mark[2] = {0, 0}, space[2] = {0, 0};
  PLINT n = 1;
  switch (d) {
    case Dash::Solid: n = 0; break;
    case Dash::Dashed: mark[0] = 1500, space[0] = 1500; break;
    case Dash::LongDash: mark[0] = 4500, space[0] = 1800; break;
    case Dash::Dotted: mark[0] = 350, space[0] = 1100; break;
    case Dash::DashDot: n = 2, mark[0] = 2600, space[0] = 1000, mark[1] = 400, space[1] = 1000; break;
  }
  plstyl(n, mark, space);
}

void draw_markers(std::vector<double> x, std::vector<double> y, const Look& look) {
  if (x.empty()) return;
  const Glyph g = glyph(look.marker);
  plschr(0, g.scale);
  plstring(static_cast<PLINT>(x.size()), x.data(), y.data(), g.text);
  plschr(0, kTextScale);
}

Size legend_size(Canvas& c, const std::vector<LegendEntry>& entries) {
  std::vector<std::pair<std::string, double>> texts;
  for (const LegendEntry& e : entries)
    for (const std::string& line : lines_of(e.text)) texts.push_back({line, kTextScale});
  c.measure_all(texts);
  const double h = c.char_height();
  Size s{0, 2 * kRowPad * h};
  double widest = 0;
  for (const LegendEntry& e : entries) {
    const std::vector<std::string> lines = lines_of(e.text);
    for (const std::string& line : lines) widest = std::max(widest, c.measure(line).advance());
    s.height += (kRow + kLine * static_cast<double>(lines.size() - 1)) * h;
  }
  s.width = (2 * kPad + kSample + kSampleGap) * h + widest;
  return s;
}

double outside_gap(const Canvas& c) { return 1.2 * c.char_height(); }
double outside_room(const Canvas& c, Size s) { return outside_gap(c) + s.width + kPad * c.char_height(); }

Box place_outside(const Canvas& c, const Box& area, Size s) {
  const double x0 = area.x1 + outside_gap(c);
  const double y0 = std::max(kPad * c.char_height(), (area.y0 + area.y1 - s.height) / 2);
  return {x0, y0, x0 + s.width, y0 + s.height};
}

Box place_inside(const Box& area, Size s, Corner asked, const std::function<int(const Box&)>& hides) {
  const double dx = kInset * (area.x1 - area.x0), dy = kInset * (area.y1 - area.y0);
  const double left = area.x0 + dx, right = area.x1 - dx - s.width, mid_x = (area.x0 + area.x1 - s.width) / 2;
  const double top = area.y0 + dy, bottom = area.y1 - dy - s.height, mid_y = (area.y0 + area.y1 - s.height) / 2;
  auto at = [&](double x, double y) { return Box{x, y, x + s.width, y + s.height}; };
  auto corner = [&](Corner k) {
    switch (k) {
      case Corner::TopLeft: return at(left, top);
      case Corner::BottomRight: return at(right, bottom);
      case Corner::BottomLeft: return at(left, bottom);
      case Corner::Right: return at(right, mid_y);
      default: return at(right, top);
    }
  };
  // the asked place first; then the corners, the middles of the edges
  std::vector<Box> places{corner(asked), corner(Corner::TopRight), corner(Corner::TopLeft), corner(Corner::BottomRight),
                          corner(Corner::BottomLeft), at(right, mid_y), at(left, mid_y), at(mid_x, top), at(mid_x, bottom)};
  Box best = places[0];
  int fewest = hides(best);
  for (const Box& b : places) {
    if (fewest == 0) break;
    const int n = hides(b);
    if (n < fewest) best = b, fewest = n;
  }
  return best;
}

void draw_legend(Canvas& c, const std::vector<LegendEntry>& entries, const Box& box) {
  if (entries.empty()) return;
  c.page_viewport();
  const double h = c.char_height(), H = c.height();
  PLFLT fx[5] = {box.x0, box.x1, box.x1, box.x0, box.x0}, fy[5] = {H - box.y0, H - box.y0, H - box.y1, H - box.y1, H - box.y0};
  plcol0(c.color({255, 255, 255}));
  plpsty(0);
  plfill(4, fx, fy);
  plcol0(c.color({200, 200, 200}));
  plwidth(1);
  set_dash(Dash::Solid);
  plline(5, fx, fy);
  double row = box.y0 + kRowPad * h;
  for (const LegendEntry& e : entries) {
    const std::vector<std::string> lines = lines_of(e.text);
    const double y = row + 0.5 * kRow * h, sx0 = box.x0 + kPad * h, sx1 = sx0 + kSample * h;
    plcol0(e.color);
    if (e.look.filled) {
      PLFLT bx[4] = {sx0, sx1, sx1, sx0}, by[4] = {H - y + 0.45 * h, H - y + 0.45 * h, H - y - 0.45 * h, H - y - 0.45 * h};
      plfill(4, bx, by);
    } else if (e.look.line) {
      PLFLT lx[2] = {sx0, sx1}, ly[2] = {H - y, H - y};
      plwidth(e.look.width);
      set_dash(e.look.dash);
      plline(2, lx, ly);
      set_dash(Dash::Solid);
    }
    if (e.look.points && e.look.line) draw_markers({(sx0 + sx1) / 2}, {H - y}, e.look);
    if (e.look.points && !e.look.line) draw_markers({sx0 + 0.15 * (sx1 - sx0), (sx0 + sx1) / 2, sx1 - 0.15 * (sx1 - sx0)},
                                                    {H - y, H - y, H - y}, e.look);
    for (size_t k = 0; k < lines.size(); ++k)
      c.text(TextBox::Kind::LegendText, lines[k], sx1 + kSampleGap * h, y + kLine * h * static_cast<double>(k), 0);
    c.report().legend.push_back({e.text, e.look.color, e.look.line, e.look.points, e.look.filled, e.look.dash, e.look.marker});
    row += (kRow + kLine * static_cast<double>(lines.size() - 1)) * h;
  }
  c.report().legend_box = box;
}

bool crosses(const Box& box, double x0, double y0, double x1, double y1) {
  // Liang-Barsky: clip the segment's parameter range [0, 1] against each edge
  double t0 = 0, t1 = 1;
  auto clip = [&](double p, double q) {
    if (p == 0) return q >= 0;
    const double r = q / p;
    if (p < 0) {
      if (r > t1) return false;
      t0 = std::max(t0, r);
    } else {
      if (r < t0) return false;
      t1 = std::min(t1, r);
    }
    return true;
  };
  const double dx = x1 - x0, dy = y1 - y0;
  return clip(-dx, x0 - box.x0) && clip(dx, box.x1 - x0) && clip(-dy, y0 - box.y0) && clip(dy, box.y1 - y0);
}

}  // namespace ember::plot::detail
