// For the saved-bytes exercises (8.1, 15.1): how a predicted count of bytes
// differs from the measured one, as a sum of terms like B*T*D floats. The
// difference is measured at several block shapes and fitted to the terms, so
// that the hint can say which sizes of tensor are missing or counted twice
// instead of only "you are off by 2048 bytes".
#pragma once

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "exercises/checks/check.h"

namespace check::saved {

struct BlockShape {
  int64_t B, T, D, h;
};

/// "B=2 T=8 D=16 h=2"
inline std::string show(const BlockShape& s) {
  return "B=" + std::to_string(s.B) + " T=" + std::to_string(s.T) + " D=" + std::to_string(s.D) +
         " h=" + std::to_string(s.h);
}

/// A size a saved tensor can have, in floats: "B·T·D" is B*T*D.
struct Term {
  std::string name;
  std::function<double(const BlockShape&)> floats;
};

/// The terms a block's saved tensors are made of.
inline std::vector<Term> block_terms(const std::function<double(int64_t D, int64_t h)>& parameters) {
  return {
      {"B·T·D", [](const BlockShape& s) { return double(s.B * s.T * s.D); }},
      {"B·T", [](const BlockShape& s) { return double(s.B * s.T); }},
      {"h·B·T·T", [](const BlockShape& s) { return double(s.h * s.B * s.T * s.T); }},
      {"B·T·T", [](const BlockShape& s) { return double(s.B * s.T * s.T); }},
      {"h·B·T", [](const BlockShape& s) { return double(s.h * s.B * s.T); }},
      {"the block's parameters", [parameters](const BlockShape& s) { return parameters(s.D, s.h); }},
  };
}

/// Shapes that tell the terms apart (each D divisible by its h).
inline std::vector<BlockShape> fit_shapes() {
  return {{2, 8, 16, 2}, {2, 8, 32, 2}, {2, 32, 16, 2}, {3, 8, 16, 4}, {1, 12, 24, 3},
          {2, 16, 8, 1}, {1, 8, 16, 1},  {3, 20, 16, 2}, {1, 6, 40, 4}};
}

/// Coefficients c with off(s) = sum_k c_k terms_k(s) floats at every shape
/// (off in floats), or nothing when no such sum fits. Least squares by the
/// normal equations, then rounded to quarters and verified at every shape.
inline std::optional<std::vector<double>> fit(const std::function<double(const BlockShape&)>& off,
                                              const std::vector<Term>& terms) {
  const std::vector<BlockShape> shapes = fit_shapes();
  const size_t k = terms.size();
  std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0.0));  // [A^T A | A^T d]
  std::vector<double> d;
  for (const BlockShape& s : shapes) {
    d.push_back(off(s));
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < k; ++j) a[i][j] += terms[i].floats(s) * terms[j].floats(s);
      a[i][k] += terms[i].floats(s) * d.back();
    }
  }
  for (size_t col = 0; col < k; ++col) {  // Gauss-Jordan with partial pivoting
    size_t pivot = col;
    for (size_t r = col + 1; r < k; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    std::swap(a[col], a[pivot]);
    if (std::abs(a[col][col]) < 1e-9) return std::nullopt;
    for (size_t r = 0; r < k; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t j = col; j <= k; ++j) a[r][j] -= f * a[col][j];
    }
  }
  std::vector<double> c(k);
  for (size_t i = 0; i < k; ++i) c[i] = std::round(a[i][k] / a[i][i] * 4) / 4;
  for (size_t n = 0; n < shapes.size(); ++n) {
    double sum = 0;
    for (size_t i = 0; i < k; ++i) sum += c[i] * terms[i].floats(shapes[n]);
    if (std::abs(sum - d[n]) > 0.5) return std::nullopt;
  }
  return c;
}

/// "2 B·T·D - 4 B·T"
inline std::string show(const std::vector<double>& c, const std::vector<Term>& terms) {
  std::string out;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] == 0) continue;
    const double m = std::abs(c[i]);
    out += out.empty() ? (c[i] < 0 ? "-" : "") : (c[i] < 0 ? " - " : " + ");
    out += (m == 1 ? "" : check::num(m) + " ") + terms[i].name;
  }
  return out.empty() ? "0" : out;
}

/// A named mistake: the coefficients of its difference, and what it means.
struct Mistake {
  std::vector<double> off;  // per term, in floats
  std::string hint;
};

/// The hint for a prediction that differs from the measurement: the
/// mistake whose difference it is, else the difference in terms.
inline std::string hint_for(const std::function<int64_t(const BlockShape&)>& predicted,
                            const std::function<int64_t(const BlockShape&)>& measured, const std::vector<Term>& terms,
                            const std::vector<Mistake>& mistakes) {
  bool in_floats = true;
  for (const BlockShape& s : fit_shapes()) in_floats = in_floats && predicted(s) * 4 == measured(s);
  if (in_floats) return "you count floats: a float32 takes 4 bytes";
  const auto c = fit([&](const BlockShape& s) { return double(predicted(s) - measured(s)) / 4; }, terms);
  if (!c)
    return "compare several shapes: which of B, T, D, h does the difference grow with? (it is no sum of "
           "B·T·D, B·T, h·B·T·T, B·T·T, h·B·T and the parameters)";
  for (const Mistake& m : mistakes) {
    std::vector<double> want = m.off;
    want.resize(c->size(), 0.0);
    if (want == *c) return "your count minus the measured one is " + show(*c, terms) + " floats: " + m.hint;
  }
  return "your count minus the measured one is " + show(*c, terms) +
         " floats, at every shape: which saved tensors have that size?";
}

}  // namespace check::saved
