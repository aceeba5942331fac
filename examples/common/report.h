// What the examples that check themselves share (higher_order,
// forward_vs_reverse): one line per check with its error and tolerance, and
// a count of the checks that failed, for the exit status.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace ember::examples {

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
