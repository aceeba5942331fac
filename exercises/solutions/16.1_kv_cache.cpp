// Exercise 16.1: A key-value cache, a reference solution.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "exercises/exercise.h"

namespace ex16_1 {

using Rows = std::vector<std::vector<double>>;

struct Cache {
  Rows keys, values;
};

void append(Cache& cache, const Rows& k, const Rows& v) {
  cache.keys.insert(cache.keys.end(), k.begin(), k.end());
  cache.values.insert(cache.values.end(), v.begin(), v.end());
}

Rows attend(const Cache& cache, const Rows& q) {
  const size_t n = cache.keys.size(), T = q.size(), d = q.empty() ? 0 : q[0].size();
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Rows out;
  for (size_t t = 0; t < T; ++t) {
    const size_t last = n - T + t;  // this query's position: it sees keys 0..last
    std::vector<double> s(last + 1);
    double mx = -INFINITY;
    for (size_t j = 0; j <= last; ++j) {
      double dot = 0;
      for (size_t e = 0; e < d; ++e) dot += q[t][e] * cache.keys[j][e];
      s[j] = dot * scale;
      mx = std::max(mx, s[j]);
    }
    double sum = 0;
    for (double& x : s) sum += (x = std::exp(x - mx));
    std::vector<double> o(cache.values[0].size(), 0.0);
    for (size_t j = 0; j <= last; ++j)
      for (size_t e = 0; e < o.size(); ++e) o[e] += s[j] / sum * cache.values[j][e];
    out.push_back(o);
  }
  return out;
}

}  // namespace ex16_1
