// What the examples that check themselves share (higher_order,
// forward_vs_reverse): one line per check with its error and tolerance, and
// a count of the checks that failed, for the exit status; and the layout
// check of every picture the book shows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "base/error.h"

namespace ember::examples {

/// A picture with a fault of its layout (plot::layout_problems: texts that
/// overlap, a bar without its name, a cut legend text, two legend entries
/// alike) is an error of the program that drew it, naming the picture.
inline void check_picture(const std::vector<std::string>& problems, const char* program, const std::string& path) {
  EMBER_CHECK(problems.empty(), program, path << ": " << (problems.empty() ? "" : problems.front()));
}

/// How many report() lines said FAILED.
inline int& failed_checks() {
  static int n = 0;
  return n;
}

/// "  what   error 1.2e-16  (tolerance 1e-14) ok"
inline void report(const char* what, double err, double tol) {
  const bool ok = err <= tol;
  if (!ok) ++failed_checks();
  std::printf("  %-60s error %.2e  (tolerance %.0e) %s\n", what, err, tol, ok ? "ok" : "FAILED");
}

inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace ember::examples
