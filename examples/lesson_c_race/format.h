// lesson_c_race, the small helpers every part uses: numbers into text, the
// columns of the summary table, a mean over part of a vector. Nothing here
// is about the lesson; read it when a part calls it.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace lesson_c {

// One number through a printf format, e.g. fmt("%.2f", 0.5) = "0.50".
inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// s and spaces up to `width` characters (at least one).
inline std::string padded(const std::string& s, size_t width) {
  return s + std::string(s.size() < width ? width - s.size() : 1, ' ');
}

// The mean of v[from, to), NaN when the range is empty.
inline double mean_of(const std::vector<double>& v, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += v[i];
  return to > from ? s / static_cast<double>(to - from) : NAN;
}

// One row of a table: cell i padded to |widths[i]| characters, left-aligned
// for a negative width, right-aligned otherwise; two spaces between cells.
inline std::string table_line(const std::vector<std::string>& cells, const std::vector<int>& widths) {
  std::string s;
  for (size_t i = 0; i < cells.size(); ++i) {
    const int w = widths[i];
    std::string c = cells[i];
    if (static_cast<int>(c.size()) < std::abs(w)) {
      const std::string pad(std::abs(w) - c.size(), ' ');
      c = w < 0 ? c + pad : pad + c;
    }
    s += (i ? "  " : "") + c;
  }
  return s + "\n";
}

}  // namespace lesson_c
