// Checks exercise 3.3 (matmul's backward by hand): the shapes of both
// gradients, their values against ember's own matmul (and which mistake a
// wrong value is), and gradcheck on transposed inputs.
#include "exercises/checks/check.h"

namespace ex3_3 {
ember::Tensor my_matmul(const ember::Tensor& a, const ember::Tensor& b);
}

namespace {

using namespace ember;

struct Grads {
  Tensor a, b;
};

// The gradients of sum(f(A, B) * W): W weighs every element of C
// differently, so that a rule that mixes up C's elements shows.
template <class F>
Grads grads_of(F f, const Tensor& a0, const Tensor& b0, const Tensor& w) {
  Tensor a = a0.clone().requires_grad_(), b = b0.clone().requires_grad_();
  sum(f(a, b) * w).backward();
  return {a.grad(), b.grad()};
}

// Is got the candidate mistake? A candidate whose product the shapes do not
// allow (most of them, unless the matrices are square) is not it.
template <class F>
bool is(const Tensor& got, F candidate) {
  try {
    return check::matches(got, candidate());
  } catch (const ember::Error&) {
    return false;
  }
}

// What a wrong gradient of A is, when it is one of the usual mistakes.
std::string which_mistake_a(const Tensor& got, const Tensor& g, const Tensor& b) {
  if (is(got, [&] { return matmul(g, b); })) return "your dL/dA is g B: B needs its transpose, dL/dA = g B^T";
  if (is(got, [&] { return matmul(b.t(), g); })) return "your dL/dA is B^T g: the order matters, dL/dA = g B^T";
  if (is(got, [&] { return matmul(g, b.t()).t(); }))
    return "your dL/dA is (g B^T)^T: the transpose of the right answer";
  return "dL/dA_ip = sum over j of g_ij B_pj: the row i of g against the row p of B";
}
std::string which_mistake_b(const Tensor& got, const Tensor& g, const Tensor& a) {
  if (is(got, [&] { return matmul(a, g); })) return "your dL/dB is A g: A needs its transpose, dL/dB = A^T g";
  if (is(got, [&] { return matmul(g, a.t()); })) return "your dL/dB is g A^T: the order matters, dL/dB = A^T g";
  if (is(got, [&] { return matmul(a.t(), g).t(); }))
    return "your dL/dB is (A^T g)^T: the transpose of the right answer";
  return "dL/dB_pj = sum over i of A_ip g_ij: the column p of A against the column j of g";
}

const std::vector<std::pair<std::string, std::string>> kShapeRefusals = {
    {"matmul", "the inner sizes must agree: g is (m, n), A (m, k), B (k, n); which product of g with B, or with "
               "B transposed, has A's shape (m, k)? and which of A (or A transposed) with g has B's shape?"},
    {"sum_to", "each gradient must have its input's shape: dL/dA is (m, k) like A, dL/dB is (k, n) like B"},
    {"returned", "the rule returns two gradients, dL/dA first, then dL/dB"},
};

}  // namespace

check::Exercise check::exercise() {
  return {"3.3", "matmul's backward, by hand", "docs/book/03_checking_gradients.md", {
    {"the gradients of A (2, 3) and B (3, 4) have A's and B's shapes", [] {
       Generator gen(1);
       Tensor a = randn({2, 3}, gen, kFloat64), b = randn({3, 4}, gen, kFloat64), w = randn({2, 4}, gen, kFloat64);
       Grads got = grads_of(ex3_3::my_matmul, a, b, w);
       expect(got.a.defined() && got.b.defined(), "A or B got no gradient", "return {dL/dA, dL/dB}, both defined");
       expect(got.a.shape() == a.shape(), "dL/dA has shape " + show(got.a.shape()) + ", A has " + show(a.shape()),
              "dL/dA has A's shape (m, k): which product of g (m, n) and B (k, n) gives that?");
       expect(got.b.shape() == b.shape(), "dL/dB has shape " + show(got.b.shape()) + ", B has " + show(b.shape()),
              "dL/dB has B's shape (k, n): which product of A (m, k) and g (m, n) gives that?");
     }, kShapeRefusals},
    {"their values are ember's matmul's, also for square matrices (where a transpose is easy to miss)", [] {
       Generator gen(2);
       for (const auto& [m, k, n] : {std::tuple{2, 3, 4}, std::tuple{3, 3, 3}}) {
         Tensor a = randn({m, k}, gen, kFloat64), b = randn({k, n}, gen, kFloat64), w = randn({m, n}, gen, kFloat64);
         Grads want = grads_of([](const Tensor& x, const Tensor& y) { return matmul(x, y); }, a, b, w);
         Grads got = grads_of(ex3_3::my_matmul, a, b, w);
         const std::string dims = " for A " + show(a.shape()) + " and B " + show(b.shape());
         if (got.a.shape() != a.shape() || check::max_diff(got.a, want.a, "dL/dA") > 1e-9)
           fail("dL/dA" + dims + " is " + show(got.a) + ", but should be " + show(want.a),
                which_mistake_a(got.a, w, b));
         if (got.b.shape() != b.shape() || check::max_diff(got.b, want.b, "dL/dB") > 1e-9)
           fail("dL/dB" + dims + " is " + show(got.b) + ", but should be " + show(want.b), which_mistake_b(got.b, w, a));
       }
     }, kShapeRefusals},
    {"gradcheck passes, also on transposed (non-contiguous) inputs", [] {
       Generator gen(3);
       for (bool transposed : {false, true}) {
         Tensor a = transposed ? randn({3, 2}, gen, kFloat64).t() : randn({2, 3}, gen, kFloat64);
         Tensor b = transposed ? randn({4, 3}, gen, kFloat64).t() : randn({3, 4}, gen, kFloat64);
         a.requires_grad_();
         b.requires_grad_();
         GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return ex3_3::my_matmul(in[0], in[1]); },
                                       {a, b});
         expect(r.ok, "gradcheck failed" + std::string(transposed ? " on transposed inputs" : "") + ":\n" + r.report,
                "a rule that reads A and B through ember ops (matmul, .t()) works for any strides");
       }
     }},
  }};
}
