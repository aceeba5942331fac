// Checks exercise 15.2: rows of scores folded in tiles of many sizes against
// the softmax of the whole row, times the values. A wrong result is compared
// with the usual mistakes' (no max subtracted, no rescaling when the max
// rises, of l or of acc only, the factor upside down, the max never stored,
// no division by l), folded here the same way, to name the one it is.
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

// A way of folding, right or with one typical mistake.
struct Way {
  bool rescale_l = true, rescale_acc = true, inverted = false, keep_m = true, subtract_max = true, divide = true;
};

std::vector<double> folded(const std::vector<double>& s, const Rows& v, size_t tile, const Way& w) {
  double m = -INFINITY, l = 0;
  std::vector<double> acc(v[0].size(), 0.0);
  for (size_t j0 = 0; j0 < s.size(); j0 += tile) {
    const size_t j1 = std::min(s.size(), j0 + tile);
    double m_new = m;
    for (size_t j = j0; j < j1; ++j) m_new = std::max(m_new, s[j]);
    const double corr = w.inverted ? std::exp(m_new - m) : std::exp(m - m_new);
    if (w.subtract_max && w.rescale_l) l *= corr;
    if (w.subtract_max && w.rescale_acc)
      for (double& a : acc) a *= corr;
    for (size_t j = j0; j < j1; ++j) {
      const double p = std::exp(s[j] - (w.subtract_max ? m_new : 0.0));
      l += p;
      for (size_t e = 0; e < acc.size(); ++e) acc[e] += p * v[j][e];
    }
    if (w.keep_m) m = m_new;
  }
  if (w.divide)
    for (double& a : acc) a /= l;
  return acc;
}

bool finite(const std::vector<double>& a) {
  for (double x : a)
    if (!std::isfinite(x)) return false;
  return true;
}

bool near(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::abs(a[i] - b[i]) <= 1e-12 * std::max(1.0, std::abs(b[i]))) && !(std::isnan(a[i]) && std::isnan(b[i])))
      return false;
  return true;
}

std::string mistake(const std::vector<double>& got, const std::vector<double>& s, const Rows& v, size_t tile) {
  const std::vector<std::pair<Way, std::string>> ways = {
      {{.subtract_max = false},
       "exp(1000) is past the largest double (infinity), and inf / inf is NaN: subtracting the running max keeps "
       "every exp at most 1"},
      {{.rescale_l = false, .rescale_acc = false},
       "when the max rose, l and acc kept their terms exp(s - m) of the old max, while the new ones are exp(s - m'): "
       "the old terms must be brought to the new max first"},
      {{.rescale_acc = false}, "l was rescaled to the new max, acc was not: both are sums of exp(s - m) terms"},
      {{.rescale_l = false}, "acc was rescaled to the new max, l was not: both are sums of exp(s - m) terms"},
      {{.inverted = true}, "the rescaling factor is upside down (before the first tile it is exp(+infinity), and "
                           "infinity times the 0 of l is NaN): what takes exp(s - m) to exp(s - m'), with m' >= m?"},
      {{.keep_m = false}, "only the last tile counts: the running max is never stored, so each tile rescales what "
                          "came before by exp(-infinity) = 0"},
      {{.divide = false}, "acc is the weighted sum before normalising: the weights exp(s - m) sum to l, not to 1"},
  };
  for (const auto& [way, hint] : ways) {
    const std::vector<double> theirs = folded(s, v, tile, way);
    if (!way.subtract_max && finite(theirs)) continue;  // no overflow here: not told apart from the right way
    if (near(got, theirs)) return hint;
  }
  for (double g : got)
    if (!std::isfinite(g)) return "a value is " + check::num(g) + ": which exp overflowed, or which 0 met an infinity?";
  return "what l and acc were summed with must match the max when the next terms are added";
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
                                               std::to_string(want.size()),
                "one value per column of the value rows (dv)");
  for (size_t e = 0; e < got.size(); ++e)
    if (!(std::abs(got[e] - want[e]) <= 1e-12))
      check::fail(what + ", tiles of " + std::to_string(tile) + ": the output is " + check::show(got) +
                      ", but should be " + check::show(want),
                  mistake(got, s, v, tile));
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
