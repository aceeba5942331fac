// Checks stage 7 (docs/book/build_your_own/07_modules.md): mini's reshape,
// transpose and embedding against ember's (float64), values and gradients
// on random inputs (ids read twice, rows never read, a padding row); the
// modules against ember's functional forms with the same weights, and their
// starting numbers by their statistics; the sin/cos table against ember's;
// weight tying (one table for the lookup and the head: every row learns);
// named_parameters on nested modules; the refusals.
//
// Tolerances: the ops move numbers or add at most 36 rows (1e-12); a Linear
// is stage 5's product (1e-10, see 05_matmul.cpp); the tied model adds a
// cross_entropy (1e-9). Statistics of starting numbers: 65 536 uniform
// numbers in ±b have a mean within 4 standard errors (4 · b/√(3 · 65536) =
// 0.009 b) of 0 and a variance within 2 % of b²/3 (the variance's own
// standard error is 0.35 % of it); 64 000 normal ones with deviation 0.02, a
// deviation within 2 %.
#include <cmath>
#include <optional>
#include <tuple>

#include "exercises/yours/checks/inputs.h"
#include "exercises/yours/checks/yours.h"
#include "mini/derived.h"
#include "mini/nn.h"

namespace {

using check::fail;
using check::show;
using yours::first_difference;
using yours::Input;
using yours::random_input;
using yours::same;
using yours::values;

struct Leaf {
  mini::Var m;
  ember::Tensor e;
};

Leaf leaf(const Input& in) { return {mini::Var(in.m, true), in.e.detach().requires_grad_()}; }

ember::Tensor ember_of(const mini::Tensor& t) { return ember::tensor(t.values(), t.shape()); }

void compare_grad(const Leaf& x, const std::string& name, double rel, const std::string& where,
                  const std::function<std::string(const mini::Tensor&)>& mistake) {
  const std::optional<mini::Tensor> got = x.m.grad();
  const ember::Tensor want = x.e.grad();
  if (!got) fail("no gradient reached " + name + where, "does the op record its node with " + name + " in next?");
  if (got->shape() != want.shape())
    fail(name + "'s gradient has shape " + show(got->shape()) + ", but " + name + " has shape " + show(want.shape()) +
             where,
         "a gradient has its input's shape");
  const std::string diff = first_difference(*got, want, rel);
  if (!diff.empty()) fail(name + "'s gradient: " + diff + where, mistake(*got));
}

void compare_values(const mini::Var& y, const ember::Tensor& want, double rel, const std::string& what,
                    const std::string& where, const std::string& hint) {
  if (y.shape() != want.shape())
    fail(what + " has shape " + show(y.shape()) + ", but should have " + show(want.shape()) + where, hint);
  const std::string diff = first_difference(y.data(), want, rel);
  if (!diff.empty()) fail(what + ": " + diff + where, hint);
}

// ---- reshape and transpose ----

void views() {
  ember::Generator gen(70);
  for (int trial = 0; trial < 200; ++trial) {
    ember::Shape shape = yours::random_shape(gen, 3);
    if (shape.size() < 2) shape.insert(shape.begin(), 2 - shape.size(), 2);
    const Input in = random_input(shape, gen);
    const Leaf x = leaf(in);
    const bool reshaping = trial % 2 == 0;
    ember::Shape to;
    int64_t d0 = 0, d1 = 0;
    if (reshaping) {  // the elements as one row, or split into two dims
      const int64_t n = in.e.numel();
      to = n % 2 == 0 && n > 0 ? ember::Shape{2, n / 2} : ember::Shape{n};
    } else {
      d0 = static_cast<int64_t>(gen.next_below(shape.size()));
      d1 = static_cast<int64_t>(gen.next_below(shape.size()));
    }
    const std::string what = reshaping ? "reshape(x, " + show(to) + ")"
                                       : "transpose(x, " + std::to_string(d0) + ", " + std::to_string(d1) + ")";
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 70): y = " + what +
                              ", y.backward(grad)\n  x: " + in.describe();
    const mini::Var y = reshaping ? mini::reshape(x.m, to) : mini::transpose(x.m, d0, d1);
    const ember::Tensor ye = reshaping ? x.e.reshape(to) : x.e.transpose(d0, d1);
    compare_values(y, ye.detach(), 0, what, where,
                   reshaping ? "reshape keeps the elements in row-major order of x's index: a view of a contiguous "
                               "x, of a copy otherwise"
                             : "transpose swaps two dims: stage 2's view");
    const std::vector<double> gv = yours::draw(ye.numel(), gen, false, 0);
    const std::string back = reshaping ? "grad comes back in y's shape: reshape it to x's (the same elements, in "
                                         "row-major order)"
                                       : "grad comes back in y's layout: swap the same two dims back";
    try {
      y.backward(mini::Tensor(gv, ye.shape()));
    } catch (const mini::Error& e) {
      fail(std::string("your code refused: ") + e.what() + where, back);
    }
    ye.backward(ember::tensor(gv, ye.shape()));
    compare_grad(x, "x", 0, where, [&](const mini::Tensor&) { return back; });
  }
}

// ---- embedding ----

const std::string kTwice =
    "a row read twice gets both parts: add each row of grad into its table row (+=); with = the last read wins";

void embeddings() {
  ember::Generator gen(71);
  int repeated = 0, unread = 0, padded = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t V = 1 + static_cast<int64_t>(gen.next_below(8)), D = 1 + static_cast<int64_t>(gen.next_below(5));
    const Input table = random_input({V, D}, gen);
    ember::Shape ids_shape(1 + gen.next_below(2));
    for (int64_t& s : ids_shape) s = static_cast<int64_t>(gen.next_below(5));
    std::vector<int64_t> ids(static_cast<size_t>(yours::count(ids_shape)));
    for (int64_t& id : ids) id = static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(V)));
    const int64_t pad = trial % 3 == 0 ? static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(V))) : -1;
    std::vector<int> reads(static_cast<size_t>(V));
    for (int64_t id : ids) ++reads[static_cast<size_t>(id)];
    for (int r : reads) {
      repeated += r > 1;
      unread += r == 0;
    }
    padded += pad >= 0 && reads[static_cast<size_t>(std::max<int64_t>(pad, 0))] > 0;
    const Leaf t = leaf(table);
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 71): y = embedding(table, ids " +
                              show(std::vector<double>(ids.begin(), ids.end())) + " of shape " + show(ids_shape) +
                              (pad >= 0 ? ", padding_idx " + std::to_string(pad) : std::string()) +
                              "), y.backward(grad)\n  table: " + table.describe();
    const mini::Var y = mini::embedding(t.m, ids, ids_shape, pad);
    const ember::Tensor ids_e = ember::tensor(ids, ids_shape);
    const ember::Tensor ye = pad >= 0 ? ember::embedding(t.e, ids_e, pad) : ember::embedding(t.e, ids_e);
    compare_values(y, ye.detach(), 0, "embedding(table, ids)", where,
                   "element [..., j] of the result is element j of the table's row ids[...]; the shape is ids' shape "
                   "then D");
    const std::vector<double> gv = yours::draw(ye.numel(), gen, false, 0);
    y.backward(mini::Tensor(gv, ye.shape()));
    ye.backward(ember::tensor(gv, ye.shape()));
    compare_grad(t, "table", 1e-12, where, [&](const mini::Tensor& got) {
      const std::vector<double> g = got.values(), w = values(t.e.grad());
      for (int64_t r = 0; r < V; ++r) {
        bool row_ok = true;
        for (int64_t j = 0; j < D; ++j)
          row_ok = row_ok && yours::close(g[static_cast<size_t>(r * D + j)], w[static_cast<size_t>(r * D + j)], 1e-12);
        if (row_ok) continue;
        if (r == pad) return std::string("the padding row got gradient: it never learns (its reads pass nothing back)");
        if (reads[static_cast<size_t>(r)] == 0)
          return std::string("row " + std::to_string(r) + " was never read, yet got gradient: it gets 0");
        if (reads[static_cast<size_t>(r)] > 1) return kTwice;
        break;
      }
      return std::string("row k of grad goes back to the table row ids[k] was read from");
    });
  }
  check::note(std::to_string(repeated) + " rows read more than once, " + std::to_string(unread) + " never read, " +
              std::to_string(padded) + " padding rows read");
}

// ---- the modules ----

void linears() {
  ember::Generator gen(72);
  mini::Generator init(72);
  for (int trial = 0; trial < 100; ++trial) {
    const int64_t in = 1 + static_cast<int64_t>(gen.next_below(6)), out = 1 + static_cast<int64_t>(gen.next_below(6));
    const bool bias = trial % 4 != 3;
    const mini::Linear lin(in, out, init, bias);
    ember::Shape xs = trial % 2 ? ember::Shape{1 + static_cast<int64_t>(gen.next_below(4)), in}
                                : ember::Shape{2, 1 + static_cast<int64_t>(gen.next_below(3)), in};
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 72): Linear(" + std::to_string(in) +
                              ", " + std::to_string(out) + (bias ? "" : ", no bias") + "), y = forward(x), x of shape " +
                              show(xs) + ", sum(y).backward()";
    check::expect(lin.weight.shape() == mini::Shape{out, in},
                  "the weight has shape " + show(lin.weight.shape()) + ", not (" + std::to_string(out) + ", " +
                      std::to_string(in) + ")" + where,
                  "W is (out, in), as PyTorch's and ember's: a row of weights for each output");
    const double bound = 1 / std::sqrt(static_cast<double>(in));
    for (double w : lin.weight.data().values())
      check::expect(std::abs(w) <= bound, "a starting weight is " + check::num(w) + ", outside ±1/√in = ±" +
                                              check::num(bound) + where,
                    "W and b start uniform in ±1/√in: their products with inputs of size 1 then stay of size 1");
    const Input x = random_input(xs, gen);
    const Leaf xl = leaf(x);
    Leaf w{lin.weight, ember_of(lin.weight.data()).requires_grad_()};
    Leaf b{lin.bias, bias ? ember_of(lin.bias.data()).requires_grad_() : ember::Tensor()};
    const mini::Var y = lin.forward(xl.m);
    const ember::Tensor ye = ember::nn::linear(xl.e, w.e, bias ? b.e : ember::Tensor());
    compare_values(y, ye.detach(), 1e-10, "Linear's forward(x)", where, "y = x Wᵀ + b: matmul(x, transpose(W, 0, 1))");
    mini::sum(y).backward();
    ye.sum().backward();
    compare_grad(xl, "x", 1e-10, where, [](const mini::Tensor&) { return std::string("through stage 5's matmul"); });
    compare_grad(w, "W", 1e-10, where, [](const mini::Tensor&) {
      return std::string("W's gradient comes through transpose: is grad swapped back?");
    });
    if (bias) compare_grad(b, "b", 1e-10, where, [](const mini::Tensor&) {
      return std::string("b is added to every row: its gradient sums theirs");
    });
    const auto names = lin.named_parameters();
    check::expect(names.size() == (bias ? 2u : 1u) && names[0].first == "weight" && (!bias || names[1].first == "bias"),
                  "Linear's named_parameters() should be weight" + std::string(bias ? ", bias" : "") + where,
                  "register each parameter once, weight first, under its member's name");
  }
  // the starting numbers' statistics
  mini::Generator big_init(7);
  const mini::Linear big(256, 256, big_init);
  const std::vector<double> w = big.weight.data().values();
  double mean = 0, var = 0;
  for (double v : w) mean += v;
  mean /= static_cast<double>(w.size());
  for (double v : w) var += (v - mean) * (v - mean);
  var /= static_cast<double>(w.size());
  const double b2 = 1.0 / 256;
  check::expect(std::abs(mean) < 0.009 / 16 && std::abs(var / (b2 / 3) - 1) < 0.02,
                "Linear(256, 256)'s starting weights have mean " + check::num(mean) + " and variance " +
                    check::num(var) + "; uniform in ±1/16 they would have 0 and " + check::num(b2 / 3),
                "uniform in ±1/√in: gen.uniform(-bound, bound) for each");
}

void tables() {
  mini::Generator init(73);
  const mini::Embedding tok(1000, 64, init, 3);
  const std::vector<double> w = tok.weight.data().values();
  double mean = 0, sq = 0;
  for (double v : w) mean += v;
  mean /= static_cast<double>(w.size());
  for (double v : w) sq += (v - mean) * (v - mean);
  const double sd = std::sqrt(sq / static_cast<double>(w.size()));
  check::expect(std::abs(mean) < 4 * 0.02 / std::sqrt(64000.0) && std::abs(sd / 0.02 - 1) < 0.02,
                "Embedding(1000, 64)'s starting table has mean " + check::num(mean) + " and deviation " +
                    check::num(sd) + ", not about 0 and 0.02",
                "normal with deviation 0.02: 0.02 · gen.normal() for each");
  for (int64_t j = 0; j < 64; ++j)
    check::expect(tok.weight.data().at({3, j}) == 0, "Embedding(1000, 64, gen, 3)'s row 3 does not start at 0",
                  "the padding row stands for \"no token\": it starts at zero, and stays there");
  // learned positions: the rows beyond T learn nothing from this step
  const mini::LearnedPositions pos(6, 3, init);
  mini::sum(mini::mul(pos.forward(4), mini::Var(mini::Tensor({1, 2, 3}, {3})))).backward();
  const std::optional<mini::Tensor> g = pos.weight.grad();
  check::expect(g && g->values() == std::vector<double>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 0, 0, 0, 0, 0, 0},
                "LearnedPositions(6, 3): sum(forward(4) · (1, 2, 3)).backward() should give the table the gradient "
                "((1, 2, 3) for rows 0 to 3, 0 for rows 4 and 5), not " + (g ? show(g->values()) : std::string("none")),
                "forward(T) reads rows 0 to T − 1; the others were not used, and learn nothing");
  // the sin/cos table, odd and even D
  for (const auto& [L, D] : std::vector<std::pair<int64_t, int64_t>>{{16, 8}, {9, 5}, {3, 1}}) {
    const mini::SinusoidalPositions sines(L, D);
    const ember::nn::SinusoidalPositionalEmbedding want(L, D, ember::kFloat64);
    const std::string what = "SinusoidalPositions(" + std::to_string(L) + ", " + std::to_string(D) + ")'s table";
    const std::string diff = sines.table.shape() == want.table.shape() ? first_difference(sines.table, want.table, 1e-12)
                                                                       : "shape " + show(sines.table.shape());
    check::expect(diff.empty(), what + ": " + diff,
                  "angle(p, i) = p / 10000^(2·⌊i/2⌋/D): the columns 2k and 2k + 1 share one frequency, sin then cos");
    const mini::Var rows = sines.forward(L - 1);
    check::expect(!rows.requires_grad() && rows.shape() == mini::Shape{L - 1, D},
                  what + ": forward(" + std::to_string(L - 1) + ") should be its first rows, of shape (" +
                      std::to_string(L - 1) + ", " + std::to_string(D) + "), requiring no grad",
                  "a fixed table is not a parameter: nothing learns it");
  }
  check::expect(mini::SinusoidalPositions(4, 2).named_parameters().empty(),
                "SinusoidalPositions has parameters", "its table is fixed: register nothing");
}

// ---- tying ----

struct TinyLM : mini::Module {
  mini::Embedding tok;
  mini::LearnedPositions pos;
  mini::Linear head;
  TinyLM(int64_t V, int64_t T, int64_t D, mini::Generator& gen, bool tied)
      : tok(V, D, gen), pos(T, D, gen), head(D, V, gen, false) {
    register_module("tok", tok);
    register_module("pos", pos);
    register_module("head", head);
    if (tied) head.weight = tok.weight;  // one Var: one node, one grad
  }
};

void tying() {
  ember::Generator gen(74);
  mini::Generator init(74);
  int learned_from_head = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t V = 3 + static_cast<int64_t>(gen.next_below(6)), T = 1 + static_cast<int64_t>(gen.next_below(4)),
                  D = 1 + static_cast<int64_t>(gen.next_below(4)), B = 1 + static_cast<int64_t>(gen.next_below(2));
    TinyLM lm(V, T, D, init, true);
    std::vector<int64_t> ids(static_cast<size_t>(B * T)), targets(ids.size());
    for (int64_t& id : ids) id = static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(V - 1)));  // row V-1 never read
    for (int64_t& t : targets) t = static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(V)));
    const auto names = lm.named_parameters();
    std::string listed;
    for (const auto& [name, v] : names) listed += (listed.empty() ? "" : ", ") + name;
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 74): V " + std::to_string(V) + ", T " +
                              std::to_string(T) + ", D " + std::to_string(D) + ", B " + std::to_string(B) +
                              "; head.weight = tok.weight; loss = cross_entropy(reshape(head(tok(ids) + pos(T)), (B·T, "
                              "V)), targets)";
    check::expect(names.size() == 2 && names[0].first == "tok.weight" && names[1].first == "pos.weight",
                  "the tied model's named_parameters() are " + listed + ", not tok.weight, pos.weight" + where,
                  "head.weight and tok.weight are one Var (one node): an optimizer that saw it twice would update it "
                  "twice; list a parameter once, under the first name it was registered by");
    const mini::Var h = mini::add(lm.tok.forward(ids, {B, T}), lm.pos.forward(T));
    const mini::Var logits = mini::reshape(lm.head.forward(h), {B * T, V});
    mini::cross_entropy(logits, targets).backward();
    const ember::Tensor E = ember_of(lm.tok.weight.data()).requires_grad_();
    const ember::Tensor P = ember_of(lm.pos.weight.data()).requires_grad_();
    const ember::Tensor he = ember::embedding(E, ember::tensor(ids, {B, T})).add(P);
    ember::cross_entropy(he.matmul(E.transpose(0, 1)).reshape({B * T, V}), ember::tensor(targets, {B * T})).backward();
    const Leaf tl{lm.tok.weight, E};
    compare_grad(tl, "the tied table", 1e-9, where, [&](const mini::Tensor& got) {
      ember::Tensor E2 = E.detach().clone().requires_grad_();
      ember::cross_entropy(ember::embedding(E2, ember::tensor(ids, {B, T})).add(P.detach()).matmul(E.detach().transpose(0, 1))
                               .reshape({B * T, V}),
                           ember::tensor(targets, {B * T}))
          .backward();
      if (same(got, E2.grad(), 1e-9))
        return std::string("only the lookup's part: the head's is missing, so the head's weight is a separate "
                           "Var; tying assigns the Var itself (head.weight = tok.weight), not a copy of its numbers");
      return std::string("the table's gradient is the lookup's part plus the head's");
    });
    const std::vector<double> g = lm.tok.weight.grad()->values();
    bool last_row_learns = false;
    for (int64_t j = 0; j < D; ++j) last_row_learns = last_row_learns || g[static_cast<size_t>((V - 1) * D + j)] != 0;
    learned_from_head += last_row_learns;
  }
  check::note("the row no id read got gradient from the head in " + std::to_string(learned_from_head) + " of 40");
}

// ---- named_parameters ----

struct Inner : mini::Module {
  mini::Linear b;
  mini::Embedding e;
  explicit Inner(mini::Generator& gen) : b(2, 3, gen), e(4, 2, gen) {
    register_module("b", b);
    register_module("e", e);
  }
};

struct Net : mini::Module {
  mini::Linear a;
  Inner inner;
  mini::Var scale;
  explicit Net(mini::Generator& gen) : a(3, 2, gen), inner(gen), scale(mini::Tensor({1}, {1}), true) {
    register_parameter("scale", scale);
    register_module("a", a);
    register_module("inner", inner);
  }
};

void named() {
  mini::Generator init(75);
  const Net net(init);
  std::string got;
  for (const auto& [name, v] : net.named_parameters()) got += (got.empty() ? "" : ", ") + name;
  const std::string want = "scale, a.weight, a.bias, inner.b.weight, inner.b.bias, inner.e.weight";
  check::expect(got == want, "a Net's named_parameters() are " + got + ", not " + want,
                "depth first: a module's own parameters, then each child's in the order registered, the child's "
                "name and a dot in front");
  check::expect(net.parameters().size() == 6, "a Net's parameters() has " + std::to_string(net.parameters().size()) +
                                                  " Vars, not 6",
                "the parameters of named_parameters(), in its order");
  mini::sum(net.a.forward(mini::Var(mini::Tensor({1, 2, 3}, {1, 3})))).backward();
  net.zero_grad();
  for (const mini::Var& v : net.parameters())
    check::expect(!v.grad(), "after zero_grad(), a parameter still has a gradient",
                  "zero_grad() forgets the gradient of every parameter, the children's too");
}

void refusals() {
  const mini::Var table(mini::Tensor({1, 2, 3, 4, 5, 6}, {3, 2}), true);
  yours::expect_refusal([&] { mini::embedding(table, {0, 3}, {2}); }, {"embedding", "3", "(3, 2)"},
                        "embedding of id 3 in a table of shape (3, 2)",
                        "row 3 does not exist among 3: an unchecked id reads past the table");
  yours::expect_refusal([&] { mini::embedding(table, {-1}, {1}); }, {"embedding", "-1"}, "embedding of id -1",
                        "a negative id reads before the table");
  yours::expect_refusal([&] { mini::embedding(table, {0, 1, 2}, {2}); }, {"embedding", "(2)"},
                        "embedding of 3 ids with the shape (2)", "the ids' shape says how many there are");
  yours::expect_refusal([&] { mini::embedding(mini::Var(mini::Tensor({1, 2}, {2}), true), {0}, {1}); },
                        {"embedding", "(2)"}, "embedding in a table of shape (2)", "a table is (V, D)");
  yours::expect_refusal([&] { mini::reshape(table, {4}); }, {"reshape", "(3, 2)", "(4)"},
                        "reshape of (3, 2) to (4)", "6 elements do not make 4");
  yours::expect_refusal([&] { mini::transpose(table, 0, 2); }, {"transpose"}, "transpose(x, 0, 2) of a 2-d x",
                        "dim 2 does not exist (stage 2's transpose refuses it)");
  mini::Generator init(76);
  const mini::LearnedPositions pos(4, 2, init);
  yours::expect_refusal([&] { pos.forward(5); }, {"5", "4"}, "LearnedPositions(4, 2).forward(5)",
                        "5 positions of a table of 4: it has no row for position 4");
  const mini::SinusoidalPositions sines(4, 2);
  yours::expect_refusal([&] { sines.forward(5); }, {"5", "4"}, "SinusoidalPositions(4, 2).forward(5)",
                        "5 positions of a table of 4");
}

check::Exercise modules() {
  using yours::step;
  return {"7", "Modules and parameters", "docs/book/build_your_own/07_modules.md", {
    step("reshape and transpose on Vars: 200 random inputs, values and gradients", views),
    step("embedding on 200 random tables and ids: rows read twice, rows never read, a padding row", embeddings),
    step("Linear on 100 random inputs, against ember's linear with the same weights; its starting numbers", linears),
    step("Embedding's and LearnedPositions' starting tables and gradients; the sin/cos table against ember's", tables),
    step("weight tying: one table for the lookup and the head, on 40 random models", tying),
    step("named_parameters on nested modules: names, order, zero_grad", named),
    step("what must be refused is refused, with a message naming the op and the values", refusals),
  }};
}

const yours::Stage stage{7, modules};

}  // namespace
