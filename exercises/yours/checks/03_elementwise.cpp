// Checks stage 3 (docs/book/build_your_own/03_elementwise.md): mini's
// elementwise ops and reductions against ember's (float64), on many random
// seeded inputs: random shapes with dims of size 1 and 0, broadcasting in
// every position (missing leading dims, sizes 1 on either side), and inputs
// of every layout stage 2 makes (new, transposed, sliced with a step,
// expanded), for both operands.
//
// Tolerances: an elementwise op computes the same one operation on the same
// doubles on both sides, so the results agree to the last bit or two (std::
// and ember's own exp, log, tanh may round differently): 1e-12 relative. A
// sum adds up to 256 numbers of magnitude below 2.25 in an order that may
// differ: each addition rounds by at most 2^-53 of the running sum, so the
// results differ by at most about 256 * 1.1e-16 * 576 < 2e-11: 1e-10. (Below
// 1 in magnitude the tolerances are absolute: a sum near 0 is only as exact
// as its terms are large.) max copies one element: exact.
//
// When a result differs, the checker computes what each typical mistake
// would have given on the same input (shapes lined up from the left, an input
// read from its storage as if it were contiguous, keepdim ignored, the wrong
// dims summed, a max that starts from 0, a sum_to that forgets the leading
// dims or the dims of size 1) and names the one that matches.
#include <optional>

#include "exercises/yours/checks/inputs.h"
#include "exercises/yours/checks/yours.h"
#include "mini/ops.h"

namespace {

using check::fail;
using check::show;

using yours::count;
using yours::dims_text;
using yours::Input;
using yours::operand_shape;
using yours::random_input;
using yours::random_shape;

// ---- results, and the mistakes' results ----

struct Result {
  ember::Shape shape;
  std::vector<double> values;  // row-major
};

Result result(const ember::Tensor& t) { return {t.shape(), t.contiguous().to_vector<double>()}; }
Result result(const mini::Tensor& t) { return {t.shape(), t.values()}; }

bool same(const Result& got, const Result& want, double rel) {
  if (got.shape != want.shape || got.values.size() != want.values.size()) return false;
  for (size_t k = 0; k < got.values.size(); ++k)
    if (!yours::close(got.values[k], want.values[k], rel)) return false;
  return true;
}

// x's numbers as they lie in its storage from its offset, as if it were
// contiguous: what a loop over storage[offset + k] reads (none when that
// would read past the storage's end).
std::optional<std::vector<double>> as_lying(const mini::Tensor& x, int64_t n) {
  if (!x.storage() || x.offset() + n > static_cast<int64_t>(x.storage()->size())) return std::nullopt;
  return std::vector<double>(x.storage()->begin() + x.offset(), x.storage()->begin() + x.offset() + n);
}

// Fails unless got is want: the shape, then each element.
void compare(const Result& got, const Result& want, double rel, const std::string& what, const std::string& where,
             const std::function<std::string()>& hint) {
  if (got.shape != want.shape)
    fail(what + " has shape " + show(got.shape) + ", but should have " + show(want.shape) + where, hint());
  for (size_t k = 0; k < want.values.size(); ++k)
    if (!yours::close(got.values[k], want.values[k], rel)) {
      ember::Shape index(want.shape.size());
      int64_t rest = static_cast<int64_t>(k);
      for (size_t d = want.shape.size(); d-- > 0;) {
        index[d] = rest % want.shape[d];
        rest /= want.shape[d];
      }
      const std::string at = "[" + show(index).substr(1, show(index).size() - 2) + "]";
      fail(what + ": element " + at + " is " + check::num(got.values[k]) + ", but should be " +
               check::num(want.values[k]) + where,
           hint());
    }
}

const std::string kStrided =
    "an input was read from its storage as if it were contiguous (storage[offset + k]): a transposed, sliced or "
    "expanded view's elements do not lie in row-major order; read each through its index (at(), position())";

// Runs f, which calls mini; a refusal fails with the checker's own hint.
template <typename F>
mini::Tensor run(F f, const std::string& what, const std::string& where, const std::string& hint) {
  try {
    return f();
  } catch (const mini::Error& e) {
    fail("your code refused " + what + ": " + e.what() + where, hint);
  }
}

// ---- broadcast_shape ----

// The shapes lined up from the left (the mistake): none when they do not fit so.
std::optional<ember::Shape> left_aligned(const ember::Shape& a, const ember::Shape& b) {
  ember::Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = i < a.size() ? a[i] : 1, y = i < b.size() ? b[i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

const std::string kLeft =
    "the shapes were lined up from the left: broadcasting lines them up from the right (the last dims together), "
    "and a shape with fewer dims is missing leading ones";

void broadcast_shapes() {
  ember::Generator gen(30);
  for (int trial = 0; trial < 300; ++trial) {
    const ember::Shape out = random_shape(gen);
    ember::Shape a = operand_shape(out, gen), b = operand_shape(out, gen);
    if (trial % 2) std::swap(a, b);
    const ember::Shape want = ember::broadcast_shapes(a, b, "broadcast");
    const std::string what = "broadcast_shape(" + show(a) + ", " + show(b) + ")";
    ember::Shape got;
    try {
      got = mini::broadcast_shape(a, b);
    } catch (const mini::Error& e) {
      fail(what + " refused: " + e.what() + "; the shapes broadcast to " + show(want),
           !left_aligned(a, b) ? kLeft : "two sizes fit when they are equal or one of them is 1");
    }
    if (got == want) continue;
    fail(what + " is " + show(got) + ", but should be " + show(want),
         left_aligned(a, b) == got ? kLeft
                                   : "line the shapes up from the right; a missing dim counts as a size 1; the result "
                                     "takes the larger of two sizes that fit");
  }
}

// ---- map and the unary ops ----

enum class Unary { Map, Neg, Exp, Log, Tanh, Relu };
const char* const kUnaryNames[] = {"map(x, v -> 3v + 1)", "neg(x)", "exp(x)", "log(x)", "tanh(x)", "relu(x)"};

double apply(Unary op, double v) {
  switch (op) {
    case Unary::Map: return 3 * v + 1;
    case Unary::Neg: return -v;
    case Unary::Exp: return std::exp(v);
    case Unary::Log: return std::log(v);
    case Unary::Tanh: return std::tanh(v);
    case Unary::Relu: return v > 0 ? v : 0.0;
  }
  return 0;
}

int unary_ops() {
  int strided = 0;
  for (int o = 0; o < 6; ++o) {
    const Unary op = static_cast<Unary>(o);
    ember::Generator gen(31 + static_cast<uint64_t>(o));
    for (int trial = 0; trial < 50; ++trial) {
      const Input x = random_input(random_shape(gen), gen, op == Unary::Log);
      strided += !x.m.is_contiguous();
      const std::string where = "\n  x: " + x.describe();
      const mini::Tensor y = run(
          [&] {
            switch (op) {
              case Unary::Map: return mini::map(x.m, [](double v) { return 3 * v + 1; });
              case Unary::Neg: return mini::neg(x.m);
              case Unary::Exp: return mini::exp(x.m);
              case Unary::Log: return mini::log(x.m);
              case Unary::Tanh: return mini::tanh(x.m);
              case Unary::Relu: return mini::relu(x.m);
            }
            return x.m;
          },
          kUnaryNames[o], where, "a unary op refuses nothing");
      ember::Tensor want;
      switch (op) {
        case Unary::Map:
          want = x.e.mul(ember::tensor({3.0}, ember::kFloat64)).add(ember::tensor({1.0}, ember::kFloat64));
          break;
        case Unary::Neg: want = x.e.neg(); break;
        case Unary::Exp: want = x.e.exp(); break;
        case Unary::Log: want = x.e.log(); break;
        case Unary::Tanh: want = x.e.tanh(); break;
        case Unary::Relu: want = x.e.relu(); break;
      }
      if (op == Unary::Map) want = want.view(x.e.shape());
      compare(result(y), result(want), 1e-12, kUnaryNames[o], where, [&] {
        if (const auto lying = as_lying(x.m, x.m.numel())) {
          Result r{x.m.shape(), *lying};
          for (double& v : r.values) v = apply(op, v);
          if (same(result(y), r, 1e-12)) return kStrided;
        }
        return std::string("f of element [i, j, ...] of x is element [i, j, ...] of the result");
      });
      check::expect(y.is_contiguous(), std::string(kUnaryNames[o]) + " is not contiguous (strides " +
                                           show(y.strides()) + ")" + where,
                    "map returns a new tensor, laid out as a new tensor of its shape is");
    }
  }
  return strided;
}

// ---- zip and the binary ops ----

enum class Binary { Add, Sub, Mul, Div };
const char* const kBinaryNames[] = {"add", "sub", "mul", "div"};

double apply(Binary op, double a, double b) {
  switch (op) {
    case Binary::Add: return a + b;
    case Binary::Sub: return a - b;
    case Binary::Mul: return a * b;
    case Binary::Div: return a / b;
  }
  return 0;
}

// The counts of pairs with an input that is not contiguous, and with each
// kind of broadcasting.
struct Seen {
  int strided = 0, fewer_dims = 0, ones = 0;
};

void binary_pair(uint64_t seed, Seen& seen) {
  ember::Generator gen(300 + seed);
  const Binary op = static_cast<Binary>(seed % 4);
  const ember::Shape out = random_shape(gen);
  const Input a = random_input(operand_shape(out, gen), gen);
  const Input b = random_input(operand_shape(out, gen), gen);
  seen.strided += !a.m.is_contiguous() || !b.m.is_contiguous();
  seen.fewer_dims += a.m.dim() != b.m.dim();
  for (const Input* in : {&a, &b})
    for (size_t d = 0; d < in->m.shape().size(); ++d)
      if (in->m.shape()[d] == 1 && out[d + out.size() - in->m.shape().size()] != 1) {
        ++seen.ones;
        d = in->m.shape().size();
      }
  const std::string name = kBinaryNames[static_cast<int>(op)];
  const std::string what = name + "(a, b)";
  const std::string where = "\n  seed " + std::to_string(seed) + "\n  a: " + a.describe() + "\n  b: " + b.describe();
  const mini::Tensor y = run(
      [&] {
        switch (op) {
          case Binary::Add: return mini::add(a.m, b.m);
          case Binary::Sub: return mini::sub(a.m, b.m);
          case Binary::Mul: return mini::mul(a.m, b.m);
          case Binary::Div: return mini::div(a.m, b.m);
        }
        return a.m;
      },
      what, where,
      !left_aligned(a.m.shape(), b.m.shape()) ? kLeft : "these shapes broadcast: what made your code refuse them?");
  ember::Tensor want;
  switch (op) {
    case Binary::Add: want = a.e.add(b.e); break;
    case Binary::Sub: want = a.e.sub(b.e); break;
    case Binary::Mul: want = a.e.mul(b.e); break;
    case Binary::Div: want = a.e.div(b.e); break;
  }
  compare(result(y), result(want), 1e-12, what, where, [&] {
    const Result got = result(y);
    if (got.shape != want.shape())
      return left_aligned(a.m.shape(), b.m.shape()) == got.shape
                 ? kLeft
                 : "the result has the shape the two broadcast to (broadcast_shape)";
    // Each input as it should be read (broadcast to the result) and as it lies.
    const int64_t n = count(want.shape());
    const std::vector<double> ra = a.e.expand(want.shape()).contiguous().to_vector<double>();
    const std::vector<double> rb = b.e.expand(want.shape()).contiguous().to_vector<double>();
    const auto la = as_lying(a.m, n), lb = as_lying(b.m, n);
    const std::vector<std::pair<const std::vector<double>*, const std::vector<double>*>> reads = {
        {la ? &*la : nullptr, &rb}, {&ra, lb ? &*lb : nullptr}, {la ? &*la : nullptr, lb ? &*lb : nullptr}};
    for (const auto& [x, z] : reads) {
      if (!x || !z) continue;
      Result r{want.shape(), std::vector<double>(static_cast<size_t>(n))};
      for (size_t k = 0; k < r.values.size(); ++k) r.values[k] = apply(op, (*x)[k], (*z)[k]);
      if (same(got, r, 1e-12)) return kStrided;
    }
    Result swapped{want.shape(), std::vector<double>(static_cast<size_t>(n))};
    for (size_t k = 0; k < swapped.values.size(); ++k) swapped.values[k] = apply(op, rb[k], ra[k]);
    if (op != Binary::Add && op != Binary::Mul && same(got, swapped, 1e-12))
      return name + "(a, b) computed b " + (op == Binary::Sub ? "-" : "/") + " a: the operands are swapped";
    return std::string(
        "element [i, j, ...] of the result combines the elements of a and b at that index, where a dim of size 1 "
        "or a missing one reads its only element, whatever the index (that is what expand's stride 0 does)");
  });
}

// ---- reductions ----


// sum over `dims` of x (none: all), in ember; a 0-d x has no dims to name.
ember::Tensor ember_sum(const ember::Tensor& x, ember::Shape dims, bool keepdim) {
  if (x.dim() == 0) return x.sum();
  if (dims.empty())
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  return x.sum(dims, keepdim);
}

int sums() {
  ember::Generator gen(32);
  int strided = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Input x = random_input(random_shape(gen), gen);
    strided += !x.m.is_contiguous();
    ember::Shape dims;
    if (trial % 5 != 0)  // one time in five: no dims, the sum of all
      for (int64_t d = 0; d < x.m.dim(); ++d)
        if (gen.next_below(2)) dims.push_back(d);
    for (size_t i = dims.size(); i > 1; --i) std::swap(dims[i - 1], dims[gen.next_below(i)]);
    const bool keepdim = gen.next_below(2);
    const std::string what =
        "sum(x, " + dims_text(dims) + ", " + (keepdim ? "true" : "false") + ")";
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 32)\n  x: " + x.describe();
    const mini::Tensor y = run([&] { return mini::sum(x.m, dims, keepdim); }, what, where,
                               "each dim here is in range and named once: what made your code refuse it?");
    compare(result(y), result(ember_sum(x.e, dims, keepdim)), 1e-10, what, where, [&] {
      const Result got = result(y);
      if (x.e.dim() > 0 && same(got, result(ember_sum(x.e, dims, !keepdim)), 1e-10))
        return keepdim ? std::string("keepdim ignored: with keepdim true each summed dim stays, as a size 1")
                       : std::string("keepdim ignored: with keepdim false the summed dims are gone from the shape");
      if (!dims.empty()) {
        ember::Shape mirrored, others;
        for (int64_t d : dims) mirrored.push_back(x.m.dim() - 1 - d);
        for (int64_t d = 0; d < x.m.dim(); ++d)
          if (std::find(dims.begin(), dims.end(), d) == dims.end()) others.push_back(d);
        if (same(got, result(ember_sum(x.e, mirrored, keepdim)), 1e-10))
          return std::string("summed over the wrong dims: these are the dims counted from the right; dim 0 is the "
                             "first (the outermost)");
        if (!others.empty() && same(got, result(ember_sum(x.e, others, keepdim)), 1e-10))
          return std::string("summed over the wrong dims: over the ones that should stay, not the ones named");
      }
      if (const auto lying = as_lying(x.m, x.m.numel()))
        if (same(got, result(ember_sum(ember::tensor(*lying, x.e.shape()), dims, keepdim)), 1e-10)) return kStrided;
      return std::string("element [i, j, ...] of x is added into the element of the result whose index is its "
                         "own with the summed dims' positions left out (keepdim: set to 0)");
    });
  }
  return strided;
}

int maxes() {
  ember::Generator gen(33);
  int negative_rows = 0;
  for (int trial = 0; trial < 300; ++trial) {
    ember::Shape shape;
    do shape = random_shape(gen);
    while (shape.empty() || (count(shape) == 0 && gen.next_below(2)));
    std::vector<int64_t> nonempty;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] > 0) nonempty.push_back(static_cast<int64_t>(d));
    if (nonempty.empty()) continue;
    const int64_t d = nonempty[gen.next_below(nonempty.size())];
    const Input x = random_input(shape, gen, false, trial % 2 ? -1.0 : 0.0);  // half of them mostly negative
    const bool keepdim = gen.next_below(2);
    const std::string what = "max(x, " + std::to_string(d) + ", " + (keepdim ? "true" : "false") + ")";
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 33)\n  x: " + x.describe();
    const mini::Tensor y = run([&] { return mini::max(x.m, d, keepdim); }, what, where,
                               "dim " + std::to_string(d) +
                                   " is in range and not of size 0: what made your code refuse it?");
    const Result want = result(x.e.max(d, keepdim).first);
    for (double v : want.values) negative_rows += v < 0;
    compare(result(y), want, 0, what, where, [&] {
      const Result got = result(y);
      Result from_zero = want;
      for (double& v : from_zero.values) v = std::max(v, 0.0);
      if (same(got, from_zero, 0))
        return std::string("max with a wrong start value: it starts from 0, so a row of negative numbers gets 0, "
                           "which is none of its elements; start below every number (-infinity)");
      if (same(got, result(x.e.max(d, !keepdim).first), 0))
        return keepdim ? std::string("keepdim ignored: with keepdim true the dim stays, as a size 1")
                       : std::string("keepdim ignored: with keepdim false the dim is gone from the shape");
      if (x.e.size(x.e.dim() - 1 - d) > 0 && same(got, result(x.e.max(x.e.dim() - 1 - d, keepdim).first), 0))
        return std::string("the max over the wrong dim: this one counts dims from the right");
      if (const auto lying = as_lying(x.m, x.m.numel()))
        if (same(got, result(ember::tensor(*lying, x.e.shape()).max(d, keepdim).first), 0)) return kStrided;
      return std::string("element [i, j, ...] of the result is the largest of x's elements along dim ") +
             std::to_string(d) + " at that index";
    });
  }
  return negative_rows;
}

// sum_to in three blocks of trials: first the leading dims alone, then the
// dims of size 1 alone, then both (so that the first failure says which part
// is missing).
void sums_to() {
  ember::Generator gen(34);
  for (int trial = 0; trial < 300; ++trial) {
    const int block = trial / 100;  // 0: leading dims, 1: sizes 1, 2: both
    ember::Shape shape = random_shape(gen), target;
    if (block == 0) {
      if (shape.empty()) shape.push_back(2);
      target.assign(shape.begin() + 1 + static_cast<int64_t>(gen.next_below(shape.size())), shape.end());
    } else {
      target = shape;
      for (int64_t& v : target)
        if (gen.next_below(2)) v = 1;
      if (block == 2)  // and some leading dims gone
        target.erase(target.begin(), target.begin() + static_cast<int64_t>(gen.next_below(target.size() + 1)));
    }
    const Input x = random_input(shape, gen);
    const size_t lead = shape.size() - target.size();
    ember::Shape ones;  // the dims of x that were a repeated size 1
    for (size_t d = lead; d < shape.size(); ++d)
      if (target[d - lead] == 1 && shape[d] != 1) ones.push_back(static_cast<int64_t>(d));
    const std::string what = "sum_to(x, " + show(target) + ")";
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 34)\n  x: " + x.describe();
    const std::string forgets_leading =
        "sum_to forgets the leading dims: the dims broadcasting put in front of " + show(target) +
        " (x has " + std::to_string(lead) + " more) repeat it too, and are summed away";
    const std::string forgets_ones =
        "sum_to forgets the size-1 dims: where the shape has a 1 and x a larger size, broadcasting repeated one "
        "element, and the copies are summed back into it (keeping the 1)";
    mini::Tensor y = x.m;
    try {
      y = mini::sum_to(x.m, target);
    } catch (const mini::Error& e) {
      fail("your code refused " + what + ": " + e.what() + where,
           block == 0 ? forgets_leading
                      : block == 1 ? forgets_ones
                                   : "sum over the leading dims broadcasting added and over the dims where the shape "
                                     "has a 1 that was repeated, and nothing else");
    }
    const ember::Tensor want = x.e.sum_to(target);
    compare(result(y), result(want), 1e-10, what, where, [&] {
      const Result got = result(y);
      ember::Shape leading;
      for (size_t d = 0; d < lead; ++d) leading.push_back(static_cast<int64_t>(d));
      const Result only_ones = ones.empty() ? result(x.e) : result(x.e.sum(ones, true));
      const Result only_leading = leading.empty() ? result(x.e) : result(x.e.sum(leading, false));
      if (lead > 0 && (same(got, only_ones, 1e-10) || (block == 0 && got.shape == shape))) return forgets_leading;
      if (!ones.empty() && (same(got, only_leading, 1e-10) || (block == 1 && got.shape == shape)))
        return forgets_ones;
      if (ones.empty() && lead == 0)
        return std::string("nothing was broadcast here (the shapes are equal): sum_to gives x's elements as they are "
                           "(a sum over no dims is not a sum over all)");
      return std::string("sum_to is the reverse of expand: element [i, j, ...] of x is added into the element of "
                         "the result that x.expand would have read it from");
    });
  }
}

void refusals() {
  const mini::Tensor x({0, 1, 2, 3, 4, 5}, {2, 3});
  const mini::Tensor four({0, 1, 2, 3}, {4, 1});
  yours::expect_refusal([&] { mini::add(x, mini::Tensor({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3})); },
                        {"add", "(2, 3)", "(4, 3)"}, "add(a, b), a of shape (2, 3), b of shape (4, 3)",
                        "sizes 2 and 4 in the same dim do not broadcast: neither is 1");
  yours::expect_refusal([&] { mini::mul(x, mini::Tensor({0, 1}, {2})); }, {"mul", "(2, 3)", "(2)"},
                        "mul(a, b), a of shape (2, 3), b of shape (2)",
                        "the shapes line up from the right: 3 and 2 do not fit (a shape lined up from the left "
                        "would wrongly pass)");
  yours::expect_refusal([&] { mini::sub(four, x); }, {"sub", "(4, 1)", "(2, 3)"},
                        "sub(a, b), a of shape (4, 1), b of shape (2, 3)", "sizes 4 and 2 in dim 0 do not broadcast");
  yours::expect_refusal([&] { mini::sum(x, {2}); }, {"sum"}, "sum(x, {2}), x of shape (2, 3)",
                        "dim 2 does not exist in a tensor of 2 dims");
  yours::expect_refusal([&] { mini::sum(x, {1, 1}); }, {"sum"}, "sum(x, {1, 1})",
                        "a dim named twice: a sum over it once is what was meant, or a mistake; refuse it, as "
                        "ember does");
  yours::expect_refusal([&] { mini::max(x, 2); }, {"max"}, "max(x, 2), x of shape (2, 3)",
                        "dim 2 does not exist in a tensor of 2 dims");
  yours::expect_refusal([&] { mini::max(mini::Tensor({}, {3, 0}), 1); }, {"max"}, "max(x, 1), x of shape (3, 0)",
                        "the max of no elements is not a number: refuse it (a start value would be returned as if "
                        "it were an element)");
  yours::expect_refusal([&] { mini::sum_to(x, {4}); }, {"sum_to", "(2, 3)", "(4)"}, "sum_to(x, (4)), x of shape (2, 3)",
                        "(4) does not broadcast to (2, 3): no x.expand could have made x from it");
  yours::expect_refusal([&] { mini::sum_to(mini::Tensor({0, 1, 2}, {3}), {2, 3}); }, {"sum_to"},
                        "sum_to(x, (2, 3)), x of shape (3)",
                        "sum_to only removes dims: a shape of more dims than x's was not broadcast to it");
}

check::Exercise elementwise() {
  using yours::step;
  return {"3", "Elementwise ops and reductions", "docs/book/build_your_own/03_elementwise.md", {
    step("broadcast_shape on 300 pairs of shapes that broadcast, in every position", broadcast_shapes),
    step("map, neg, exp, log, tanh and relu on 300 random tensors of every layout", [] {
      const int strided = unary_ops();
      check::note(std::to_string(strided) + " of them not contiguous (transposed, sliced with a step or expanded)");
    }),
    step("add, sub, mul and div on 400 random pairs, broadcast, of every layout", [] {
      Seen seen;
      for (uint64_t seed = 0; seed < 400; ++seed) binary_pair(seed, seen);
      check::note(std::to_string(seen.fewer_dims) + " pairs with fewer dims on one side, " + std::to_string(seen.ones) +
                  " with a size 1 repeated, " + std::to_string(seen.strided) + " with an input that is not contiguous");
    }),
    step("sum over 300 random sets of dims (none: all), keepdim both ways", [] {
      const int strided = sums();
      check::note(std::to_string(strided) + " of the tensors summed not contiguous");
    }),
    step("max along a random dim of 300 tensors, keepdim both ways", [] {
      const int negative = maxes();
      check::note(std::to_string(negative) + " of the maxes negative: rows with no number above 0");
    }),
    step("sum_to on 300 tensors: the leading dims, the dims of size 1, both", sums_to),
    step("what must be refused is refused, with a message naming the op and the shapes", refusals),
  }};
}

const yours::Stage stage{3, elementwise};

}  // namespace
