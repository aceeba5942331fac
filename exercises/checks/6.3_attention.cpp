// Checks exercise 6.3: the lesson's two-score example, equality with
// nn::scaled_dot_product_attention without a mask, causal and with a bool
// mask, no gradient from the future, and a query that may see no key,
// against ember's rule for it (weights 0, output 0, gradient 0). A wrong
// output is compared with the usual mistakes (no 1 / sqrt(d), 1 / d, the
// softmax over the queries, the diagonal or the past hidden, the mask the
// wrong way round, a score of 0 for a hidden key, weights zeroed after the
// softmax, a softmax that makes NaN of a row of -inf, a finite fill) to name
// the one it is.
#include <cmath>

#include "exercises/checks/check.h"
#include "nn/attention.h"

namespace ex6_3 {
ember::Tensor attention(const ember::Tensor& q, const ember::Tensor& k, const ember::Tensor& v,
                        const ember::Tensor& mask, bool causal);
}

namespace {
using namespace ember;

Tensor ember_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal) {
  return nn::scaled_dot_product_attention(q, k, v, mask, causal).output;
}

// 1 from the diagonal's `from`-th neighbour up (triu(ones, 1): the future), 0 below.
Tensor upper(int64_t Tq, int64_t Tk, int64_t from) { return triu(ones({Tq, Tk}, kFloat64), from); }

bool has_nan(const Tensor& t) {
  if (!t.defined()) return false;
  for (double x : t.to(kFloat64).to_vector<double>())
    if (std::isnan(x)) return true;
  return false;
}

// How a usual mistake computes attention: the scores times `scale`, the
// positions where `hidden` > 0 filled with `fill` before a softmax along
// `dim`, or zeroed after it (`after`).
struct Way {
  double scale;
  int64_t dim = -1;
  double fill = -INFINITY;
  bool after = false;
};

Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& hidden, const Way& way) {
  NoGradGuard no_grad;
  Tensor s = matmul(q, transpose(k, -1, -2)) * way.scale;
  const Tensor where = gt(hidden, 0.0);
  if (!way.after) s = masked_fill(s, where, way.fill);
  Tensor w = softmax(s, way.dim);
  if (way.after) w = masked_fill(w, where, 0.0);
  return matmul(w, v);
}

// The hint for a wrong output, from the way it is wrong. visible: the mask as
// 0/1 numbers (undefined: none).
std::string which_mistake(const Tensor& got, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& visible,
                          bool causal) {
  const int64_t d = q.size(-1), Tq = q.size(-2), Tk = k.size(-2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const Tensor none = zeros({Tq, Tk}, kFloat64);
  const Tensor masked = visible.defined() ? 1.0 - visible : none, future = causal ? upper(Tq, Tk, 1) : none;
  const Tensor hidden = masked + future;
  const auto is = [&](const Tensor& h, const Way& way) { return check::matches(got, attend(q, k, v, h, way), 1e-9); };
  if (has_nan(got))
    return "NaN in the output: a softmax computed as exp(s - max(s)) / sum makes NaN of a row whose scores are all "
           "-inf, and a hidden score of +inf or a 0 times -inf makes NaN too";
  if (d != 1 && is(hidden, {1.0}))
    return "the scores were not divided by sqrt(d): a dot product of d numbers grows like sqrt(d), and unscaled "
           "scores push the softmax towards one key";
  if (d != 1 && is(hidden, {1.0 / static_cast<double>(d)}))
    return "the scores were divided by d: the scale is 1 / sqrt(d), what keeps a dot product of d numbers of "
           "variance 1 at variance 1";
  if (is(hidden, {scale, -2}))
    return "the softmax ran along the queries (dim -2): one query's weights sum to 1 over the keys, the last dim";
  if (causal && is(masked + upper(Tq, Tk, 0), {scale}))
    return "the diagonal was hidden too: query i may see key i, itself, and every key before it";
  if (causal && is(masked + 1.0 - upper(Tq, Tk, 0), {scale}))
    return "the past was hidden instead of the future: query i may not see the keys j > i, above the diagonal";
  if (causal && is(masked, {scale})) return "causal hid nothing: query i must not see the keys j > i";
  if (visible.defined() && is(visible + future, {scale}))
    return "the mask was taken the wrong way round: true means the key is visible, and masked_fill fills where "
           "its own mask is true";
  if (visible.defined() && is(future, {scale})) return "the mask hid nothing: where it is false, the key is hidden";
  if (is(hidden, {scale, -1, 0.0}))
    return "the hidden keys got the score 0, which still weighs exp(0) in the softmax: their weight is exactly 0 "
           "only with the score -inf";
  if (is(hidden, {scale, -1, -INFINITY, true}))
    return "the weights were zeroed after the softmax, so the visible ones no longer sum to 1: hide the scores, "
           "before it";
  return "softmax(q k^T / sqrt(d)) v, with -inf as the score of every key a query may not see";
}

void same_as_ember(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& visible, bool causal,
                   const std::string& what) {
  const Tensor mask = visible.defined() ? gt(visible, 0.0) : Tensor();
  const Tensor got = ex6_3::attention(q, k, v, mask, causal), want = ember_attention(q, k, v, mask, causal);
  if (!check::matches(got, want, 1e-12))
    check::fail(what + " is " + check::show(got) + ", but should be " + check::show(want) +
                    (got.defined() && got.shape() != want.shape() ? " (shape " + check::show(got.shape()) +
                                                                        ", not " + check::show(want.shape()) + ")"
                                                                  : ""),
                which_mistake(got, q, k, v, visible, causal));
}

// The hint for a wrong output when query 1 may see no key, from what its row is.
std::string blind_row_mistake(const Tensor& got, const Tensor& q, const Tensor& k, const Tensor& v,
                              const Tensor& visible) {
  if (!got.defined() || got.shape() != Shape{1, 3, 2}) return which_mistake(got, q, k, v, visible, false);
  const Tensor row = select(got, 1, 1);
  if (has_nan(row))
    return "query 1's row is NaN: every one of its scores is -inf, and a softmax computed as exp(s - max(s)) / "
           "sum gives NaN there, since max(s) = -inf and -inf - (-inf) is NaN (without the max: 0 / 0). A query "
           "that may see no key attends to nothing: ember gives it the weights 0, so its output is 0";
  if (check::matches(row, mean(v, {1}), 1e-9))
    return "query 1's row is the plain average of the values: its scores were all the same finite number (a "
           "large negative fill instead of -inf?), and the softmax of equal scores is uniform; a query that may "
           "see no key should weigh no key at all";
  if (!check::matches(narrow(got, 1, 0, 1), narrow(ember_attention(q, k, v, gt(visible, 0.0), false), 1, 0, 1), 1e-12))
    return which_mistake(got, q, k, v, visible, false);
  return "a query that may see no key attends to nothing: its weights are all 0, so its output is 0";
}

// The gradient of sum(attention(q, k, v) * R) with respect to each of q, k, v.
template <class F>
std::vector<Tensor> gradients(F f, const Tensor& q0, const Tensor& k0, const Tensor& v0, const Tensor& R) {
  Tensor q = q0.clone().requires_grad_(), k = k0.clone().requires_grad_(), v = v0.clone().requires_grad_();
  sum(f(q, k, v) * R).backward();
  return {q.grad(), k.grad(), v.grad()};
}

// In the steps without a mask, the mask is an undefined Tensor().
const std::vector<std::pair<std::string, std::string>> kNoMask = {
    {"undefined", "this step passes no mask, an undefined Tensor(): is the mask used only when it is defined?"}};

}  // namespace

check::Exercise check::exercise() {
  return {"6.3", "Scaled dot-product attention, with a causal mask", "docs/book/06_sequence_models.md", {
    {"the lesson's example: scores (2, 1), values (10, 4) -> 8.386", [] {
       Tensor q = tensor({1.0}, {1, 1}, kFloat64), k = tensor({2.0, 1.0}, {2, 1}, kFloat64),
              v = tensor({10.0, 4.0}, {2, 1}, kFloat64);
       Tensor out = ex6_3::attention(q, k, v, Tensor(), false);
       expect_close(out, tensor({8.386}, {1, 1}, kFloat64), "the context", 5e-4,
                    which_mistake(out, q, k, v, Tensor(), false));
     }, kNoMask},
    {"equal to nn::scaled_dot_product_attention, (2, 3) batch of 5 queries, 6 keys", [] {
       Generator gen(21);
       Tensor q = randn({2, 3, 5, 4}, gen, kFloat64), k = randn({2, 3, 6, 4}, gen, kFloat64),
              v = randn({2, 3, 6, 7}, gen, kFloat64);
       same_as_ember(q, k, v, Tensor(), false, "attention");
     }, kNoMask},
    {"causal: equal to ember's, with the upper triangle's weights 0", [] {
       Generator gen(22);
       Tensor x = randn({2, 5, 4}, gen, kFloat64);
       same_as_ember(x, x, x, Tensor(), true, "causal attention");
     }, kNoMask},
    {"causal: output t gets no gradient from inputs after t", [] {
       Generator gen(23);
       const int64_t T = 5;
       Tensor x = randn({1, T, 3}, gen, kFloat64).requires_grad_();
       Tensor out = ex6_3::attention(x, x, x, Tensor(), true);
       for (int64_t t = 0; t + 1 < T; ++t) {
         x.set_grad(Tensor());
         sum(select(out, 1, t)).backward(Tensor(), /*retain_graph=*/true);
         const double future = sum(abs(narrow(x.grad(), 1, t + 1, T - t - 1))).item<double>();
         expect(future == 0.0, "output " + std::to_string(t) + " receives gradient " + num(future) +
                                   " from inputs after it: the mask leaks the future",
                "a hidden key must weigh exactly 0, and only the score -inf gives that");
       }
     }, kNoMask},
    {"a bool mask (key j visible to query i where it is true), alone and with causal", [] {
       Generator gen(24);
       Tensor q = randn({2, 5, 4}, gen, kFloat64), k = randn({2, 6, 4}, gen, kFloat64),
              v = randn({2, 6, 3}, gen, kFloat64);
       const Tensor visible = tensor({1, 0, 1, 1, 0, 1,  //
                                      1, 1, 0, 1, 1, 0,  //
                                      1, 0, 1, 0, 1, 1,  //
                                      1, 1, 1, 0, 0, 1,  //
                                      1, 0, 0, 1, 1, 1},
                                     {5, 6}, kFloat64);
       same_as_ember(q, k, v, visible, false, "attention with a (5, 6) mask");
       same_as_ember(q, k, v, visible, true, "causal attention with a (5, 6) mask");
     }},
    {"a query that may see no key (its row of the mask all false): output and gradient as ember's", [] {
       Generator gen(25);
       Tensor q = randn({1, 3, 4}, gen, kFloat64), k = randn({1, 4, 4}, gen, kFloat64),
              v = randn({1, 4, 2}, gen, kFloat64), R = randn({1, 3, 2}, gen, kFloat64);
       const Tensor visible = tensor({1, 1, 0, 1,  //
                                      0, 0, 0, 0,  // query 1 sees nothing
                                      1, 0, 1, 1},
                                     {3, 4}, kFloat64);
       const Tensor mask = gt(visible, 0.0);
       const Tensor got = ex6_3::attention(q, k, v, mask, false), want = ember_attention(q, k, v, mask, false);
       if (!check::matches(got, want, 1e-12))
         fail("attention with query 1 seeing no key is " + show(got) + ", but should be " + show(want),
              blind_row_mistake(got, q, k, v, visible));
       const auto yours = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
         return ex6_3::attention(a, b, c, mask, false);
       };
       const auto embers = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
         return ember_attention(a, b, c, mask, false);
       };
       const std::vector<Tensor> g = gradients(yours, q, k, v, R), w = gradients(embers, q, k, v, R);
       const char* names[] = {"q.grad", "k.grad", "v.grad"};
       for (size_t i = 0; i < 3; ++i) {
         expect(g[i].defined(), std::string(names[i]) + " is undefined after backward",
                "autograd follows only ember ops on q, k and v themselves");
         expect(!has_nan(g[i]), std::string(names[i]) + " is " + show(g[i]) + ": NaN, although the output is right",
                "a NaN made in the forward and replaced afterwards still reaches backward (0 * NaN is NaN): query "
                "1's row of -inf must not make NaN in the first place");
         expect_close(g[i], w[i], names[i], 1e-12,
                      "a query that sees no key sends no gradient: none to its own q row, and, with weights 0, none "
                      "through it to k and v");
       }
       note("a query that may see no key attends to nothing: ember's softmax gives a row of only -inf the weights "
            "0 (PyTorch's gives NaN), so its output and its gradients are 0");
     }},
  }};
}
