// Checks exercise 15.2: rows of scores folded in tiles of many sizes against
// the softmax of the whole row, times the values.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "exercises/checks/check.h"

namespace ex15_2 {
struct Running {
  double m = -std::numeric_limits<double>::infinity();
  double l = 0;
  std::vector<double> acc;
};
void fold(Running& r, const std::vector<double>& scores, const std::vector<std::vector<double>>& values);
std::vector<double> finish(const Running& r);
}  // namespace ex15_2

namespace {

using Rows = std::vector<std::vector<double>>;

// softmax(s) · V over the whole row, in long double.
std::vector<double> direct(const std::vector<double>& s, const Rows& v) {
  long double mx = -INFINITY, l = 0;
  for (double x : s) mx = std::max<long double>(mx, x);
  std::vector<long double> acc(v[0].size(), 0);
  for (size_t j = 0; j < s.size(); ++j) {
    const long double p = std::exp(static_cast<long double>(s[j]) - mx);
    l += p;
    for (size_t e = 0; e < acc.size(); ++e) acc[e] += p * v[j][e];
  }
  std::vector<double> out;
  for (long double a : acc) out.push_back(static_cast<double>(a / l));
  return out;
}

void same_as_direct(const std::vector<double>& s, const Rows& v, size_t tile, const std::string& what) {
  ex15_2::Running r;
  r.acc.assign(v[0].size(), 0.0);
  for (size_t j0 = 0; j0 < s.size(); j0 += tile) {
    const size_t j1 = std::min(s.size(), j0 + tile);
    ex15_2::fold(r, std::vector<double>(s.begin() + j0, s.begin() + j1), Rows(v.begin() + j0, v.begin() + j1));
  }
  const std::vector<double> got = ex15_2::finish(r), want = direct(s, v);
  check::expect(got.size() == want.size(), what + ": finish() gave " + std::to_string(got.size()) + " values, expected " +
                                               std::to_string(want.size()));
  for (size_t e = 0; e < std::min(got.size(), want.size()); ++e)
    check::expect_near(got[e], want[e], what + ", tiles of " + std::to_string(tile) + ", value " + std::to_string(e),
                       1e-12, "rescale l and acc by exp(m - m') before adding the tile's terms");
}

Rows values(size_t n, size_t dv) {
  Rows v(n, std::vector<double>(dv));
  for (size_t j = 0; j < n; ++j)
    for (size_t e = 0; e < dv; ++e) v[j][e] = std::sin(0.7 * static_cast<double>(j) + 1.3 * static_cast<double>(e));
  return v;
}

}  // namespace

check::Exercise check::exercise() {
  return {"15.2", "Softmax one tile at a time", "docs/book/15_memory.md", {
    {"one tile holding the whole row", [] {
       std::vector<double> s = {0.5, -1.0, 2.0, 0.25};
       same_as_direct(s, values(4, 3), 4, "4 scores");
     }},
    {"scores that rise tile after tile (the max changes in every tile)", [] {
       std::vector<double> s;
       for (int j = 0; j < 24; ++j) s.push_back(0.3 * j);
       for (size_t tile : {1, 3, 5, 8}) same_as_direct(s, values(24, 2), tile, "rising scores");
     }},
    {"scores that fall (the first tile holds the max)", [] {
       std::vector<double> s;
       for (int j = 0; j < 24; ++j) s.push_back(-0.4 * j);
       for (size_t tile : {2, 7}) same_as_direct(s, values(24, 2), tile, "falling scores");
     }},
    {"scores near 1000: exp without the max would overflow", [] {
       std::vector<double> s = {1000.0, 999.0, 1003.5, 998.0, 1001.0, 1002.0, 997.0};
       for (size_t tile : {1, 2, 3}) same_as_direct(s, values(7, 4), tile, "scores near 1000");
     }},
  }};
}
