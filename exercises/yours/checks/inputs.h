// Random inputs the build-your-own checkers share: the same tensor in mini
// and in ember, of a random shape (dims of size 1 and 0 among them) and of
// any layout stage 2 makes (new, transposed, sliced with a step, expanded).
#pragma once

#include <string>
#include <utility>

#include "exercises/checks/check.h"
#include "exercises/yours/checks/yours.h"
#include "mini/tensor.h"

namespace yours {

using check::show;

inline int64_t count(const ember::Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// {1, 2}: dims, or a shape as a call is written
inline std::string dims_text(const ember::Shape& dims) {
  std::string out = "{";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "}";
}

// ---- random inputs: the same tensor in mini and in ember, any layout ----

struct Input {
  mini::Tensor m;
  ember::Tensor e;
  std::string how;  // "a new tensor", "a transposed view", ...

  std::string describe() const {
    return "shape " + show(m.shape()) + ", strides " + show(m.strides()) + ", offset " + std::to_string(m.offset()) +
           " (" + how + ")";
  }
};

inline ember::Shape random_shape(ember::Generator& gen, int max_dims = 4) {
  const int64_t sizes[] = {0, 1, 1, 1, 2, 2, 3, 3, 4, 4, 2, 3, 4, 2, 3, 4, 2, 3, 1, 2};
  ember::Shape s(gen.next_below(static_cast<uint64_t>(max_dims) + 1));
  for (int64_t& v : s) v = sizes[gen.next_below(20)];
  return s;
}

// A shape that broadcasts to `out`: some leading dims dropped, some sizes made 1.
inline ember::Shape operand_shape(const ember::Shape& out, ember::Generator& gen) {
  ember::Shape s(out.begin() + static_cast<int64_t>(gen.next_below(2) ? gen.next_below(out.size() + 1) : 0), out.end());
  for (int64_t& v : s)
    if (gen.next_below(3) == 0) v = 1;
  return s;
}

// n numbers of magnitude 0.25 to 2.25 (positive, or of either sign), plus shift.
inline std::vector<double> draw(int64_t n, ember::Generator& gen, bool positive, double shift) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    x = 0.25 + 2 * gen.next_double();
    if (!positive && gen.next_below(2)) x = -x;
    x += shift;
  }
  return v;
}

inline Input fresh(const ember::Shape& shape, ember::Generator& gen, bool positive, double shift) {
  const std::vector<double> v = draw(count(shape), gen, positive, shift);
  return {mini::Tensor(v, shape), ember::tensor(v, shape), "a new tensor"};
}

// A tensor of `shape` laid out one of four ways, the same in both frameworks.
inline Input random_input(const ember::Shape& shape, ember::Generator& gen, bool positive = false, double shift = 0) {
  const size_t n = shape.size();
  switch (gen.next_below(4)) {
    case 1:
      if (n >= 2) {  // a new tensor with two dims swapped, transposed back
        const int64_t d0 = static_cast<int64_t>(gen.next_below(n - 1));
        const int64_t d1 = d0 + 1 + static_cast<int64_t>(gen.next_below(n - 1 - static_cast<size_t>(d0)));
        ember::Shape base = shape;
        std::swap(base[static_cast<size_t>(d0)], base[static_cast<size_t>(d1)]);
        Input in = fresh(base, gen, positive, shift);
        return {in.m.transpose(d0, d1), in.e.transpose(d0, d1),
                "a transposed view: x.transpose(" + std::to_string(d0) + ", " + std::to_string(d1) + ")"};
      }
      [[fallthrough]];
    case 2:
      if (n >= 1) {  // every step-th element of a longer dim, from start
        const int64_t d = static_cast<int64_t>(gen.next_below(n));
        const int64_t step = 2 + static_cast<int64_t>(gen.next_below(2));
        const int64_t start = static_cast<int64_t>(gen.next_below(2));
        const int64_t size = shape[static_cast<size_t>(d)];
        const int64_t stop = size == 0 ? start : start + (size - 1) * step + 1;
        ember::Shape base = shape;
        base[static_cast<size_t>(d)] = stop + static_cast<int64_t>(gen.next_below(2));
        Input in = fresh(base, gen, positive, shift);
        const std::string args = std::to_string(d) + ", " + std::to_string(start) + ", " + std::to_string(stop) + ", " +
                                 std::to_string(step);
        return {in.m.slice(d, start, stop, step), in.e.slice(d, start, stop, step),
                "a view sliced with a step: x.slice(" + args + ") of x of shape " + show(base)};
      }
      [[fallthrough]];
    case 3: {  // expanded from fewer dims and sizes 1
      ember::Shape base = operand_shape(shape, gen);
      Input in = fresh(base, gen, positive, shift);
      return {in.m.expand(shape), in.e.expand(shape),
              "an expanded view: x.expand(" + dims_text(shape) + ") of x of shape " + show(base)};
    }
    default: return fresh(shape, gen, positive, shift);
  }
}

// ---- comparing mini's tensors with ember's ----

inline std::vector<double> values(const ember::Tensor& t) { return t.contiguous().to_vector<double>(); }

inline bool same(const std::vector<double>& got, const std::vector<double>& want, double rel) {
  if (got.size() != want.size()) return false;
  for (size_t k = 0; k < got.size(); ++k)
    if (!close(got[k], want[k], rel)) return false;
  return true;
}

inline bool same(const mini::Tensor& got, const ember::Tensor& want, double rel) {
  return got.shape() == want.shape() && same(got.values(), values(want), rel);
}

/// "[1, 0, 2]": the index of the k-th element (row-major) of a tensor of `shape`.
inline std::string index_text(int64_t k, const ember::Shape& shape) {
  ember::Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = k % shape[d];
    k /= shape[d];
  }
  const std::string s = show(index);
  return "[" + s.substr(1, s.size() - 2) + "]";
}

/// The first element where got (of want's shape) is not want, as a
/// sentence; empty when there is none.
inline std::string first_difference(const mini::Tensor& got, const ember::Tensor& want, double rel) {
  const std::vector<double> g = got.values(), w = values(want);
  for (size_t k = 0; k < w.size(); ++k)
    if (!close(g[k], w[k], rel))
      return "element " + index_text(static_cast<int64_t>(k), want.shape()) + " is " + check::num(g[k]) +
             ", but should be " + check::num(w[k]);
  return "";
}

}  // namespace yours
