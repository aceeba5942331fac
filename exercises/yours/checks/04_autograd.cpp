// Checks stage 4 (docs/book/build_your_own/04_autograd.md): mini's Vars
// against ember's autograd (float64). First what an op records, then each
// op's gradient alone on random inputs (broadcast, of every layout, with a
// random output gradient), then the engine on the graphs that tell its
// mistakes apart (a value used twice at one depth and at two, a leaf used
// twice, backward() called twice), then random expression graphs with
// shared and reused values and broadcasting in every position, then the
// version counters, then the refusals.
//
// Tolerances: a gradient is a few of stage 3's ops (each exact to a bit or
// two: 1e-12) and a sum_to over at most 256 terms of magnitude below 20
// (1e-10, see 03_elementwise.cpp), so 1e-9 relative; a random graph chains at
// most 9 ops and adds at most 11 paths, 1e-8. (Below 1 in magnitude the
// tolerances are absolute.)
//
// When a gradient differs, the checker computes what each typical mistake
// would have given on the same input (broadcasting not undone, mul's
// operands swapped, a sign lost, tanh's derivative taken of x, a sum's
// gradient expanded without its dims put back, a node run before all its
// uses, = where += belongs, a leaf's grad started again on each backward())
// and names the one that matches.
#include <algorithm>
#include <optional>

#include "exercises/yours/checks/inputs.h"
#include "exercises/yours/checks/yours.h"
#include "mini/autograd.h"

namespace {

using check::fail;
using check::num;
using check::show;
using yours::count;
using yours::first_difference;
using yours::same;
using yours::values;
using yours::dims_text;
using yours::Input;
using yours::operand_shape;
using yours::random_input;
using yours::random_shape;

// ---- a tensor in both frameworks, and comparisons ----

struct Pair {
  mini::Var m;
  ember::Tensor e;
  std::string how;  // its layout, for the messages
};

// A leaf in both, from an input of any layout.
Pair leaf(const Input& in, bool requires_grad) {
  ember::Tensor e = in.e.detach();
  if (requires_grad) e.requires_grad_();
  return {mini::Var(in.m, requires_grad), e, in.describe()};
}

const std::string kBroadcast =
    "broadcasting not undone: an input that was broadcast (a missing leading dim, or a size 1 repeated) was used "
    "once for each copy, so its gradient is the sum of the copies' parts, back to its own shape (stage 3's sum_to)";

// Compares a leaf's gradient with ember's; `mistake` (called only on a
// difference in the values) names the typical mistake that gives `got`.
void compare_grad(const Pair& x, const std::string& name, double rel, const std::string& where,
                  const std::function<std::string(const mini::Tensor& got)>& mistake) {
  const std::optional<mini::Tensor> got = x.m.grad();
  const ember::Tensor want = x.e.grad();
  if (!want.defined()) {
    check::expect(!got, name + " has a gradient, but nothing it was used for requires one" + where,
                  "an input that requires no grad gets no node, and no gradient");
    return;
  }
  if (!got)
    fail("no gradient reached " + name + where,
         "does record() link each input's node into the new node (next), and does backward() walk every node it can "
         "reach and add what arrives at a leaf into the leaf's grad?");
  if (got->shape() != want.shape())
    fail(name + "'s gradient has shape " + show(got->shape()) + ", but " + name + " has shape " + show(want.shape()) +
             where,
         kBroadcast);
  const std::string diff = first_difference(*got, want, rel);
  if (!diff.empty()) fail(name + "'s gradient: " + diff + where, mistake(*got));
}

// ---- what an op records ----

const char* const kOps[] = {"add", "sub", "mul", "div", "neg", "exp", "log", "tanh", "relu", "sum", "max"};
enum Op { Add, Sub, Mul, Div, Neg, Exp, Log, Tanh, Relu, Sum, Max, kOpCount };

bool binary(int op) { return op <= Div; }

// One op's call, in both: its inputs, and for sum and max their arguments.
struct Call {
  int op = Add;
  ember::Shape dims;  // sum's (none: all); max's d is dims[0]
  bool keepdim = false;

  std::string text() const {
    const std::string name = kOps[op];
    if (binary(op)) return name + "(a, b)";
    if (op == Sum) return "sum(x, " + dims_text(dims) + ", " + (keepdim ? "true" : "false") + ")";
    if (op == Max) return "max(x, " + std::to_string(dims[0]) + ", " + (keepdim ? "true" : "false") + ")";
    return name + "(x)";
  }
};

ember::Tensor ember_sum(const ember::Tensor& x, ember::Shape dims, bool keepdim) {
  if (x.dim() == 0) return x.sum();
  if (dims.empty())
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  return x.sum(dims, keepdim);
}

mini::Var apply(const Call& c, const mini::Var& a, const mini::Var& b) {
  switch (c.op) {
    case Add: return mini::add(a, b);
    case Sub: return mini::sub(a, b);
    case Mul: return mini::mul(a, b);
    case Div: return mini::div(a, b);
    case Neg: return mini::neg(a);
    case Exp: return mini::exp(a);
    case Log: return mini::log(a);
    case Tanh: return mini::tanh(a);
    case Relu: return mini::relu(a);
    case Sum: return mini::sum(a, c.dims, c.keepdim);
    default: return mini::max(a, c.dims[0], c.keepdim);
  }
}

ember::Tensor apply(const Call& c, const ember::Tensor& a, const ember::Tensor& b) {
  switch (c.op) {
    case Add: return a.add(b);
    case Sub: return a.sub(b);
    case Mul: return a.mul(b);
    case Div: return a.div(b);
    case Neg: return a.neg();
    case Exp: return a.exp();
    case Log: return a.log();
    case Tanh: return a.tanh();
    case Relu: return a.relu();
    case Sum: return ember_sum(a, c.dims, c.keepdim);
    default: return a.max(c.dims[0], c.keepdim).first;
  }
}

// Whether some dim of t repeats one element (an expanded view): max along it would tie.
bool repeats(const mini::Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.strides()[static_cast<size_t>(d)] == 0 && t.shape()[static_cast<size_t>(d)] > 1) return true;
  return false;
}

// A random call and its inputs (b unused by a unary op): positive inputs
// where log or a divisor needs them.
struct Trial {
  Call call;
  Input a, b;
};

Trial random_trial(int op, ember::Generator& gen) {
  Call call{op, {}, false};
  if (binary(op)) {
    const ember::Shape out = random_shape(gen);
    Input a = random_input(operand_shape(out, gen), gen);
    Input b = random_input(operand_shape(out, gen), gen, op == Div);
    call.keepdim = gen.next_below(2);
    return {call, a, b};
  }
  ember::Shape shape = random_shape(gen);
  if (op == Max) {
    while (shape.empty() || count(shape) == 0) shape = random_shape(gen);
    Input a = random_input(shape, gen);
    while (repeats(a.m)) a = random_input(shape, gen);
    call.dims = {static_cast<int64_t>(gen.next_below(shape.size()))};
    call.keepdim = gen.next_below(2);
    return {call, a, a};
  }
  Input a = random_input(shape, gen, op == Log);
  if (op == Sum && gen.next_below(5) != 0)
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      if (gen.next_below(2)) call.dims.push_back(d);
  call.keepdim = gen.next_below(2);
  return {call, a, a};
}

// The same call on one input that requires grad and one that may not: the
// result requires grad exactly when an input does, and its node links the
// inputs' nodes (nullptr for one that requires none).
void records() {
  ember::Generator gen(40);
  for (int trial = 0; trial < 220; ++trial) {
    const int op = trial % kOpCount;
    const Trial t = random_trial(op, gen);
    const bool ga = gen.next_below(3) != 0, gb = binary(op) && gen.next_below(2);
    const mini::Var a(t.a.m, ga), b(t.b.m, gb);
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 40): " + t.call.text() +
                              "\n  a: " + t.a.describe() + (ga ? ", requires grad" : ", requires no grad") +
                              (binary(op) ? "\n  b: " + t.b.describe() + (gb ? ", requires grad" : ", requires no grad")
                                          : "");
    const mini::Var y = apply(t.call, a, b);
    const ember::Tensor want = apply(t.call, t.a.e, t.b.e);
    if (!same(y.data(), want, 1e-10))
      fail(t.call.text() + "'s data: " +
               (y.data().shape() != want.shape() ? "shape " + show(y.data().shape()) + ", but should be " + show(want.shape())
                                                 : first_difference(y.data(), want, 1e-10)) +
               where,
           "an op on Vars computes what stage 3's op computes on their data");
    const bool any = ga || gb;
    check::expect(y.requires_grad() == any,
                  t.call.text() + (any ? " requires no grad, but an input does" : " requires grad, but no input does") +
                      where,
                  any ? "a result needs a node when some input requires grad: gradients must flow through it"
                      : "no input requires grad: a node would only cost memory and time (record makes none)");
    if (!any) continue;
    const mini::GradNode& node = *y.node();
    check::expect(!node.is_leaf(), t.call.text() + "'s node has no backward" + where,
                  "record() keeps the op's backward in its node");
    check::expect(node.shape == y.shape(),
                  t.call.text() + "'s node has shape " + show(node.shape) + ", but the result has shape " +
                      show(y.shape()) + where,
                  "a node knows the shape of the Var it made: backward() checks each gradient against it");
    const size_t inputs = binary(op) ? 2 : 1;
    check::expect(node.next.size() == inputs,
                  t.call.text() + "'s node has " + std::to_string(node.next.size()) + " entries in next, for " +
                      std::to_string(inputs) + " inputs" + where,
                  "next has one entry for each input of the op, in order (nullptr for one that requires no grad)");
    check::expect(node.next[0] == a.node() && (inputs == 1 || node.next[1] == b.node()),
                  t.call.text() + "'s next does not hold its inputs' nodes, in order" + where,
                  "entry i of next is input i's node (a.node()), which is nullptr when it requires no grad");
  }
}

// ---- each op's gradient, alone ----

// What a typical mistake in one op's backward gives for input `which` (0 or
// 1), from ember's tensors of the same trial: the message, or empty.
std::string op_mistake(const Call& c, int which, const mini::Tensor& got, const ember::Tensor& a, const ember::Tensor& b,
                       const ember::Tensor& w, const ember::Tensor& want) {
  const ember::Tensor x = which == 0 ? a : b;
  auto is = [&](const ember::Tensor& t) { return same(got, t.sum_to(x.shape()), 1e-9); };
  const ember::Tensor one = ember::tensor({1.0}, ember::kFloat64);
  switch (c.op) {
    case Mul:
      if (is(w.mul(x))) return "mul's gradient for an input is grad × the other input, not × itself";
      break;
    case Sub:
      if (which == 1 && is(w)) return "sub's gradient for b: a − b goes down when b goes up, so it is −grad";
      break;
    case Div:
      if (which == 0 && is(w.mul(b))) return "the derivative of a/b with respect to a is 1/b: divide by b";
      if (which == 1 && is(w.mul(a).div(b.mul(b)))) return "the derivative of a/b with respect to b is −a/b²: the sign";
      if (which == 1 && is(w.neg().div(b.mul(b)))) return "the derivative of a/b with respect to b is −a/b²: a is missing";
      if (which == 1 && is(w.neg().mul(a).div(b))) return "the derivative of a/b with respect to b is −a/b², b squared";
      break;
    case Exp:
      if (is(w.mul(x))) return "the derivative of e^x is e^x, not x";
      if (is(w)) return "the derivative of e^x is e^x: the gradient is grad × e^x";
      break;
    case Log:
      if (is(w.mul(x))) return "the derivative of log x is 1/x: divide by x";
      break;
    case Tanh:
      if (is(w.mul(one.sub(x.mul(x))))) return "tanh's derivative is 1 − tanh(x)², not 1 − x²";
      if (is(w.mul(one.sub(x.tanh())))) return "tanh's derivative is 1 − tanh(x)², squared";
      break;
    case Relu:
      if (is(w)) return "relu lets the gradient through only where x > 0; elsewhere the output did not move";
      break;
    case Max:
      if (same(got, (c.keepdim ? w : w.unsqueeze(c.dims[0])).expand(x.shape()), 1e-9))
        return "every element along the dim got the gradient: only the one that is the max moved the result";
      break;
    case Sum:
      if (!c.keepdim && x.dim() > 0) {
        try {
          if (same(got, w.expand(x.shape()), 1e-9))
            return "sum's gradient was expanded without the summed dims put back: without keepdim the result lacks "
                   "them, so grad lines up with x's dims from the right, the wrong ones; put them back as sizes 1 "
                   "first";
        } catch (const ember::Error&) {
        }
      }
      break;
  }
  if (same(got, want.mul(ember::tensor({2.0}, ember::kFloat64)), 1e-9))
    return "your gradient is twice ember's: the same part added twice (is a pending gradient both set and added?)";
  if (same(got, want.neg(), 1e-9)) return "your gradient has the wrong sign";
  return "";
}

int op_gradients() {
  ember::Generator gen(41);
  int broadcast = 0;
  for (int trial = 0; trial < 440; ++trial) {
    const Trial t = random_trial(trial % kOpCount, gen);
    const Call& c = t.call;
    const Pair a = leaf(t.a, true);
    const Pair b = binary(c.op) ? leaf(t.b, true) : a;
    const ember::Tensor ye = apply(c, a.e, b.e);
    const std::vector<double> wv = yours::draw(ye.numel(), gen, false, 0);
    const ember::Tensor w = ember::tensor(wv, ye.shape());
    const mini::Tensor wm(wv, ye.shape());
    const bool broadcasts = binary(c.op) && (a.m.shape() != ye.shape() || b.m.shape() != ye.shape());
    broadcast += broadcasts;
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 41): y = " + c.text() +
                              ", then y.backward(grad), grad of shape " + show(ye.shape()) +
                              "\n  " + (binary(c.op) ? "a: " + t.a.describe() + "\n  b: " + t.b.describe()
                                                     : "x: " + t.a.describe());
    try {
      const mini::Var y = apply(c, a.m, b.m);
      y.backward(wm);
    } catch (const mini::Error& e) {
      fail(std::string("your code refused: ") + e.what() + where,
           broadcasts ? kBroadcast
           : c.op == Sum && !c.keepdim
               ? "without keepdim, grad lacks the summed dims: put them back as sizes 1 before it can expand to x"
               : "ember accepts this: what made your code refuse it?");
    }
    ye.backward(w);
    const std::vector<std::pair<const Pair*, std::string>> inputs =
        binary(c.op) ? std::vector<std::pair<const Pair*, std::string>>{{&a, "a"}, {&b, "b"}}
                     : std::vector<std::pair<const Pair*, std::string>>{{&a, "x"}};
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto& [x, name] = inputs[i];
      compare_grad(*x, name, 1e-9, where, [&](const mini::Tensor& got) {
        const std::string m = op_mistake(c, static_cast<int>(i), got, a.e.detach(), b.e.detach(), w, x->e.grad());
        return m.empty() ? "derive " + std::string(kOps[c.op]) + "'s gradient for " + name +
                               " from its definition: how does the output move when one element of " + name +
                               " moves a little?"
                         : m;
      });
    }
  }
  return broadcast;
}

// ---- the engine ----

ember::Tensor constant(double v) { return ember::tensor({v}, ember::kFloat64); }
mini::Var mini_constant(double v) { return mini::Var(mini::Tensor({v}, {1})); }

const std::string kOnePart =
    "h is used by two ops, and its gradient held only one of their parts when it passed it on: either the second "
    "part replaced the first (= where += belongs), or h ran before the second part had arrived";

// x -> h = tanh(x) -> y = h*3 + h*5: two uses of h at the same depth.
void same_depth() {
  ember::Generator gen(42);
  const Input in = random_input({2, 3}, gen);
  const Pair x = leaf(in, true);
  const std::vector<double> wv = yours::draw(6, gen, false, 0);
  const mini::Tensor wm(wv, {2, 3});
  const ember::Tensor w = ember::tensor(wv, {2, 3});
  const mini::Var h = mini::tanh(x.m);
  mini::add(mini::mul(h, mini_constant(3)), mini::mul(h, mini_constant(5))).backward(wm);
  const ember::Tensor he = x.e.tanh();
  he.mul(constant(3)).add(he.mul(constant(5))).backward(w);
  const ember::Tensor local = constant(1).sub(x.e.detach().tanh().pow(2.0)).mul(w);
  compare_grad(x, "x", 1e-9,
               "\n  h = tanh(x), y = add(mul(h, 3), mul(h, 5)), y.backward(grad)\n  x: " + in.describe(),
               [&](const mini::Tensor& got) {
                 if (same(got, local.mul(constant(3)), 1e-9) || same(got, local.mul(constant(5)), 1e-9)) return kOnePart;
                 return std::string("h's gradient is the sum of its two uses' parts, 3·grad + 5·grad; then tanh's "
                                    "backward passes it to x, once");
               });
}

// x -> h = tanh(x) -> y = h + exp(tanh(h)): h used directly, and at the end
// of a longer path; the long path reaches h last.
void two_depths() {
  ember::Generator gen(43);
  const Input in = random_input({3, 2}, gen);
  const Pair x = leaf(in, true);
  const std::vector<double> wv = yours::draw(6, gen, false, 0);
  const mini::Tensor wm(wv, {3, 2});
  const ember::Tensor w = ember::tensor(wv, {3, 2});
  const mini::Var h = mini::tanh(x.m);
  mini::add(h, mini::exp(mini::tanh(h))).backward(wm);
  const ember::Tensor he = x.e.tanh();
  he.add(he.tanh().exp()).backward(w);
  // The two paths' parts, each alone, in ember.
  const ember::Tensor xd = x.e.detach();
  auto part = [&](bool direct) {
    const ember::Tensor xi = xd.clone().requires_grad_();
    const ember::Tensor hi = xi.tanh();
    (direct ? hi : hi.tanh().exp()).backward(w);
    return xi.grad();
  };
  const ember::Tensor direct = part(true), path = part(false);
  compare_grad(x, "x", 1e-9, "\n  h = tanh(x), y = add(h, exp(tanh(h))), y.backward(grad)\n  x: " + in.describe(),
               [&](const mini::Tensor& got) {
                 if (same(got, direct, 1e-9) || same(got, path, 1e-9))
                   return std::string(
                       "h ran before every node that uses it had passed its part: add reaches h at once, exp(tanh(h)) "
                       "two nodes later; count each node's uses (the edges into it) before the walk, and run a node "
                       "when the last has arrived");
                 if (same(got, direct.add(direct).add(path), 1e-9) || same(got, direct.add(path).add(path), 1e-9))
                   return std::string("one path's part reached x twice: h ran once with the part it had, then again "
                                      "with more; run each node once, when every use has passed its part");
                 return std::string("x's gradient is the sum of the two paths' parts, through h once");
               });
}

// A leaf used twice in one op and in two ops, in one backward().
void leaf_twice() {
  ember::Generator gen(44);
  const Input in = random_input({2, 2}, gen);
  const Pair x = leaf(in, true);
  mini::sum(mini::mul(x.m, x.m)).backward();
  x.e.mul(x.e).sum().backward();
  const ember::Tensor xd = x.e.detach();
  compare_grad(x, "x", 1e-9, "\n  y = sum(mul(x, x)), y.backward()\n  x: " + in.describe(),
               [&](const mini::Tensor& got) {
                 if (same(got, xd, 1e-9))
                   return std::string("x's grad holds one of its two parts: a leaf reached twice in one backward() "
                                      "adds each part into its grad");
                 return std::string("d(x·x)/dx = 2x: both of mul's inputs are x, and each passes its part");
               });
  const Input in2 = random_input({3}, gen);
  const Pair z = leaf(in2, true);
  mini::sum(mini::add(z.m, mini::tanh(z.m))).backward();
  z.e.add(z.e.tanh()).sum().backward();
  compare_grad(z, "z", 1e-9, "\n  y = sum(add(z, tanh(z))), y.backward()\n  z: " + in2.describe(),
               [&](const mini::Tensor& got) {
                 if (same(got, ember::ones_like(z.e.detach()), 1e-9) ||
                     same(got, constant(1).sub(z.e.detach().tanh().pow(2.0)), 1e-9))
                   return std::string("z's grad holds one of its two uses' parts: a leaf reached twice in one "
                                      "backward() adds each part into its grad");
                 return std::string("z's gradient is 1 (through add) + 1 − tanh(z)² (through tanh)");
               });
}

// backward() twice adds; zero_grad() starts again.
void across_calls() {
  ember::Generator gen(45);
  const Input in = random_input({2, 3}, gen);
  const Pair x = leaf(in, true);
  mini::sum(mini::mul(x.m, mini_constant(3))).backward();
  mini::sum(mini::tanh(x.m)).backward();
  x.e.mul(constant(3)).sum().backward();
  x.e.tanh().sum().backward();
  const ember::Tensor second = constant(1).sub(x.e.detach().tanh().pow(2.0));
  compare_grad(x, "x", 1e-9,
               "\n  sum(mul(x, 3)).backward(), then sum(tanh(x)).backward()\n  x: " + in.describe(),
               [&](const mini::Tensor& got) {
                 if (same(got, second, 1e-9))
                   return std::string("x's grad was started again by the second backward(): gradients add up over "
                                      "backward() calls (that is how the gradients of two losses are summed); only "
                                      "zero_grad() forgets them");
                 return std::string("after two backward() calls, x's grad is the sum of both gradients");
               });
  x.m.zero_grad();
  check::expect(!x.m.grad(), "after x.zero_grad(), x still has a gradient", "zero_grad() forgets a leaf's gradient");
  mini::sum(mini::tanh(x.m)).backward();
  const std::optional<mini::Tensor> got = x.m.grad();
  check::expect(got && same(*got, second, 1e-9),
                "after zero_grad(), sum(tanh(x)).backward() should give x the gradient 1 − tanh(x)² alone" +
                    std::string("\n  x: ") + in.describe(),
                "zero_grad() forgets the gradient; the next backward() starts it from what it brings");
  check::expect(!mini::tanh(x.m).grad(), "a Var an op made has a gradient",
                "only leaves keep their gradient (as in PyTorch): grad() of a Var an op made is none");
}

// ---- random graphs ----

// A value of a random graph, in both frameworks.
struct Value {
  mini::Var m;
  ember::Tensor e;
  std::string text;  // how it was made: "v3 = mul(v0, v2)"
  int uses = 0;
};

int random_graphs() {
  ember::Generator gen(46);
  int reused = 0;
  for (int graph = 0; graph < 200; ++graph) {
    const ember::Shape full = random_shape(gen, 3);
    std::vector<Value> v;
    std::vector<Pair> leaves;
    const int n_leaves = 2 + static_cast<int>(gen.next_below(3));
    for (int i = 0; i < n_leaves; ++i) {
      const Input in = random_input(operand_shape(full, gen), gen);
      const bool g = i == 0 || gen.next_below(4) != 0;
      leaves.push_back(leaf(in, g));
      v.push_back({leaves.back().m, leaves.back().e,
                   "v" + std::to_string(i) + " = a leaf, " + in.describe() + (g ? ", requires grad" : ", no grad")});
    }
    const int n_ops = 4 + static_cast<int>(gen.next_below(5));
    for (int k = 0; k < n_ops; ++k) {
      const size_t i = gen.next_below(v.size()), j = gen.next_below(v.size());
      const std::string vi = "v" + std::to_string(i), vj = "v" + std::to_string(j);
      const std::string name = "v" + std::to_string(v.size());
      ++v[i].uses;
      const Value a = v[i], b = v[j];
      switch (gen.next_below(7)) {
        case 0: ++v[j].uses; v.push_back({mini::add(a.m, b.m), a.e.add(b.e), name + " = add(" + vi + ", " + vj + ")"}); break;
        case 1: ++v[j].uses; v.push_back({mini::sub(a.m, b.m), a.e.sub(b.e), name + " = sub(" + vi + ", " + vj + ")"}); break;
        case 2: ++v[j].uses; v.push_back({mini::mul(a.m, b.m), a.e.mul(b.e), name + " = mul(" + vi + ", " + vj + ")"}); break;
        case 3: {  // a divisor in [1/e, e]
          ++v[j].uses;
          v.push_back({mini::div(a.m, mini::exp(mini::tanh(b.m))), a.e.div(b.e.tanh().exp()),
                       name + " = div(" + vi + ", exp(tanh(" + vj + ")))"});
          break;
        }
        case 4: v.push_back({mini::tanh(a.m), a.e.tanh(), name + " = tanh(" + vi + ")"}); break;
        case 5: v.push_back({mini::relu(a.m), a.e.relu(), name + " = relu(" + vi + ")"}); break;
        default: {  // a sum that keeps the shape broadcastable to `full`
          ember::Shape dims;
          const bool keepdim = a.m.shape().empty() || gen.next_below(2);
          if (keepdim) {
            for (int64_t d = 0; d < static_cast<int64_t>(a.m.shape().size()); ++d)
              if (gen.next_below(2)) dims.push_back(d);
            if (dims.empty() && !a.m.shape().empty()) dims.push_back(0);
          } else {
            dims.push_back(0);  // a leading dim, dropped
          }
          const ember::Tensor se = a.m.shape().empty() ? a.e.sum() : a.e.sum(dims, keepdim);
          v.push_back({mini::sum(a.m, dims, keepdim), se,
                       name + " = sum(" + vi + ", " + dims_text(dims) + ", " + (keepdim ? "true" : "false") + ")"});
        }
      }
    }
    // y: the sum of every value no op used (all broadcast to `full`), summed to one number.
    mini::Var ym = v.back().m;
    ember::Tensor ye = v.back().e;
    std::string y = "y = sum(v" + std::to_string(v.size() - 1);
    for (size_t i = 0; i + 1 < v.size(); ++i)
      if (v[i].uses == 0 && v[i].m.requires_grad()) {
        ym = mini::add(ym, v[i].m);
        ye = ye.add(v[i].e);
        y += " + v" + std::to_string(i);
      }
    y += ")";
    int shared = 0;
    for (const Value& value : v) shared += value.uses > 1;
    reused += shared > 0;
    std::string where = "\n  graph " + std::to_string(graph) + " (seed 46), shape " + show(full) + ":";
    for (const Value& value : v) where += "\n    " + value.text + (value.uses > 1 ? "  (used " + std::to_string(value.uses) + " times)" : "");
    where += "\n    " + y + ", y.backward()";
    ym = mini::sum(ym);
    ye = ye.sum();
    if (!ye.requires_grad()) continue;
    try {
      ym.backward();
    } catch (const mini::Error& e) {
      fail(std::string("your code refused: ") + e.what() + where, "ember accepts this graph: what made yours refuse it?");
    }
    ye.backward();
    for (size_t i = 0; i < leaves.size(); ++i)
      compare_grad(leaves[i], "v" + std::to_string(i), 1e-8, where, [&](const mini::Tensor&) {
        return std::string("each op's gradient and the small graphs passed: what does this graph have that they did "
                           "not? ") +
               (shared ? "Here values are used more than once, some at different depths; " : "") +
               "check that every node runs once, after all its uses, and that every part reaches the leaves";
      });
  }
  return reused;
}

// ---- versions ----

void versions() {
  // add_ changes the data, broadcast, and counts a version.
  const mini::Var x(mini::Tensor({1, 2, 3, 4, 5, 6}, {2, 3}));
  x.add_(mini::Tensor({10, 20, 30}, {3}));
  check::expect(x.data().values() == std::vector<double>{11, 22, 33, 14, 25, 36},
                "x = ((1, 2, 3), (4, 5, 6)); x.add_((10, 20, 30)) gives " + show(x.data().values()) +
                    ", not (11, 22, 33, 14, 25, 36)",
                "add_ adds delta, broadcast to x's shape, into x's own numbers (through its view)");
  x.add_(mini::Tensor({1}, {1}));
  check::expect(x.version() == 2, "after two add_ calls, x.version() is " + std::to_string(x.version()) + ", not 2",
                "each change in place counts one version");
  // A change of what mul saved, before backward: refused.
  const mini::Var w(mini::Tensor({0.5, -1, 2}, {3}), true);
  const mini::Var y = mini::mul(x, w);
  w.add_(mini::Tensor({0.1, 0.1, 0.1}, {3}));
  yours::expect_refusal([&] { mini::sum(y).backward(); }, {"mul"},
                        "y = mul(x, w), then w.add_(0.1), then sum(y).backward()",
                        "nothing was refused: w changed in place after mul saved it, so mul's backward would multiply "
                        "by the new w, numbers the forward never used; Saved keeps the version it saw, and get() "
                        "compares it with the Var's version now");
  // A refusal leaves every grad as it was, a leaf's that the walk reached before it too.
  const mini::Var u(mini::Tensor({1, 2, 3}, {3}), true);
  const mini::Var w1(mini::Tensor({0.5, -1, 2}, {3}), true);
  const mini::Var y1 = mini::add(mini::mul(x, w1), mini::tanh(mini::tanh(u)));
  w1.add_(mini::Tensor({0.1}, {1}));
  yours::expect_refusal([&] { mini::sum(y1).backward(); }, {"mul"},
                        "y = add(mul(x, w), tanh(tanh(u))), then w.add_(0.1), then sum(y).backward()",
                        "nothing was refused: w changed in place after mul saved it");
  const std::optional<mini::Tensor> ug = u.grad();
  check::expect(!ug,
                "y = add(mul(x, w), tanh(tanh(u))), w changed in place: sum(y).backward() was refused, but left u "
                "with the gradient " + (ug ? show(ug->values()) : std::string()),
                "a refused backward() leaves every grad as it was: gather the leaves' gradients during the walk, "
                "and write them into their grads only when it is done");
  // What add saved: nothing of w, so a change of w harms nothing.
  const mini::Var w2(mini::Tensor({0.5, -1, 2}, {3}), true);
  const mini::Var y2 = mini::add(x, w2);
  w2.add_(mini::Tensor({0.1}, {1}));
  try {
    mini::sum(y2).backward();
  } catch (const mini::Error& e) {
    fail(std::string("y = add(x, w), then w.add_(0.1), then sum(y).backward() was refused: ") + e.what(),
         "add's backward reads neither input (its gradient is grad, summed back to each shape): it saves nothing, so "
         "nothing it saved was changed; only a backward that reads a saved tensor can be made wrong by a change");
  }
  const std::optional<mini::Tensor> g2 = w2.grad();
  check::expect(g2 && g2->values() == std::vector<double>{2, 2, 2},
                "y = add(x, w), x of shape (2, 3), w of shape (3): sum(y).backward() should give w the gradient "
                "(2, 2, 2)",
                kBroadcast);
  // Changed, then used: a new op saves the new version.
  const mini::Var w3(mini::Tensor({0.5, -1, 2}, {3}), true);
  w3.add_(mini::Tensor({1}, {1}));
  mini::sum(mini::mul(x, w3)).backward();
  const std::optional<mini::Tensor> g3 = w3.grad();
  check::expect(g3 && g3->values() == std::vector<double>{12 + 15, 23 + 26, 34 + 37},
                "w.add_(1), then sum(mul(x, w)).backward() should give w the gradient (27, 49, 71), x's columns "
                "summed",
                "a change before the op is not a change after the save: compare the version the op saw with the "
                "Var's version when backward reads it");
  yours::expect_refusal([&] { mini::Var(mini::Tensor({1, 2}, {2}).expand({3, 2})).add_(mini::Tensor({1}, {1})); },
                        {"add_"}, "add_ on a Var whose data is a (3, 2) expanded from (2)",
                        "an expanded view repeats one element along a dim: writing one index writes all the copies; "
                        "refuse it");
  yours::expect_refusal([&] { x.add_(mini::Tensor({1, 2}, {2})); }, {"add_", "(2)"},
                        "add_ of a delta of shape (2) into a Var of shape (2, 3)",
                        "a delta that does not broadcast to the Var's shape is refused, before anything is written");
  check::expect(x.version() == 2, "a refused add_ changed x's version to " + std::to_string(x.version()),
                "refuse before you write or count anything: a refusal leaves the Var as it was");
}

// ---- refusals ----

void refusals() {
  const mini::Var x(mini::Tensor({1, 2, 3, 4, 5, 6}, {2, 3}), true);
  const mini::Var y = mini::tanh(x);
  yours::expect_refusal([&] { y.backward(); }, {"backward", "(2, 3)"}, "backward() on a Var of shape (2, 3)",
                        "a gradient of 1 is implied only for one number (a loss); for more, which gradient is meant? "
                        "(the caller says, with backward(grad))");
  yours::expect_refusal([&] { y.backward(mini::Tensor({1, 2, 3, 4, 5, 6}, {3, 2})); }, {"backward", "(3, 2)", "(2, 3)"},
                        "backward(grad) with a grad of shape (3, 2) for a Var of shape (2, 3)",
                        "the gradient of a Var has that Var's shape");
  const mini::Var c(mini::Tensor({1, 2}, {2}));
  yours::expect_refusal([&] { mini::sum(mini::exp(c)).backward(); }, {"backward"},
                        "backward() on a Var that nothing requiring grad went into",
                        "no leaf below it requires grad: there is no graph to walk, and the caller has made a mistake");
  yours::expect_refusal([&] { mini::add(x, mini::Var(mini::Tensor({1, 2}, {2}))); }, {"add", "(2, 3)", "(2)"},
                        "add(a, b), a of shape (2, 3), b of shape (2)", "the ops on Vars refuse what stage 3's refuse");
}

check::Exercise autograd() {
  using yours::step;
  return {"4", "Autograd on tensors", "docs/book/build_your_own/04_autograd.md", {
    step("each op on Vars computes stage 3's numbers and records a node only when an input requires grad", records),
    step("each op's gradient alone, on 440 random inputs of every layout, broadcast, with a random grad", [] {
      const int broadcast = op_gradients();
      check::note(std::to_string(broadcast) + " of them with an input broadcast");
    }),
    step("a value used twice at one depth: its gradient is the sum of both parts", same_depth),
    step("a value used at two depths: it runs after its last use", two_depths),
    step("a leaf used twice in one backward(): both parts add into its grad", leaf_twice),
    step("backward() twice adds up; zero_grad() forgets", across_calls),
    step("random graphs, 200 of them, with shared and reused values, broadcast, some inputs with no grad", [] {
      const int reused = random_graphs();
      check::note(std::to_string(reused) + " of them with a value used more than once");
    }),
    step("versions: a tensor saved for backward and then changed in place is refused", versions),
    step("what must be refused is refused, with a message naming the op and the shapes", refusals),
  }};
}

const yours::Stage stage{4, autograd};

}  // namespace
