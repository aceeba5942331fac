// Checks stage 5 (docs/book/build_your_own/05_matmul.md): mini's matrix
// product against ember's (float64): the loops and the blocked version on
// random matrices and batches of them (the batch broadcast, every layout
// stage 2 makes, sizes 0 to 40, blocks that do not divide the sizes), the
// gradients of the product on random inputs with a random output gradient,
// a layer tanh(x W + b) through stages 4 and 5 together, and the refusals.
//
// Tolerances: an element of a product is a sum of k <= 40 products of
// numbers below 2.25 in magnitude, added in an order that may differ
// (OpenBLAS, tiles): each addition rounds by at most 2^-53 of a running sum
// below 40 * 5.1, so the results differ by less than 40 * 1.1e-16 * 205 <
// 1e-12; 1e-10 relative (absolute below 1). A gradient is one more product
// and a sum_to over a batch of at most 4 products: 1e-9.
//
// When a result differs, the checker computes what each typical mistake
// would have given (a view read as if it were contiguous, the last tile of
// a dim dropped, a transposed gradient or one multiplied on the wrong side,
// a batch broadcast and not summed back) and names the one that matches.
#include <algorithm>
#include <optional>
#include <tuple>

#include "exercises/yours/checks/inputs.h"
#include "exercises/yours/checks/yours.h"
#include "mini/matmul.h"

namespace {

using check::fail;
using check::num;
using check::show;
using yours::first_difference;
using yours::Input;
using yours::same;
using yours::values;
using yours::random_input;

// The last two dims swapped, in ember.
ember::Tensor tr(const ember::Tensor& x) { return x.transpose(x.dim() - 2, x.dim() - 1); }

// ---- random pairs ----

// A size for a matrix dim: mostly small, sometimes 0, sometimes large enough
// to span several tiles.
int64_t size(ember::Generator& gen) {
  const int64_t sizes[] = {0, 1, 1, 2, 3, 3, 4, 4, 5, 5, 2, 3, 7, 9, 13, 17, 24, 33, 40, 3};
  return sizes[gen.next_below(20)];
}

struct Pair {
  Input a, b;
  std::string where;
};

// a (batch_a..., n, k) and b (batch_b..., k, m), the batches broadcasting to
// one shape; square (n = k = m) when asked.
Pair random_pair(ember::Generator& gen, const std::string& label, bool square = false) {
  const int64_t n = size(gen);
  const int64_t k = square ? n : size(gen), m = square ? n : size(gen);
  ember::Shape batch(gen.next_below(3) == 0 ? gen.next_below(3) : 0);
  for (int64_t& v : batch) v = 1 + static_cast<int64_t>(gen.next_below(3));
  ember::Shape as = yours::operand_shape(batch, gen), bs = yours::operand_shape(batch, gen);
  as.insert(as.end(), {n, k});
  bs.insert(bs.end(), {k, m});
  Pair p{random_input(as, gen), random_input(bs, gen), ""};
  p.where = "\n  " + label + "\n  a: " + p.a.describe() + "\n  b: " + p.b.describe();
  return p;
}

const std::string kStrided =
    "an input was read from its storage as if it were contiguous: a transposed, sliced or expanded view's element "
    "[i][p] is at offset + i·stride0 + p·stride1, whatever the strides are";

// x's numbers as they lie from its offset, as a tensor of its shape (none
// when that reads past the storage).
std::optional<ember::Tensor> as_lying(const mini::Tensor& x) {
  if (!x.storage() || x.offset() + x.numel() > static_cast<int64_t>(x.storage()->size())) return std::nullopt;
  return ember::tensor(std::vector<double>(x.storage()->begin() + x.offset(),
                                           x.storage()->begin() + x.offset() + x.numel()),
                       x.shape());
}

// The hint for a product that differs from ember's.
std::string product_mistake(const mini::Tensor& got, const Pair& p, int64_t block) {
  const ember::Tensor& a = p.a.e;
  const ember::Tensor& b = p.b.e;
  const auto la = as_lying(p.a.m), lb = as_lying(p.b.m);
  using Read = std::pair<std::optional<ember::Tensor>, std::optional<ember::Tensor>>;
  for (const auto& [x, y] : std::vector<Read>{{la, b}, {a, lb}, {la, lb}})
    if (x && y && same(got, x->matmul(*y), 1e-10)) return kStrided;
  if (block > 0) {
    // the product with the last, partial tile of one dim dropped
    const int64_t n = a.size(a.dim() - 2), k = a.size(a.dim() - 1), m = b.size(b.dim() - 1);
    for (int which = 0; which < 3; ++which) {
      const int64_t whole[] = {n / block * block, k / block * block, m / block * block};
      const ember::Tensor ta = a.slice(a.dim() - 2, 0, which == 0 ? whole[0] : n).slice(a.dim() - 1, 0, which == 1 ? whole[1] : k);
      const ember::Tensor tb = b.slice(b.dim() - 2, 0, which == 1 ? whole[1] : k).slice(b.dim() - 1, 0, which == 2 ? whole[2] : m);
      ember::Tensor c = ember::zeros_like(a.matmul(b));
      const ember::Tensor part = ta.matmul(tb);
      c.slice(c.dim() - 2, 0, part.size(part.dim() - 2)).slice(c.dim() - 1, 0, part.size(part.dim() - 1)).copy_(part);
      if (same(got, c, 1e-10))
        return "the last tile of a dim was dropped: when a size is not a multiple of block, the last tile is "
               "smaller; end each tile at min(start + block, size), not at the last whole tile";
    }
  }
  return "element [i, j] of a product is the sum over p of a[i][p] · b[p][j], for each matrix of the batch";
}

int products(bool blocked) {
  ember::Generator gen(blocked ? 51 : 50);
  int strided = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t block = blocked ? 1 + static_cast<int64_t>(gen.next_below(trial % 3 == 0 ? 4 : 40)) : 0;
    const std::string call = blocked ? "matmul_blocked(a, b, " + std::to_string(block) + ")" : "matmul(a, b)";
    const Pair p = random_pair(gen, "trial " + std::to_string(trial) + " (seed " + (blocked ? "51" : "50") + "): " + call);
    strided += !p.a.m.is_contiguous() || !p.b.m.is_contiguous();
    mini::Tensor got = p.a.m;
    try {
      got = blocked ? mini::matmul_blocked(p.a.m, p.b.m, block) : mini::matmul(p.a.m, p.b.m);
    } catch (const mini::Error& e) {
      fail(std::string("your code refused: ") + e.what() + p.where,
           p.a.m.dim() > 2 || p.b.m.dim() > 2
               ? "the batch dims (all but the last two) broadcast as stage 3's shapes do"
               : "ember multiplies these: what made your code refuse them?");
    }
    const ember::Tensor want = p.a.e.matmul(p.b.e);
    if (got.shape() != want.shape())
      fail(call + " has shape " + show(got.shape()) + ", but should have " + show(want.shape()) + p.where,
           "a (..., n, k) times b (..., k, m) is (batch..., n, m), the batch being a's and b's batch dims broadcast");
    const std::string diff = first_difference(got, want, 1e-10);
    if (!diff.empty()) fail(call + ": " + diff + p.where, product_mistake(got, p, block));
    check::expect(got.is_contiguous(), call + " is not contiguous" + p.where, "a product is a new tensor");
  }
  return strided;
}

// ---- gradients ----

const std::string kTransposed =
    "a transposed gradient, or one multiplied on the wrong side: grad has c's shape (n, m); a (n, k) gets grad bᵀ, "
    "(n, m) by (m, k), and b (k, m) gets aᵀ grad, (k, n) by (n, m)";

const std::string kBroadcast =
    "broadcasting not undone: the batch of one input was broadcast, so its matrices were used for several of the "
    "batch's products, and its gradient is the sum of theirs, back to its own shape (sum_to)";

std::string gradient_mistake(const mini::Tensor& got, bool for_a, const ember::Tensor& a, const ember::Tensor& b,
                             const ember::Tensor& g) {
  const ember::Shape shape = for_a ? a.shape() : b.shape();
  std::vector<std::function<ember::Tensor()>> wrong;
  if (for_a) wrong = {[&] { return g.matmul(b); }, [&] { return tr(b).matmul(g); }, [&] { return b.matmul(tr(g)); },
                      [&] { return tr(g).matmul(b); }};
  else wrong = {[&] { return a.matmul(g); }, [&] { return g.matmul(tr(a)); }, [&] { return tr(g).matmul(a); },
                [&] { return tr(a.matmul(g)); }};
  for (const auto& f : wrong) {
    try {
      const ember::Tensor t = f();
      if (same(got, t.sum_to(shape), 1e-9)) return kTransposed;
    } catch (const ember::Error&) {  // it does not fit these shapes: not this mistake
    }
  }
  return "a[i][p] moved row i of c by b's row p: its gradient sums grad[i][j] · b[p][j] over j; work out the "
         "product of matrices that is, and b's likewise";
}

int gradients() {
  ember::Generator gen(52);
  int broadcast = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Pair p = random_pair(gen, "trial " + std::to_string(trial) + " (seed 52): c = matmul(a, b), c.backward(grad)",
                               trial % 4 == 0);
    const mini::Var a(p.a.m, true), b(p.b.m, true);
    const ember::Tensor ae = p.a.e.detach().requires_grad_(), be = p.b.e.detach().requires_grad_();
    const ember::Tensor ce = ae.matmul(be);
    const std::vector<double> gv = yours::draw(ce.numel(), gen, false, 0);
    const ember::Tensor g = ember::tensor(gv, ce.shape());
    const bool batch_broadcast = p.a.m.shape().size() != ce.shape().size() ||
                                 p.b.m.shape().size() != ce.shape().size() ||
                                 !std::equal(ce.shape().begin(), ce.shape().end() - 2, p.a.m.shape().begin()) ||
                                 !std::equal(ce.shape().begin(), ce.shape().end() - 2, p.b.m.shape().begin());
    broadcast += batch_broadcast;
    try {
      mini::matmul(a, b).backward(mini::Tensor(gv, ce.shape()));
    } catch (const mini::Error& e) {
      const std::string what = e.what();
      fail("your code refused: " + what + p.where,
           batch_broadcast && what.rfind("backward", 0) == 0 ? kBroadcast
           : what.rfind("matmul", 0) == 0                    ? kTransposed
                                                             : "ember accepts this: what made your code refuse it?");
    }
    ce.backward(g);
    for (const auto& [v, e, name] : {std::tuple{&a, &ae, "a"}, std::tuple{&b, &be, "b"}}) {
      const std::optional<mini::Tensor> got = v->grad();
      const ember::Tensor want = e->grad();
      if (!got) fail(std::string("no gradient reached ") + name + p.where, "does matmul record its node, with both inputs?");
      if (got->shape() != want.shape())
        fail(std::string(name) + "'s gradient has shape " + show(got->shape()) + ", but " + name + " has shape " +
                 show(want.shape()) + p.where,
             batch_broadcast ? kBroadcast : kTransposed);
      const std::string diff = first_difference(*got, want, 1e-9);
      if (!diff.empty())
        fail(std::string(name) + "'s gradient: " + diff + p.where,
             gradient_mistake(*got, std::string(name) == "a", p.a.e, p.b.e, g));
    }
  }
  return broadcast;
}

// y = sum(tanh(x W + bias) * w): a layer, through stages 4 and 5 together.
void layer() {
  ember::Generator gen(53);
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t batch = 1 + static_cast<int64_t>(gen.next_below(3)), t = 1 + static_cast<int64_t>(gen.next_below(5));
    const int64_t d = 1 + static_cast<int64_t>(gen.next_below(8)), h = 1 + static_cast<int64_t>(gen.next_below(8));
    const Input x = random_input({batch, t, d}, gen), W = random_input({d, h}, gen), bias = random_input({h}, gen);
    const std::vector<double> wv = yours::draw(batch * t * h, gen, false, 0);
    const mini::Var xm(x.m, true), Wm(W.m, true), bm(bias.m, true);
    const ember::Tensor xe = x.e.detach().requires_grad_(), We = W.e.detach().requires_grad_(),
                        be = bias.e.detach().requires_grad_();
    const std::string where = "\n  trial " + std::to_string(trial) +
                              " (seed 53): y = sum(mul(tanh(add(matmul(x, W), bias)), w)), y.backward()\n  x: " +
                              x.describe() + "\n  W: " + W.describe() + "\n  bias: " + bias.describe();
    mini::sum(mini::mul(mini::tanh(mini::add(mini::matmul(xm, Wm), bm)), mini::Var(mini::Tensor(wv, {batch, t, h}))))
        .backward();
    xe.matmul(We).add(be).tanh().mul(ember::tensor(wv, {batch, t, h})).sum().backward();
    for (const auto& [v, e, name] : {std::tuple{&xm, &xe, "x"}, std::tuple{&Wm, &We, "W"}, std::tuple{&bm, &be, "bias"}}) {
      const std::optional<mini::Tensor> got = v->grad();
      check::expect(got && same(*got, e->grad(), 1e-9),
                    std::string(name) + "'s gradient differs from ember's" +
                        (got ? ": " + (got->shape() == e->grad().shape() ? first_difference(*got, e->grad(), 1e-9)
                                                                         : "shape " + show(got->shape()))
                             : std::string(": none")) +
                        where,
                    "each piece passed alone: W is shared by every row of the batch (broadcast), so its gradient "
                    "sums theirs");
    }
  }
}

void refusals() {
  const mini::Tensor a({0, 1, 2, 3, 4, 5}, {2, 3});
  yours::expect_refusal([&] { mini::matmul(a, mini::Tensor({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2})); },
                        {"matmul", "(2, 3)", "(4, 2)"}, "matmul(a, b), a of shape (2, 3), b of shape (4, 2)",
                        "a's last size 3 and b's second-to-last 4 differ: there is no sum over p");
  yours::expect_refusal([&] { mini::matmul(a, mini::Tensor({0, 1, 2}, {3})); }, {"matmul", "(3)"},
                        "matmul(a, b), b of shape (3)",
                        "mini's matmul takes matrices (2 dims or more): a vector is a (3, 1) or a (1, 3), and which "
                        "one is the caller's choice");
  yours::expect_refusal([&] { mini::matmul(mini::Tensor(std::vector<double>(12), {2, 2, 3}),
                                           mini::Tensor(std::vector<double>(18), {3, 3, 2})); },
                        {"matmul", "(2, 2, 3)", "(3, 3, 2)"}, "matmul(a, b), a of shape (2, 2, 3), b of shape (3, 3, 2)",
                        "batches of 2 and of 3 do not broadcast");
  yours::expect_refusal([&] { mini::matmul_blocked(a, mini::Tensor({0, 1, 2}, {3, 1}), 0); }, {"matmul_blocked", "0"},
                        "matmul_blocked(a, b, 0)", "a tile of 0 rows never ends the loop: refuse a block below 1");
  yours::expect_refusal([&] { mini::matmul(mini::Var(a, true), mini::Var(a, true)); }, {"matmul", "(2, 3)"},
                        "matmul of two Vars of shape (2, 3)", "the Var op refuses what the tensor op refuses");
}

check::Exercise matmul() {
  using yours::step;
  return {"5", "The matrix product", "docs/book/build_your_own/05_matmul.md", {
    step("matmul on 300 random pairs: matrices and broadcast batches, every layout, sizes 0 to 40", [] {
      const int strided = products(false);
      check::note(std::to_string(strided) + " pairs with an input that is not contiguous");
    }),
    step("matmul_blocked on 300 random pairs, blocks of 1 to 40 that need not divide the sizes", [] { products(true); }),
    step("the gradients of matmul on 200 random pairs, with a random grad", [] {
      const int broadcast = gradients();
      check::note(std::to_string(broadcast) + " of them with a batch broadcast");
    }),
    step("a layer, tanh(x W + bias), on 50 random batches: stages 4 and 5 together", layer),
    step("what must be refused is refused, with a message naming the op and the shapes", refusals),
  }};
}

const yours::Stage stage{5, matmul};

}  // namespace
