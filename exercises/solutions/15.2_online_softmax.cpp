// Exercise 15.2: Softmax one tile at a time, a reference solution.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "exercises/exercise.h"

namespace ex15_2 {

struct Running {
  double m = -std::numeric_limits<double>::infinity();
  double l = 0;
  std::vector<double> acc;
};

void fold(Running& r, const std::vector<double>& scores, const std::vector<std::vector<double>>& values) {
  double m_new = r.m;
  for (double s : scores) m_new = std::max(m_new, s);
  const double corr = std::exp(r.m - m_new);  // 0 before the first tile (m = -inf)
  r.l *= corr;
  for (double& a : r.acc) a *= corr;
  for (size_t j = 0; j < scores.size(); ++j) {
    const double p = std::exp(scores[j] - m_new);
    r.l += p;
    for (size_t e = 0; e < r.acc.size(); ++e) r.acc[e] += p * values[j][e];
  }
  r.m = m_new;
}

std::vector<double> finish(const Running& r) {
  std::vector<double> out = r.acc;
  for (double& o : out) o /= r.l;
  return out;
}

}  // namespace ex15_2
