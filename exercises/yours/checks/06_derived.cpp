// Checks stage 6 (docs/book/build_your_own/06_derived.md): mini's softmax,
// log_softmax, cross_entropy, layer_norm and gelu against ember's (float64),
// values and gradients, on random inputs of every layout — a third of them
// with logits in the hundreds and thousands, where a softmax without the max
// shift overflows — each op one node whose next is its inputs' nodes (the
// backward derived, not composed of stage 4's ops); then a small network of
// all of them with stage 5's matmul; then the refusals.
//
// Tolerances: each value and gradient is a few of stage 3's ops over a row
// of at most 8 numbers (exp and log rounding by a bit or two, a sum of 8
// terms) and for layer norm a sum_to over at most 64 rows: 1e-9 relative
// (absolute below 1). A logit of magnitude 2000 has an ulp of 2.3e-13: a
// shifted logit x - m is exact, so the large rows keep the same tolerance.
// gelu against ember's erf: 1e-12.
//
// When a result differs, the checker computes what each typical mistake
// gives on the same input (no max shift, the log of an underflowed softmax,
// the softmax Jacobian's diagonal alone, the mean's 1/N forgotten, the
// variance divided by D - 1, layer norm's backward without the terms
// through the mean and the variance, gelu's derivative without x φ(x) or in
// its tanh form) and names the one that matches.
#include <cmath>
#include <numbers>
#include <optional>
#include <tuple>

#include "exercises/yours/checks/inputs.h"
#include "exercises/yours/checks/yours.h"
#include "mini/derived.h"
#include "mini/matmul.h"

namespace {

using check::fail;
using check::show;
using yours::first_difference;
using yours::Input;
using yours::random_input;
using yours::same;
using yours::values;

ember::Tensor number(double v) { return ember::tensor({v}, ember::kFloat64); }

// A leaf in both frameworks.
struct Leaf {
  mini::Var m;
  ember::Tensor e;
};

Leaf leaf(const Input& in) { return {mini::Var(in.m, true), in.e.detach().requires_grad_()}; }

// A random input of `shape`; large: magnitudes in the hundreds and a shift
// in the thousands, the logits a softmax without its max shift overflows on.
Input logits(const ember::Shape& shape, ember::Generator& gen, bool large) {
  Input in = random_input(shape, gen);
  if (!large) return in;
  const double shift = gen.next_below(2) ? 1000.0 : -1000.0;
  const std::vector<double> v = yours::values(in.e.mul(number(300)).add(number(shift)));
  const ember::Shape s = in.e.shape();
  return {mini::Tensor(v, s), ember::tensor(v, s),
          std::string("a new tensor, numbers of magnitude 75 to 675 plus ") + (shift > 0 ? "1000" : "-1000")};
}

// A shape of 1 to 3 dims whose last is 1 to 8.
ember::Shape row_shape(ember::Generator& gen) {
  ember::Shape s = yours::random_shape(gen, 2);
  s.push_back(1 + static_cast<int64_t>(gen.next_below(8)));
  return s;
}

bool finite(const mini::Tensor& t) {
  for (double v : t.values())
    if (!std::isfinite(v)) return false;
  return true;
}

// Fails unless y's data is want; the mistake, asked only on a difference.
void compare_values(const mini::Var& y, const ember::Tensor& want, double rel, const std::string& what,
                    const std::string& where, const std::function<std::string()>& mistake) {
  if (y.shape() != want.shape())
    fail(what + " has shape " + show(y.shape()) + ", but should have " + show(want.shape()) + where,
         "the result has the shape ember's has (the header says which)");
  const std::string diff = first_difference(y.data(), want, rel);
  if (!diff.empty()) fail(what + ": " + diff + where, mistake());
}

// Fails unless the leaf's gradient is ember's.
void compare_grad(const Leaf& x, const std::string& name, double rel, const std::string& where,
                  const std::function<std::string(const mini::Tensor&)>& mistake) {
  const std::optional<mini::Tensor> got = x.m.grad();
  const ember::Tensor want = x.e.grad();
  if (!got) fail("no gradient reached " + name + where, "does the op record its node with " + name + " in next?");
  if (got->shape() != want.shape())
    fail(name + "'s gradient has shape " + show(got->shape()) + ", but " + name + " has shape " + show(want.shape()) +
             where,
         "a gradient has its input's shape: a parameter used by every row gets the sum of the rows' parts");
  const std::string diff = first_difference(*got, want, rel);
  if (!diff.empty()) fail(name + "'s gradient: " + diff + where, mistake(*got));
}

// One node, straight onto the inputs: the backward was derived, not composed.
void expect_one_node(const mini::Var& y, const std::vector<const mini::Var*>& inputs, const std::string& what) {
  const auto& node = y.node();
  bool ok = node && node->next.size() == inputs.size();
  for (size_t i = 0; ok && i < inputs.size(); ++i) ok = node->next[i] == inputs[i]->node();
  check::expect(ok,
                what + " is not one node whose next holds its inputs' nodes" +
                    (node ? " (its node is \"" + node->op + "\", with " + std::to_string(node->next.size()) +
                                " entries in next)"
                          : " (it has no node)"),
                "derive it: one record() with the backward you worked out on paper, not a chain of stage 4's Var "
                "ops (those are right too, but slower, and they keep every intermediate alive)");
}

const std::string kShift =
    "softmax without the max shift: e^x of a logit in the hundreds overflows to inf (e^710 does), and inf/inf is "
    "NaN; subtract each row's max first: the softmax is unchanged, and the largest term is e^0 = 1";

// ---- softmax and log_softmax ----

int softmaxes(bool log) {
  ember::Generator gen(log ? 61 : 60);
  int large = 0;
  const std::string name = log ? "log_softmax" : "softmax";
  for (int trial = 0; trial < 240; ++trial) {
    const bool big = trial % 3 == 2;
    large += big;
    const Input in = logits(row_shape(gen), gen, big);
    const Leaf x = leaf(in);
    const std::vector<double> gv = yours::draw(in.e.numel(), gen, false, 0);
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed " + (log ? "61" : "60") + "): y = " +
                              name + "(x), y.backward(grad)\n  x: " + in.describe();
    const mini::Var y = log ? mini::log_softmax(x.m) : mini::softmax(x.m);
    const ember::Tensor ye = log ? x.e.log_softmax(x.e.dim() - 1) : x.e.softmax(x.e.dim() - 1);
    compare_values(y, ye.detach(), 1e-9, name + "(x)", where, [&] {
      if (!finite(y.data()))
        return log ? "the log of a softmax that underflowed (or overflowed): compute x − m − log Σ e^(x − m), "
                     "m the row's max; that sum is at least 1, so its log is finite"
                   : kShift;
      return std::string("along the last dim: e^(x_i − m) over the row's sum of them");
    });
    expect_one_node(y, {&x.m}, name + "(x)");
    y.backward(mini::Tensor(gv, in.e.shape()));
    const ember::Tensor g = ember::tensor(gv, in.e.shape());
    ye.backward(g);
    compare_grad(x, "x", 1e-9, where, [&](const mini::Tensor& got) {
      const ember::Tensor s = in.e.softmax(in.e.dim() - 1);
      if (!log) {
        if (same(got, g.mul(s).mul(number(1).sub(s)), 1e-9))
          return std::string("only the diagonal of the softmax's Jacobian: y_i also moves when x_j moves, j ≠ i "
                             "(by −y_i y_j), so dx_j sums over the whole row");
        if (same(got, g.mul(s), 1e-9))
          return std::string("dx = y ⊙ g misses the sum over the row: y_j (g_j − Σ_i g_i y_i)");
      } else if (same(got, g, 1e-9) || same(got, g.sub(s), 1e-9)) {
        return std::string("log_softmax's x_j − log Σ e^x: the second term moves with every x_j of the row, by "
                           "softmax_j; summed over the outputs, times Σ_i g_i");
      }
      return std::string("derive dy_i/dx_j, for j = i and for j ≠ i, then sum g_i times it over i");
    });
  }
  return large;
}

// ---- cross_entropy ----

int cross_entropies() {
  ember::Generator gen(62);
  int large = 0;
  for (int trial = 0; trial < 240; ++trial) {
    const bool big = trial % 3 == 2;
    large += big;
    const int64_t n = 1 + static_cast<int64_t>(gen.next_below(6)), c = 1 + static_cast<int64_t>(gen.next_below(7));
    const Input in = logits({n, c}, gen, big);
    std::vector<int64_t> t(static_cast<size_t>(n));
    for (int64_t& v : t) v = static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(c)));
    const Leaf x = leaf(in);
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 62): loss = cross_entropy(logits, " +
                              show(std::vector<double>(t.begin(), t.end())) + "), loss.backward()\n  logits: " +
                              in.describe();
    const mini::Var loss = mini::cross_entropy(x.m, t);
    const ember::Tensor le = ember::cross_entropy(x.e, ember::tensor(t, {n}));
    compare_values(loss, le.detach(), 1e-9, "the loss", where, [&] {
      if (!finite(loss.data())) return kShift;
      const double sum = le.item<double>() * static_cast<double>(n);
      if (yours::close(loss.data().values()[0], sum, 1e-9))
        return std::string("the sum over the rows, not the mean: divide by N");
      return std::string("each row's loss is −log_softmax(logits)[row, target]; the loss is their mean");
    });
    expect_one_node(loss, {&x.m}, "cross_entropy(logits, targets)");
    loss.backward();
    le.backward();
    compare_grad(x, "logits", 1e-9, where, [&](const mini::Tensor& got) {
      const ember::Tensor want = x.e.grad();
      if (same(got, want.mul(number(static_cast<double>(n))), 1e-9))
        return std::string("softmax − one-hot for each row, but the mean divides the loss by N, and so its "
                           "gradient");
      if (same(got, want.neg(), 1e-9)) return std::string("the gradient's sign: softmax − one-hot, not the reverse");
      if (!finite(got)) return kShift;
      return std::string("for one row, d(−log softmax_t)/dx_j is softmax_j − [j = t]; then the mean");
    });
  }
  return large;
}

// ---- layer_norm ----

void layer_norms() {
  ember::Generator gen(63);
  for (int trial = 0; trial < 240; ++trial) {
    const ember::Shape shape = row_shape(gen);
    const int64_t d = shape.back();
    const Input in = random_input(shape, gen), gi = random_input({d}, gen), bi = random_input({d}, gen);
    const Leaf x = leaf(in), gamma = leaf(gi), beta = leaf(bi);
    const std::vector<double> gv = yours::draw(in.e.numel(), gen, false, 0);
    const std::string where = "\n  trial " + std::to_string(trial) +
                              " (seed 63): y = layer_norm(x, gamma, beta), y.backward(grad)\n  x: " + in.describe() +
                              "\n  gamma: " + gi.describe() + "\n  beta: " + bi.describe();
    const mini::Var y = mini::layer_norm(x.m, gamma.m, beta.m);
    const ember::Tensor ye = ember::layer_norm(x.e, gamma.e, beta.e);
    const int64_t last = static_cast<int64_t>(shape.size()) - 1;
    const ember::Tensor xd = in.e, centered = xd.sub(xd.mean({last}, true));
    compare_values(y, ye.detach(), 1e-9, "layer_norm(x, gamma, beta)", where, [&] {
      if (d == 1 && !finite(y.data()))
        return std::string("the variance divided by D − 1, which is 0 here: layer norm's is the biased one, divided "
                           "by D (PyTorch's and ember's)");
      if (d > 1) {
        const ember::Tensor unbiased =
            centered.div(centered.mul(centered).sum({last}, true).div(number(static_cast<double>(d - 1))).add(number(1e-5)).sqrt())
                .mul(gi.e)
                .add(bi.e);
        if (same(y.data(), unbiased, 1e-9))
          return std::string("the variance divided by D − 1: layer norm's is the biased one, divided by D (PyTorch's "
                             "and ember's)");
      }
      return std::string("(x − mean) / sqrt(var + eps) over the last dim, then times gamma plus beta");
    });
    expect_one_node(y, {&x.m, &gamma.m, &beta.m}, "layer_norm(x, gamma, beta)");
    y.backward(mini::Tensor(gv, shape));
    const ember::Tensor g = ember::tensor(gv, shape);
    ye.backward(g);
    const ember::Tensor r = centered.mul(centered).mean({last}, true).add(number(1e-5)).rsqrt();
    const ember::Tensor xhat = centered.mul(r), gp = g.mul(gi.e);
    compare_grad(x, "x", 1e-9, where, [&](const mini::Tensor& got) {
      if (same(got, r.mul(gp), 1e-9))
        return std::string("x̂ depends on x_j through the mean and through the variance too, not only directly: "
                           "dx = r (g' − mean(g') − x̂ mean(g' x̂)), g' = g γ");
      if (same(got, r.mul(gp.sub(gp.mean({last}, true))), 1e-9))
        return std::string("the term through the variance is missing: − x̂ mean(g' x̂)");
      if (same(got, r.mul(gp.sub(xhat.mul(gp.mul(xhat).mean({last}, true)))), 1e-9))
        return std::string("the term through the mean is missing: − mean(g')");
      return std::string("derive dx̂_i/dx_j with the mean and the variance both depending on x_j");
    });
    compare_grad(gamma, "gamma", 1e-9, where, [&](const mini::Tensor& got) {
      if (same(got, g.sum_to({d}), 1e-9)) return std::string("gamma multiplies x̂: its gradient is Σ_rows g x̂");
      return std::string("γ_i scales x̂_i in every row: Σ over the rows of g x̂");
    });
    compare_grad(beta, "beta", 1e-9, where, [](const mini::Tensor&) {
      return std::string("β_i is added in every row: Σ over the rows of g");
    });
  }
}

// ---- gelu ----

void gelus() {
  ember::Generator gen(64);
  for (int trial = 0; trial < 120; ++trial) {
    const Input in = random_input(row_shape(gen), gen);
    const std::vector<double> v = yours::values(in.e.mul(number(3.0)));  // numbers up to 6.75: Φ's tails
    const Input scaled = trial % 2 ? Input{mini::Tensor(v, in.e.shape()), ember::tensor(v, in.e.shape()),
                                           "a new tensor, numbers of magnitude 0.75 to 6.75"}
                                   : in;
    const Leaf x = leaf(scaled);
    const std::vector<double> gv = yours::draw(in.e.numel(), gen, false, 0);
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 64): y = gelu(x), y.backward(grad)\n  x: " +
                              scaled.describe() + " = " + show(yours::values(scaled.e));
    const mini::Var y = mini::gelu(x.m);
    const ember::Tensor ye = ember::gelu(x.e);
    compare_values(y, ye.detach(), 1e-12, "gelu(x)", where, [&] {
      if (same(y.data(), ember::gelu(scaled.e, ember::GeluApprox::Tanh), 1e-9))
        return std::string("that is the tanh approximation: this stage (and ember's GPT) uses the exact form, "
                           "x Φ(x) with Φ(x) = (1 + erf(x/√2))/2");
      return std::string("x Φ(x), Φ the normal CDF: (1 + erf(x/√2))/2");
    });
    expect_one_node(y, {&x.m}, "gelu(x)");
    y.backward(mini::Tensor(gv, in.e.shape()));
    const ember::Tensor g = ember::tensor(gv, in.e.shape());
    ye.backward(g);
    compare_grad(x, "x", 1e-12, where, [&](const mini::Tensor& got) {
      const ember::Tensor phi = number(1).add(scaled.e.mul(number(1 / std::numbers::sqrt2)).erf()).mul(number(0.5));
      if (same(got, g.mul(phi), 1e-9))
        return std::string("the product rule: (x Φ(x))' = Φ(x) + x φ(x), and the second term is missing");
      return std::string("(x Φ(x))' = Φ(x) + x φ(x), φ(x) = e^(−x²/2)/√(2π)");
    });
  }
}

// ---- together ----

// loss = cross_entropy(matmul(gelu(layer_norm(x, gamma, beta)), W), t)
void network() {
  ember::Generator gen(65);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t n = 1 + static_cast<int64_t>(gen.next_below(6)), d = 1 + static_cast<int64_t>(gen.next_below(6)),
                  c = 1 + static_cast<int64_t>(gen.next_below(6));
    const Leaf x = leaf(random_input({n, d}, gen)), gamma = leaf(random_input({d}, gen)),
               beta = leaf(random_input({d}, gen)), w = leaf(random_input({d, c}, gen));
    std::vector<int64_t> t(static_cast<size_t>(n));
    for (int64_t& v : t) v = static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(c)));
    mini::cross_entropy(mini::matmul(mini::gelu(mini::layer_norm(x.m, gamma.m, beta.m)), w.m), t).backward();
    ember::cross_entropy(ember::gelu(ember::layer_norm(x.e, gamma.e, beta.e)).matmul(w.e), ember::tensor(t, {n}))
        .backward();
    const std::string where = "\n  trial " + std::to_string(trial) +
                              " (seed 65): cross_entropy(matmul(gelu(layer_norm(x, gamma, beta)), W), targets), x (" +
                              std::to_string(n) + ", " + std::to_string(d) + "), W (" + std::to_string(d) + ", " +
                              std::to_string(c) + ")";
    for (const auto& [l, name] : std::vector<std::pair<const Leaf*, std::string>>{
             {&x, "x"}, {&gamma, "gamma"}, {&beta, "beta"}, {&w, "W"}})
      compare_grad(*l, name, 1e-9, where, [](const mini::Tensor&) {
        return std::string("each op passed alone: does one of them assume its input is contiguous, or its grad of "
                           "a particular layout?");
      });
  }
}

void refusals() {
  const mini::Var x(mini::Tensor({1, 2, 3, 4, 5, 6}, {2, 3}), true);
  const mini::Var scalar(mini::Tensor({1}, {}), true);
  yours::expect_refusal([&] { mini::softmax(scalar); }, {"softmax", "()"}, "softmax of a 0-d x",
                        "a 0-d tensor has no last dim to normalize along");
  yours::expect_refusal([&] { mini::log_softmax(scalar); }, {"log_softmax", "()"}, "log_softmax of a 0-d x",
                        "a 0-d tensor has no last dim to normalize along");
  yours::expect_refusal([&] { mini::cross_entropy(x, {0, 3}); }, {"cross_entropy", "3", "(2, 3)"},
                        "cross_entropy of logits (2, 3) with targets (0, 3)",
                        "class 3 does not exist among 3 classes (0 to 2): an unchecked target reads past the row");
  yours::expect_refusal([&] { mini::cross_entropy(x, {0, -1}); }, {"cross_entropy", "-1"},
                        "cross_entropy with a target of -1", "a negative class reads before the row");
  yours::expect_refusal([&] { mini::cross_entropy(x, {0}); }, {"cross_entropy", "(2, 3)"},
                        "cross_entropy of logits (2, 3) with 1 target", "one target for each row of logits");
  yours::expect_refusal([&] { mini::cross_entropy(mini::Var(mini::Tensor({1, 2, 3}, {3}), true), {0}); },
                        {"cross_entropy", "(3)"}, "cross_entropy of logits of shape (3)",
                        "logits are (N, C): a row of class scores for each target");
  yours::expect_refusal([&] { mini::cross_entropy(mini::Var(mini::Tensor({}, {0, 3}), true), {}); },
                        {"cross_entropy", "(0, 3)"}, "cross_entropy of logits (0, 3)",
                        "the mean over no rows is 0/0: refuse it");
  const mini::Var g3(mini::Tensor({1, 1, 1}, {3}), true), g2(mini::Tensor({1, 1}, {2}), true);
  yours::expect_refusal([&] { mini::layer_norm(x, g2, g3); }, {"layer_norm", "(2, 3)", "(2)"},
                        "layer_norm of x (2, 3) with gamma (2)", "gamma scales the last dim: it has its size, 3");
  yours::expect_refusal([&] { mini::layer_norm(x, g3, g2); }, {"layer_norm", "(2)"},
                        "layer_norm of x (2, 3) with beta (2)", "beta shifts the last dim: it has its size, 3");
}

check::Exercise derived() {
  using yours::step;
  return {"6", "Derive it yourself", "docs/book/build_your_own/06_derived.md", {
    step("softmax on 240 random inputs of every layout, values and gradients, one node", [] {
      check::note(std::to_string(softmaxes(false)) + " of them with logits in the hundreds, shifted by ±1000");
    }),
    step("log_softmax on 240 random inputs, values and gradients, one node", [] {
      check::note(std::to_string(softmaxes(true)) + " of them with logits in the hundreds, shifted by ±1000");
    }),
    step("cross_entropy on 240 random logits and targets, the loss and its gradient, one node", [] {
      check::note(std::to_string(cross_entropies()) + " of them with logits in the hundreds, shifted by ±1000");
    }),
    step("layer_norm on 240 random inputs: the values, and the gradients of x, gamma and beta", layer_norms),
    step("gelu on 120 random inputs, values and gradients, one node", gelus),
    step("a network of them, cross_entropy(matmul(gelu(layer_norm(x)), W)), on 40 random inputs", network),
    step("what must be refused is refused, with a message naming the op and the values", refusals),
  }};
}

const yours::Stage stage{6, derived};

}  // namespace
