// Checks stage 1 (docs/book/build_your_own/01_values.md): mini::Value
// against ember's autograd on 0-d float64 tensors. Each op alone, a value used
// twice, the chapter's diamond, then random expressions in which values are
// shared and reused, built in both frameworks from one description: every
// value and every leaf's gradient must agree.
//
// When gradients differ, the checker works out what each typical mistake of
// backward() would have given on the same expression (a recursion without an
// order, each value visited once as a recursion reaches it, = instead of +=,
// the order walked backwards) and names the one that matches.
#include <functional>
#include <set>

#include "exercises/yours/checks/yours.h"
#include "mini/value.h"

namespace {

using check::fail;
using check::num;

// ---- an expression: the checker's description, built in mini and in ember ----

enum class Op { Leaf, Add, Sub, Mul, Div, Neg, Pow, Exp, Log, Tanh, Relu };

struct Term {
  Op op = Op::Leaf;
  int a = -1, b = -1;     // the terms it reads (b: binary ops only)
  double k = 0;           // pow's exponent
  double value = 0;       // computed here, with std::, to choose safe inputs
  bool constant = false;  // a leaf that does not require grad (printed as its number)
};

bool binary(Op op) { return op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div; }

struct Expr {
  std::vector<Term> terms;  // every input before the terms that read it; the last is the output

  std::string name(int i) const {
    const Term& t = terms[static_cast<size_t>(i)];
    if (t.constant) return num(t.value);
    std::string out = t.op == Op::Leaf ? "x" : "v";  // x0, x1: leaves; v2, v3: what ops made
    return out += std::to_string(i);
  }
  // "x0 * x1", "tanh(v2)": what term i computes, in the names of its inputs.
  std::string rhs(int i) const {
    const Term& t = terms[static_cast<size_t>(i)];
    const std::string a = t.a >= 0 ? name(t.a) : "", b = t.b >= 0 ? name(t.b) : "";
    switch (t.op) {
      case Op::Add: return a + " + " + b;
      case Op::Sub: return a + " - " + b;
      case Op::Mul: return a + " * " + b;
      case Op::Div: return a + " / " + b;
      case Op::Neg: return "-" + a;
      case Op::Pow: return "pow(" + a + ", " + num(t.k) + ")";
      case Op::Exp: return "exp(" + a + ")";
      case Op::Log: return "log(" + a + ")";
      case Op::Tanh: return "tanh(" + a + ")";
      case Op::Relu: return "relu(" + a + ")";
      case Op::Leaf: break;
    }
    return name(i);
  }
  // "x0 = 0.5, x1 = -1.2": the leaves that require grad.
  std::string leaves() const {
    std::string out;
    for (size_t i = 0; i < terms.size(); ++i)
      if (terms[i].op == Op::Leaf && !terms[i].constant)
        out += (out.empty() ? "" : ", ") + name(static_cast<int>(i)) + " = " + num(terms[i].value);
    return out;
  }
  // "x0 = 0.5, x1 = -1.2; v2 = x0 * x1; v3 = tanh(v2); out = v3"
  std::string text() const {
    std::string out = leaves();
    for (size_t i = 0; i < terms.size(); ++i)
      if (terms[i].op != Op::Leaf) out += "; " + name(static_cast<int>(i)) + " = " + rhs(static_cast<int>(i));
    return out + "; out = " + name(static_cast<int>(terms.size()) - 1);
  }
};

double value_of(Op op, double a, double b, double k) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Neg: return -a;
    case Op::Pow: return std::pow(a, k);
    case Op::Exp: return std::exp(a);
    case Op::Log: return std::log(a);
    case Op::Tanh: return std::tanh(a);
    case Op::Relu: return a > 0 ? a : 0.0;
    case Op::Leaf: break;
  }
  return 0;
}

// d(term)/d(its input `which`): 0 is a, 1 is b. The right derivatives, which
// the mistaken walks below need too.
double local(const Term& t, const Expr& e, int which) {
  const double a = e.terms[static_cast<size_t>(t.a)].value;
  const double b = t.b >= 0 ? e.terms[static_cast<size_t>(t.b)].value : 0;
  switch (t.op) {
    case Op::Add: return 1;
    case Op::Sub: return which == 0 ? 1 : -1;
    case Op::Mul: return which == 0 ? b : a;
    case Op::Div: return which == 0 ? 1 / b : -a / (b * b);
    case Op::Neg: return -1;
    case Op::Pow: return t.k * std::pow(a, t.k - 1);
    case Op::Exp: return t.value;
    case Op::Log: return 1 / a;
    case Op::Tanh: return 1 - t.value * t.value;
    case Op::Relu: return a > 0 ? 1 : 0;
    case Op::Leaf: break;
  }
  return 0;
}

void add_term(Expr& e, Op op, int a, int b = -1, double k = 0) {
  Term t{op, a, b, k};
  t.value = value_of(op, e.terms[static_cast<size_t>(a)].value, b >= 0 ? e.terms[static_cast<size_t>(b)].value : 0, k);
  e.terms.push_back(t);
}

int add_leaf(Expr& e, double v, bool constant = false) {
  Term t;
  t.value = v;
  t.constant = constant;
  e.terms.push_back(t);
  return static_cast<int>(e.terms.size()) - 1;
}

std::vector<mini::Value> build_mini(const Expr& e) {
  std::vector<mini::Value> v;
  for (const Term& t : e.terms) {
    if (t.op == Op::Leaf) {
      v.emplace_back(t.value);
      continue;
    }
    const mini::Value a = v[static_cast<size_t>(t.a)];
    const mini::Value b = t.b >= 0 ? v[static_cast<size_t>(t.b)] : a;
    switch (t.op) {
      case Op::Add: v.push_back(a + b); break;
      case Op::Sub: v.push_back(a - b); break;
      case Op::Mul: v.push_back(a * b); break;
      case Op::Div: v.push_back(a / b); break;
      case Op::Neg: v.push_back(-a); break;
      case Op::Pow: v.push_back(mini::pow(a, t.k)); break;
      case Op::Exp: v.push_back(mini::exp(a)); break;
      case Op::Log: v.push_back(mini::log(a)); break;
      case Op::Tanh: v.push_back(mini::tanh(a)); break;
      case Op::Relu: v.push_back(mini::relu(a)); break;
      case Op::Leaf: break;
    }
  }
  return v;
}

std::vector<ember::Tensor> build_ember(const Expr& e) {
  std::vector<ember::Tensor> v;
  for (const Term& t : e.terms) {
    if (t.op == Op::Leaf) {
      ember::Tensor x = ember::scalar_tensor(t.value, ember::kFloat64);
      if (!t.constant) x.requires_grad_();
      v.push_back(x);
      continue;
    }
    const ember::Tensor a = v[static_cast<size_t>(t.a)];
    const ember::Tensor b = t.b >= 0 ? v[static_cast<size_t>(t.b)] : a;
    switch (t.op) {
      case Op::Add: v.push_back(a + b); break;
      case Op::Sub: v.push_back(a - b); break;
      case Op::Mul: v.push_back(a * b); break;
      case Op::Div: v.push_back(a / b); break;
      case Op::Neg: v.push_back(-a); break;
      case Op::Pow: v.push_back(ember::pow(a, t.k)); break;
      case Op::Exp: v.push_back(ember::exp(a)); break;
      case Op::Log: v.push_back(ember::log(a)); break;
      case Op::Tanh: v.push_back(ember::tanh(a)); break;
      case Op::Relu: v.push_back(ember::relu(a)); break;
      case Op::Leaf: break;
    }
  }
  return v;
}

double grad_of(const ember::Tensor& leaf) { return leaf.grad().defined() ? leaf.grad().item<double>() : 0.0; }

// ---- what backward() gives, done right and done in the typical wrong ways ----

enum class Walk {
  Right,         // a topological order from the output down, +=
  EveryPath,     // a recursion without an order: each input gets grad * local, then is recursed into
  EveryPathLate, // the same, passing to every input first, then recursing
  Once,          // each value recursed into once, as the recursion reaches it
  OnceLate,      // the same, passing to every input first
  Overwrite,     // the right order, but grad = instead of +=
  LeavesFirst,   // the right order walked the wrong way: from the leaves up
};

std::vector<int> inputs_of(const Term& t) {
  if (t.op == Op::Leaf) return {};
  if (t.b >= 0) return {t.a, t.b};
  return {t.a};
}

// The terms `out` reads, directly or not, with out first and every term
// before the terms it reads (the reverse of a depth-first post-order).
std::vector<int> topological(const Expr& e) {
  std::vector<int> post;
  std::set<int> seen;
  std::function<void(int)> visit = [&](int n) {
    if (!seen.insert(n).second) return;
    for (int i : inputs_of(e.terms[static_cast<size_t>(n)])) visit(i);
    post.push_back(n);
  };
  visit(static_cast<int>(e.terms.size()) - 1);
  return {post.rbegin(), post.rend()};
}

// Every term's grad as `walk` leaves it; empty if the walk would take too
// long (a recursion along every path of a large expression).
std::vector<double> walk_grads(const Expr& e, Walk walk) {
  std::vector<double> g(e.terms.size(), 0.0);
  const int out = static_cast<int>(e.terms.size()) - 1;
  g[static_cast<size_t>(out)] = 1;
  auto pass = [&](int n, size_t j, bool assign) {
    const Term& t = e.terms[static_cast<size_t>(n)];
    const int in = inputs_of(t)[j];
    const double part = g[static_cast<size_t>(n)] * local(t, e, static_cast<int>(j));
    g[static_cast<size_t>(in)] = assign ? part : g[static_cast<size_t>(in)] + part;
    return in;
  };
  if (walk == Walk::Right || walk == Walk::Overwrite || walk == Walk::LeavesFirst) {
    std::vector<int> order = topological(e);
    if (walk == Walk::LeavesFirst) std::reverse(order.begin(), order.end());
    for (int n : order)
      for (size_t j = 0; j < inputs_of(e.terms[static_cast<size_t>(n)]).size(); ++j) pass(n, j, walk == Walk::Overwrite);
    return g;
  }
  const bool once = walk == Walk::Once || walk == Walk::OnceLate;
  const bool late = walk == Walk::EveryPathLate || walk == Walk::OnceLate;
  std::set<int> seen;
  long visits = 0;
  std::function<bool(int)> recurse = [&](int n) {
    if (once && !seen.insert(n).second) return true;
    if (++visits > 2000000) return false;
    const size_t k = inputs_of(e.terms[static_cast<size_t>(n)]).size();
    if (late) {
      for (size_t j = 0; j < k; ++j) pass(n, j, false);
      for (int in : inputs_of(e.terms[static_cast<size_t>(n)]))
        if (!recurse(in)) return false;
      return true;
    }
    for (size_t j = 0; j < k; ++j)
      if (!recurse(pass(n, j, false))) return false;
    return true;
  };
  if (!recurse(out)) return {};
  return g;
}

// The leaves whose gradients are compared (constants are not).
std::vector<int> leaves_of(const Expr& e) {
  std::vector<int> leaves;
  for (size_t i = 0; i < e.terms.size(); ++i)
    if (e.terms[i].op == Op::Leaf && !e.terms[i].constant) leaves.push_back(static_cast<int>(i));
  return leaves;
}

// Tolerances. Both sides compute in float64 with the same formulas (std::
// functions, one rounding per op); they may differ in the order in which
// parts of a gradient are added (mini as its walk reaches them, ember in the
// order of its queue), a rounding of ~1e-16 relative per addition. The
// expressions keep every value and local derivative below 10 in size, so over
// their at most ~30 ops the difference stays far below 1e-10 relative (to
// max(1, |value|)); any mistake changes a gradient by a whole term. (On the
// reference solution the values agree to the bit, the gradients within 2e-15.)
constexpr double kOpTol = 1e-12;    // one op
constexpr double kGraphTol = 1e-10;  // an expression

// The hint for leaf gradients `got` that differ from the right ones: the
// mistaken walk that gives them, if one does.
std::string walk_hint(const Expr& e, const std::vector<double>& got,
                      const std::string& otherwise =
                          "the values agree, the gradients do not, and no typical mistake of backward() gives yours: "
                          "work this expression backwards by hand, value by value from out, and compare with each "
                          "value's grad in your walk") {
  const std::vector<int> leaves = leaves_of(e);
  auto gives = [&](Walk walk) {
    const std::vector<double> g = walk_grads(e, walk);
    if (g.empty()) return false;
    for (size_t i = 0; i < leaves.size(); ++i)
      if (!yours::close(got[i], g[static_cast<size_t>(leaves[i])], kGraphTol)) return false;
    return true;
  };
  bool all_zero = true;
  for (double v : got) all_zero = all_zero && v == 0;
  if (all_zero)
    return "every gradient is 0: does backward() set the output's own grad to 1 (d out/d out) before it walks?";
  if (gives(Walk::EveryPath) || gives(Walk::EveryPathLate))
    return "these are the gradients of a recursion without an order: a value reached along two paths passes its "
           "grad on each time it is reached, and the second time that grad already holds the first part, which is "
           "counted again. A value may pass its grad on once, when it is complete: after every value that uses it "
           "has added its part. Which order of the values guarantees that?";
  if (gives(Walk::Once) || gives(Walk::OnceLate))
    return "these are the gradients of a walk that visits each value once, in the order a recursion reaches it: a "
           "value used twice passed its grad on when only one of its users had added its part, and the other part "
           "arrived after. A value may pass its grad on only after every value that uses it: which order of the "
           "values guarantees that?";
  if (gives(Walk::Overwrite))
    return "these are the gradients of a walk that assigns (grad = ...) where it should add (grad += ...): a value "
           "used twice keeps only the part of its last user";
  if (gives(Walk::LeavesFirst))
    return "these are the gradients of the right order walked the wrong way, from the leaves up: each value passes "
           "on a grad that has not arrived yet. The walk starts at the output";
  return otherwise;
}

// ---- random expressions ----

// An expression of 2-4 leaves and 4-13 ops, every term read by a later one
// (the leftovers are summed into the output). An input is one of the last
// three terms half of the time, any term otherwise, so values are reused and
// shared (v * v, a value two ops read, a diamond). Ops are drawn until their
// inputs suit them, and every value and local derivative stays below 10.
Expr random_expr(uint64_t seed) {
  ember::Generator gen(seed);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * gen.next_double(); };
  Expr e;
  const int leaves = 2 + static_cast<int>(gen.next_below(3));
  for (int i = 0; i < leaves; ++i) {
    double v = 0;
    while (std::abs(v) < 0.2) v = uniform(-2, 2);
    add_leaf(e, v);
  }
  auto pick = [&] {  // never a constant: those are made for one op
    const int n = static_cast<int>(e.terms.size());
    for (;;) {
      const int i = gen.next_below(2) == 0 ? n - 1 - static_cast<int>(gen.next_below(static_cast<uint64_t>(std::min(n, 3))))
                                           : static_cast<int>(gen.next_below(static_cast<uint64_t>(n)));
      if (!e.terms[static_cast<size_t>(i)].constant) return i;
    }
  };
  const Op kinds[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Neg, Op::Pow, Op::Exp, Op::Log, Op::Tanh, Op::Relu};
  const double exponents[] = {2, 3, -1, 0.5, 1.5};
  const int ops = 4 + static_cast<int>(gen.next_below(10));
  for (int made = 0; made < ops;) {
    const Op op = kinds[gen.next_below(10)];
    int a = pick(), b = binary(op) ? pick() : -1;
    const double k = exponents[gen.next_below(5)];
    const bool new_constant = binary(op) && gen.next_below(7) == 0;
    const double c = std::round(uniform(-3, 3) * 2) / 2;  // 2.5, -1, ...
    const double av = e.terms[static_cast<size_t>(a)].value;
    const double bv = new_constant ? c : b >= 0 ? e.terms[static_cast<size_t>(b)].value : 0;
    const bool ok = (op != Op::Div || std::abs(bv) > 0.3) && (op != Op::Log || av > 0.2) &&
                    (op != Op::Exp || av < 2) && (op != Op::Relu || std::abs(av) > 0.05) &&
                    (op != Op::Pow || (k == std::floor(k) ? (k > 0 || std::abs(av) > 0.3) : av > 0.2));
    if (!ok) continue;
    Expr tried = e;
    if (new_constant) b = add_leaf(tried, c, true);
    add_term(tried, op, a, b, k);
    const Term& t = tried.terms.back();
    bool small = std::isfinite(t.value) && std::abs(t.value) < 10;
    for (size_t j = 0; j < inputs_of(t).size(); ++j) small = small && std::abs(local(t, tried, static_cast<int>(j))) < 10;
    if (!small || (new_constant && c == 0)) continue;
    e = tried;
    ++made;
  }
  // Sum what nothing reads into the output, so that every term matters.
  std::vector<bool> read(e.terms.size(), false);
  for (const Term& t : e.terms)
    for (int i : inputs_of(t)) read[static_cast<size_t>(i)] = true;
  const int last = static_cast<int>(e.terms.size()) - 1;
  for (int i = 0; i < last; ++i)
    if (!read[static_cast<size_t>(i)] && !e.terms[static_cast<size_t>(i)].constant)
      add_term(e, Op::Add, static_cast<int>(e.terms.size()) - 1, i);
  return e;
}

// Builds e in both, runs backward in both, and compares every value, then
// every leaf's gradient.
void compare(const Expr& e, const std::string& where) {
  const std::vector<mini::Value> m = build_mini(e);
  const std::vector<ember::Tensor> t = build_ember(e);
  for (size_t i = 0; i < e.terms.size(); ++i) {
    const double got = m[i].data(), want = t[i].item<double>();
    if (!yours::close(got, want, kGraphTol))
      fail(where + ": " + e.name(static_cast<int>(i)) + " is " + num(got) + ", but ember computes " + num(want) +
               "\n  the expression: " + e.text(),
           "each op alone passed: is each op given the inputs it is called with, in their order?");
  }
  m.back().backward();
  t.back().backward();
  const std::vector<int> leaves = leaves_of(e);
  std::vector<double> got;
  for (int i : leaves) got.push_back(m[static_cast<size_t>(i)].grad());
  for (size_t j = 0; j < leaves.size(); ++j) {
    const size_t i = static_cast<size_t>(leaves[j]);
    const double want = grad_of(t[i]);
    if (!yours::close(got[j], want, kGraphTol)) {
      std::string all;
      for (size_t l = 0; l < leaves.size(); ++l)
        all += (l ? ", " : "") + e.name(leaves[l]) + ".grad " + num(got[l]) + " (ember " +
               num(grad_of(t[static_cast<size_t>(leaves[l])])) + ")";
      fail(where + ": " + e.name(leaves[j]) + ".grad is " + num(got[j]) + ", but should be " + num(want) +
               "\n  the expression: " + e.text() + "\n  the gradients: " + all,
           walk_hint(e, got));
    }
  }
}

// ---- each op alone ----

struct OpCase {
  Op op;
  double k = 0;
  // A typical wrong local derivative, as a function of (a, b), and what it is.
  struct Wrong {
    int input;  // 0: a, 1: b
    std::function<double(double, double)> local;
    std::string mistake;
  };
  std::vector<Wrong> wrongs;
};

std::vector<OpCase> op_cases() {
  return {
      {Op::Add, 0, {{0, [](double, double) { return 0.0; }, "d(a + b)/da is 1: a change of a changes a + b as much"}}},
      {Op::Sub, 0, {{1, [](double, double) { return 1.0; }, "the minus sign of d(a - b)/db is missing"}}},
      {Op::Mul, 0,
       {{0, [](double a, double) { return a; }, "d(a * b)/da is the other factor, b, not a"},
        {1, [](double, double b) { return b; }, "d(a * b)/db is the other factor, a, not b"}}},
      {Op::Div, 0,
       {{1, [](double a, double b) { return -a / b; }, "d(a / b)/db has b squared below: -a / b^2"},
        {1, [](double a, double b) { return a / (b * b); }, "the minus sign of d(a / b)/db is missing"},
        {0, [](double, double b) { return b; }, "d(a / b)/da is 1 / b, not b"}}},
      {Op::Neg, 0, {{0, [](double, double) { return 1.0; }, "the minus sign of d(-a)/da is missing"}}},
      {Op::Pow, 3,
       {{0, [](double a, double) { return 3 * a * a * a; }, "d(a^k)/da lowers the power by one: k a^(k-1)"},
        {0, [](double a, double) { return a * a; }, "the factor k of d(a^k)/da = k a^(k-1) is missing"}}},
      {Op::Pow, 0.5,
       {{0, [](double a, double) { return 0.5 * std::sqrt(a); }, "d(a^k)/da lowers the power by one: k a^(k-1)"},
        {0, [](double a, double) { return 1 / std::sqrt(a); }, "the factor k of d(a^k)/da = k a^(k-1) is missing"}}},
      {Op::Exp, 0, {{0, [](double a, double) { return a; }, "d(e^a)/da is e^a itself, not a"}}},
      {Op::Log, 0,
       {{0, [](double a, double) { return std::log(a); }, "d(log a)/da is 1/a, not log a"},
        {0, [](double a, double) { return a; }, "d(log a)/da is 1/a, not a"}}},
      {Op::Tanh, 0,
       {{0, [](double a, double) { return 1 - std::tanh(a); }, "d(tanh a)/da is 1 - tanh(a)^2: the square is missing"},
        {0, [](double a, double) { return 1 - a * a; }, "d(tanh a)/da is 1 - tanh(a)^2, of the output, not 1 - a^2"}}},
      {Op::Relu, 0,
       {{0, [](double, double) { return 1.0; }, "relu passes no gradient where a < 0: its output does not move there"},
        {0, [](double a, double) { return a > 0 ? a : 0.0; }, "d relu(a)/da is 1 where a > 0 (the slope), not a"}}},
  };
}

// Inputs where the op is defined and away from its kinks.
std::pair<double, double> op_inputs(Op op, ember::Generator& gen) {
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * gen.next_double(); };
  double a = uniform(-2, 2), b = uniform(-2, 2);
  if (op == Op::Log || op == Op::Pow) a = uniform(0.3, 2.5);
  if (op == Op::Div && std::abs(b) < 0.3) b = b < 0 ? b - 0.3 : b + 0.3;
  if (op == Op::Relu && std::abs(a) < 0.05) a += 0.1;
  return {a, b};
}

Expr one_op(const OpCase& c, double a, double b) {
  Expr e;
  add_leaf(e, a);
  if (binary(c.op)) add_leaf(e, b);
  add_term(e, c.op, 0, binary(c.op) ? 1 : -1, c.k);
  return e;
}

void each_op_value() {
  ember::Generator gen(1);
  for (const OpCase& c : op_cases())
    for (int trial = 0; trial < 20; ++trial) {
      const auto [a, b] = op_inputs(c.op, gen);
      const Expr e = one_op(c, a, b);
      const double got = build_mini(e).back().data(), want = build_ember(e).back().item<double>();
      const int out = static_cast<int>(e.terms.size()) - 1;
      if (!yours::close(got, want, kOpTol))
        fail(e.rhs(out) + " with " + e.leaves() + " is " + num(got) + ", but should be " + num(want),
             c.op == Op::Log && yours::close(got, std::log10(a), kOpTol)
                 ? "log is the natural logarithm (std::log), not log10"
                 : "which number does the op compute? mini/value.h says, beside its declaration");
    }
}

void each_op_grad() {
  ember::Generator gen(2);
  for (const OpCase& c : op_cases())
    for (int trial = 0; trial < 20; ++trial) {
      const auto [a, b] = op_inputs(c.op, gen);
      const Expr e = one_op(c, a, b);
      const std::vector<mini::Value> m = build_mini(e);
      const std::vector<ember::Tensor> t = build_ember(e);
      m.back().backward();
      t.back().backward();
      const std::string op_text = e.rhs(static_cast<int>(e.terms.size()) - 1), inputs = e.leaves();
      check::expect(m.back().grad() == 1, "after out.backward(), out.grad is " + num(m.back().grad()) + ", not 1 (" +
                                              op_text + ", " + inputs + ")",
                    "backward() starts with the output's own grad: d out/d out = 1");
      for (int input = 0; input < (binary(c.op) ? 2 : 1); ++input) {
        const double got = m[static_cast<size_t>(input)].grad(), want = grad_of(t[static_cast<size_t>(input)]);
        if (yours::close(got, want, kOpTol)) continue;
        std::string hint = "work out d(" + op_text + ")/d" + e.name(input) +
                           " on paper and compare with the local derivative your op stores";
        for (const OpCase::Wrong& w : c.wrongs)
          if (w.input == input && yours::close(got, w.local(a, b), kOpTol)) hint = w.mistake;
        if (got == 0) hint = "no gradient reached " + e.name(input) + ": does backward() pass out's grad on to its inputs, each "
                             "times its local derivative?";
        fail("for " + op_text + " with " + inputs + ": " + e.name(input) + ".grad is " + num(got) + ", but should be " +
                 num(want),
             hint);
      }
    }
}

// ---- a value used twice, and the chapter's diamond ----

void used_twice() {
  Expr square, twice, again;
  add_leaf(square, 1.5);
  add_term(square, Op::Mul, 0, 0);  // x * x
  add_leaf(twice, -0.5);
  add_term(twice, Op::Add, 0, 0);  // x + x
  add_leaf(again, 1.25);
  add_leaf(again, -2);
  add_term(again, Op::Mul, 0, 1);
  add_term(again, Op::Mul, 2, 0);  // (x * y) * x
  for (const Expr* e : {&square, &twice, &again}) {
    const std::vector<mini::Value> m = build_mini(*e);
    const std::vector<ember::Tensor> t = build_ember(*e);
    m.back().backward();
    t.back().backward();
    std::vector<double> grads;
    for (int i : leaves_of(*e)) grads.push_back(m[static_cast<size_t>(i)].grad());
    const double got = m[0].grad(), want = grad_of(t[0]);
    if (!yours::close(got, want, kOpTol))
      fail("for " + e->text() + ": x0.grad is " + num(got) + ", but should be " + num(want),
           walk_hint(*e, grads, "x0 is used twice: its gradient is the sum of the parts of both uses"));
  }
}

// The chapter's diamond: c = x * y is read by a and by b, both read by out.
Expr diamond() {
  Expr e;
  add_leaf(e, 3);                  // x0 = x
  add_leaf(e, 2);                  // x1 = y
  add_term(e, Op::Mul, 0, 1);      // v2 = c = x * y = 6
  add_leaf(e, 1, true);
  add_term(e, Op::Add, 2, 3);      // v4 = a = c + 1 = 7
  add_leaf(e, 2, true);
  add_term(e, Op::Mul, 5, 2);      // v6 = b = 2 * c = 12
  add_term(e, Op::Mul, 4, 6);      // v7 = out = a * b = 84
  return e;
}

void the_diamond() {
  const Expr e = diamond();
  compare(e, "the diamond");
  const std::vector<double> every = walk_grads(e, Walk::EveryPath), once = walk_grads(e, Walk::Once);
  check::note("out = " + num(e.terms.back().value) + ": x.grad = " + num(walk_grads(e, Walk::Right)[0]) +
              " and y.grad = " + num(walk_grads(e, Walk::Right)[1]) + " (a recursion without an order gives " +
              num(every[0]) + " and " + num(every[1]) + ", a walk that visits each value once, as it reaches it, " +
              num(once[0]) + " and " + num(once[1]) + ")");
}

void random_expressions() {
  size_t most = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const Expr e = random_expr(seed);
    most = std::max(most, e.terms.size());
    compare(e, "seed " + std::to_string(seed));
  }
  check::note("60 expressions of up to " + std::to_string(most) + " values agree with ember");
}

void zero_grad_then_again() {
  const Expr e = random_expr(1000);
  const std::vector<mini::Value> m = build_mini(e);
  m.back().backward();
  m.back().zero_grad();
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i].grad() != 0)
      fail("after out.zero_grad(), " + e.name(static_cast<int>(i)) + ".grad is " + num(m[i].grad()) + ", not 0" +
               "\n  the expression: " + e.text(),
           i + 1 == m.size() ? "zero_grad() clears the value it is called on too"
                             : "zero_grad() must reach every value out was computed from, not only out itself");
  m.back().backward();
  const std::vector<ember::Tensor> t = build_ember(e);
  t.back().backward();
  const std::vector<int> leaves = leaves_of(e);
  for (int i : leaves) {
    const double got = m[static_cast<size_t>(i)].grad(), want = grad_of(t[static_cast<size_t>(i)]);
    check::expect(yours::close(got, want, kGraphTol),
                  "backward(), zero_grad(), backward() again: " + e.name(i) + ".grad is " + num(got) +
                      ", but should be " + num(want) + " (the gradient of one backward)\n  the expression: " + e.text(),
                  "did zero_grad() clear every value, and backward() start from out.grad = 1 again?");
  }
}

check::Exercise values() {
  using yours::step;
  return {"1", "Values", "docs/book/build_your_own/01_values.md", {
    step("a leaf holds its number, and its grad starts at 0", [] {
      const mini::Value x(1.5);
      check::expect(x.data() == 1.5, "Value(1.5).data() is " + num(x.data()) + ", not 1.5");
      check::expect(x.grad() == 0, "Value(1.5).grad() is " + num(x.grad()) + " before any backward, not 0");
    }),
    step("each op computes its value (ten ops, 20 inputs each)", each_op_value),
    step("each op alone passes the right gradient to its inputs", each_op_grad),
    step("a value used twice gets the parts of both uses: x * x, x + x, (x * y) * x", used_twice),
    step("the diamond: c = x * y read by a = c + 1 and b = 2 * c, out = a * b", the_diamond),
    step("60 random expressions with shared and reused values: every value and every leaf's gradient",
         random_expressions),
    step("zero_grad() clears the whole graph, and backward() then gives the same gradients", zero_grad_then_again),
  }};
}

const yours::Stage stage{1, values};

}  // namespace
