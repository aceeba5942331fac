// Stage 3, the reference solution: broadcasting is expand(), and a reduction
// is a loop over the input's indices that adds each element into the place
// its index keeps.
#include "mini/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)"
std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

// Which of x's dims `dims` names (all of them when it names none); refuses a
// dim out of range or given twice.
std::vector<bool> reduced_dims(const Tensor& x, const Shape& dims, const std::string& op) {
  std::vector<bool> reduced(static_cast<size_t>(x.dim()), dims.empty());
  for (int64_t d : dims) {
    MINI_CHECK(d >= 0 && d < x.dim(), op, "dim " << d << " of a tensor of shape " << str(x.shape()));
    MINI_CHECK(!reduced[static_cast<size_t>(d)], op, "dim " << d << " given twice, in " << str(dims));
    reduced[static_cast<size_t>(d)] = true;
  }
  return reduced;
}

// Each element of x combined into the place of the result its index keeps
// (the reduced dims' positions set to 0), starting from `start`: the
// keepdim shape, then without the reduced dims unless keepdim.
Tensor reduce(const Tensor& x, const std::vector<bool>& reduced, bool keepdim, double start,
              double (*combine)(double, double)) {
  Shape kept = x.shape(), dropped;
  for (size_t d = 0; d < kept.size(); ++d) {
    if (reduced[d]) kept[d] = 1;
    else dropped.push_back(kept[d]);
  }
  Tensor out(std::vector<double>(static_cast<size_t>(numel(kept)), start), kept);
  for (int64_t k = 0; k < x.numel(); ++k) {
    Index index = unravel(k, x.shape());
    const double v = x.at(index);
    for (size_t d = 0; d < index.size(); ++d)
      if (reduced[d]) index[d] = 0;
    double& into = out.at(index);
    into = combine(into, v);
  }
  return keepdim ? out : out.view(dropped);
}

}  // namespace

Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 1; i <= n; ++i) {  // the i-th dim from the right; a missing dim counts as a size 1
    const int64_t x = i <= a.size() ? a[a.size() - i] : 1;
    const int64_t y = i <= b.size() ? b[b.size() - i] : 1;
    MINI_CHECK(x == y || x == 1 || y == 1, op,
               "shapes " << str(a) << " and " << str(b) << " do not broadcast: sizes " << x << " and " << y
                         << " in dim " << n - i << " of the result");
    out[n - i] = x == 1 ? y : x;
  }
  return out;
}

Tensor map(const Tensor& x, const std::function<double(double)>& f) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(x.numel()));
  for (double v : x.values()) out.push_back(f(v));  // values(): in row-major order of the index, any strides
  return Tensor(std::move(out), x.shape());
}

Tensor zip(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& f, const std::string& op) {
  const Shape shape = broadcast_shape(a.shape(), b.shape(), op);
  // Both seen with the result's shape: a repeated dim has stride 0, so one
  // index reads both inputs, with no index arithmetic here.
  const Tensor ea = a.expand(shape), eb = b.expand(shape);
  std::vector<double> out(static_cast<size_t>(numel(shape)));
  for (int64_t k = 0; k < numel(shape); ++k) {
    const Index index = unravel(k, shape);
    out[static_cast<size_t>(k)] = f(ea.at(index), eb.at(index));
  }
  return Tensor(std::move(out), shape);
}

Tensor add(const Tensor& a, const Tensor& b) { return zip(a, b, [](double x, double y) { return x + y; }, "add"); }
Tensor sub(const Tensor& a, const Tensor& b) { return zip(a, b, [](double x, double y) { return x - y; }, "sub"); }
Tensor mul(const Tensor& a, const Tensor& b) { return zip(a, b, [](double x, double y) { return x * y; }, "mul"); }
Tensor div(const Tensor& a, const Tensor& b) { return zip(a, b, [](double x, double y) { return x / y; }, "div"); }
Tensor neg(const Tensor& x) { return map(x, [](double v) { return -v; }); }
Tensor exp(const Tensor& x) { return map(x, [](double v) { return std::exp(v); }); }
Tensor log(const Tensor& x) { return map(x, [](double v) { return std::log(v); }); }
Tensor tanh(const Tensor& x) { return map(x, [](double v) { return std::tanh(v); }); }
Tensor relu(const Tensor& x) { return map(x, [](double v) { return v > 0 ? v : 0.0; }); }

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  return reduce(x, reduced_dims(x, dims, "sum"), keepdim, 0.0, [](double acc, double v) { return acc + v; });
}

Tensor max(const Tensor& x, int64_t d, bool keepdim) {
  const std::vector<bool> reduced = reduced_dims(x, {d}, "max");
  MINI_CHECK(x.shape()[static_cast<size_t>(d)] > 0, "max",
             "over dim " << d << " of size 0 (shape " << str(x.shape()) << "): the max of nothing");
  // -inf, below every number: a row's max is one of its elements, even when all are negative.
  return reduce(x, reduced, keepdim, -std::numeric_limits<double>::infinity(),
                [](double acc, double v) { return v > acc ? v : acc; });
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());  // the dims broadcasting put in front
  bool fits = lead >= 0;
  for (size_t d = 0; fits && d < shape.size(); ++d)
    fits = shape[d] == 1 || shape[d] == x.shape()[d + static_cast<size_t>(lead)];
  MINI_CHECK(fits, "sum_to", "shape " << str(shape) << " does not broadcast to x's shape " << str(x.shape()));
  Shape dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (int64_t d = lead; d < x.dim(); ++d)  // a size 1 that broadcasting repeated
    if (shape[static_cast<size_t>(d - lead)] == 1 && x.shape()[static_cast<size_t>(d)] != 1) dims.push_back(d);
  if (dims.empty()) return Tensor(x.values(), shape);  // nothing was repeated (sum over no dims would sum all)
  return Tensor(sum(x, dims, true).values(), shape);
}

}  // namespace mini
