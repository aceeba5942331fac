// Every pair of kernels documented as equal, on the rows where kernels part
// ways: scores all -inf (a row that may attend to nothing), a NaN, +inf and
// -inf among finite values, values that overflow, and empty rows. The pairs:
// tiled and stored attention; each fused op and its composed fallback
// (layer_norm, cross_entropy, gelu in both forms), forward and backward; the
// fused backward loops (softmax, tanh, sigmoid, gelu, clamp) and the composed
// rules create_graph differentiates. scripts/test_blas_cores.sh runs this
// file once more at each narrower SIMD width (EMBER_SIMD), which changes the
// vector loops of exp, erf, the row max and sum under these kernels.
//
// "Agree" is: the same shape, NaN where the other is NaN, the same infinity,
// and otherwise equal to rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember.h"
#include "test_util.h"

using namespace ember;
using ember::test::values;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void expect_agree(const Tensor& a, const Tensor& b, double tol, const char* what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(a.defined() && b.defined());
  ASSERT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  const std::vector<double> x = values(a), y = values(b);
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      EXPECT_TRUE(std::isnan(x[i]) && std::isnan(y[i])) << "element " << i << ": " << x[i] << " and " << y[i];
    } else if (std::isinf(x[i]) || std::isinf(y[i])) {
      EXPECT_EQ(x[i], y[i]) << "element " << i;
    } else {
      EXPECT_NEAR(x[i], y[i], tol * (1 + std::abs(y[i]))) << "element " << i;
    }
  }
}

double tol_for(DType dt) { return dt == kFloat32 ? 2e-5 : 1e-12; }

// f(inputs) and the gradients of sum(f(inputs) * w), w a fixed pattern: by a
// plain backward (the fused kernels), or with create_graph (the composed
// rules).
struct Outcome {
  Tensor out;
  std::vector<Tensor> grads;
};
template <typename F>
Outcome run(const F& f, const std::vector<Tensor>& inputs, bool create_graph) {
  std::vector<Tensor> in;
  for (const Tensor& x : inputs) in.push_back(x.detach().requires_grad_());
  Tensor out = f(in);
  Tensor w = arange(0.0, static_cast<double>(out.numel()), 1.0, out.dtype()).reshape(out.shape()) * 0.25 - 1.0;
  std::vector<Tensor> g = grad({(out * w).sum()}, in, {}, {.create_graph = create_graph, .allow_unused = true});
  for (Tensor& t : g) t = t.defined() ? t.detach() : t;
  return {out.detach(), g};
}
// (`skip`: an input whose gradient is not compared)
void expect_runs_agree(const Outcome& a, const Outcome& b, double tol, int skip = -1) {
  expect_agree(a.out, b.out, tol, "the output");
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) {
    if (static_cast<int>(i) == skip) continue;
    SCOPED_TRACE(::testing::Message() << "the gradient of input " << i);
    ASSERT_EQ(a.grads[i].defined(), b.grads[i].defined());
    if (a.grads[i].defined()) expect_agree(a.grads[i], b.grads[i], tol, "gradient");
  }
}

Tensor stored_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const double s = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(q.size(-1), 1)));
  return matmul(scaled_softmax(matmul(q, k.transpose(-2, -1)), s, causal), v);
}

// q (3 rows, d = 2) and k (Tk keys) whose scores are: row 0 ordinary; row 1
// all -inf (q = (inf, 0) against keys (-1, *): every key masked); row 2 as
// `third` says: ordinary (1), NaN (q = (0, NaN)), or +-inf (q = (0, inf)).
// (Huge finite values that overflow to -inf would do too, but then rounding
// in the other rows, times those values, swamps every comparison.)
struct Scores {
  Tensor q, k, v;
};
Scores edge_scores(DType dt, int64_t Tk, double third) {
  Generator g(5);
  Tensor q = randn({3, 2}, g, kFloat64), k = randn({Tk, 2}, g, kFloat64), v = randn({Tk, 3}, g, kFloat64);
  k.select(1, 0).fill_(-1.0);
  q.select(0, 1).select(0, 0).fill_(kInf);
  q.select(0, 1).select(0, 1).fill_(0.0);
  if (third != 1.0) {
    q.select(0, 2).select(0, 0).fill_(0.0);
    q.select(0, 2).select(0, 1).fill_(third);
  }
  return {q.to(dt), k.to(dt), v.to(dt)};
}

}  // namespace

// Tiled and stored attention give one answer on the edge rows: a row whose
// scores are all -inf weighs no key (output 0, gradient 0), whichever key
// tile it is in and however many tiles; a NaN or an infinite score of both
// signs makes its row NaN; a key the causal mask hides gets gradient 0 even
// then (it is not in the row).
TEST(KernelsAgree, TiledAndStoredAttentionOnEdgeRows) {
  for (DType dt : {kFloat32, kFloat64}) {
    for (int64_t Tk : {int64_t{5}, int64_t{300}}) {  // one key tile, and three
      for (double third : {1.0, kNaN, kInf}) {
        SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " Tk " << Tk << " third row's q " << third);
        Scores s = edge_scores(dt, Tk, third);
        for (bool causal : {false, true}) {
          auto tiled = [&](const std::vector<Tensor>& in) { return tiled_attention(in[0], in[1], in[2], causal); };
          auto stored = [&](const std::vector<Tensor>& in) { return stored_attention(in[0], in[1], in[2], causal); };
          Outcome a = run(tiled, {s.q, s.k, s.v}, false), b = run(stored, {s.q, s.k, s.v}, false);
          // dk = s dSᵀ q has 0 times q's infinity wherever dS is 0: NaN in
          // both kernels where they multiply, 0 where the tiled one skips a
          // key tile the causal mask hides; it is not compared
          expect_runs_agree(a, b, tol_for(dt), /*skip=*/1);
          // the masked row is exactly 0, and so is its gradient
          EXPECT_EQ(values(a.out.select(0, 1)), std::vector<double>(3, 0.0));
          EXPECT_EQ(values(a.grads[0].select(0, 1)), std::vector<double>(2, 0.0));
          // the composed rules (create_graph) say the same
          expect_runs_agree(run(tiled, {s.q, s.k, s.v}, true), b, tol_for(dt), /*skip=*/1);
        }
      }
    }
  }
}

// Empty: no keys (every row weighs nothing: 0), no queries, no head dim.
TEST(KernelsAgree, TiledAndStoredAttentionWhenEmpty) {
  Generator g(6);
  struct Shape3 {
    int64_t Tq, Tk, d;
  };
  for (Shape3 c : {Shape3{3, 0, 2}, Shape3{0, 4, 2}, Shape3{3, 4, 0}}) {
    SCOPED_TRACE(::testing::Message() << "Tq " << c.Tq << " Tk " << c.Tk << " d " << c.d);
    Tensor q = randn({c.Tq, c.d}, g, kFloat64), k = randn({c.Tk, c.d}, g, kFloat64), v = randn({c.Tk, 2}, g, kFloat64);
    auto tiled = [](const std::vector<Tensor>& in) { return tiled_attention(in[0], in[1], in[2], false); };
    auto stored = [](const std::vector<Tensor>& in) { return stored_attention(in[0], in[1], in[2], false); };
    expect_runs_agree(run(tiled, {q, k, v}, false), run(stored, {q, k, v}, false), 1e-12);
  }
}

// The softmax row kernel and its backward loop against the composed rule,
// on rows of only -inf, with a NaN, with +inf, with -inf among finite values,
// and an empty softmax dim.
TEST(KernelsAgree, SoftmaxRowsAndTheirBackward) {
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = tensor(std::vector<double>{1, 2, 3, 4,  //
                                          -kInf, -kInf, -kInf, -kInf,  //
                                          1, kNaN, 2, 3,  //
                                          1, kInf, 2, 3,  //
                                          -kInf, 0, -kInf, 1},
                      {5, 4})
                   .to(dt);
    for (int which = 0; which < 3; ++which) {
      auto f = [which](const std::vector<Tensor>& in) {
        return which == 0 ? softmax(in[0], -1) : which == 1 ? log_softmax(in[0], -1) : scaled_softmax(in[0], 0.5, true);
      };
      Outcome fused = run(f, {x}, false), composed = run(f, {x}, true);
      expect_runs_agree(fused, composed, tol_for(dt));
      if (which == 0) {
        EXPECT_EQ(values(fused.out.select(0, 1)), std::vector<double>(4, 0.0)) << "an all -inf row weighs nothing";
        EXPECT_EQ(values(fused.grads[0].select(0, 1)), std::vector<double>(4, 0.0));
      }
    }
    Tensor empty_rows = zeros({3, 0}, dt);
    auto f = [](const std::vector<Tensor>& in) { return softmax(in[0], -1); };
    expect_runs_agree(run(f, {empty_rows}, false), run(f, {empty_rows}, true), 0);
  }
}

// The elementwise ops whose backward is a fused loop: the loop against the
// composed rule, at the infinities, NaN, zero and values where the formulas
// saturate or overflow.
TEST(KernelsAgree, FusedElementwiseBackwardOnEdgeValues) {
  const std::vector<double> edge = {-kInf, -1e30, -100, -20, -3, -1e-30, 0, 1e-30, 0.5, 3, 20, 100, 1e30, kInf, kNaN};
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = tensor(edge).to(dt);
    const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> ops = {
        {"tanh", [](const Tensor& t) { return tanh(t); }},
        {"sigmoid", [](const Tensor& t) { return sigmoid(t); }},
        {"relu", [](const Tensor& t) { return relu(t); }},
        {"gelu", [](const Tensor& t) { return gelu(t); }},
        {"gelu tanh", [](const Tensor& t) { return gelu(t, GeluApprox::Tanh); }},
        {"clamp", [](const Tensor& t) { return clamp(t, -2.0, 2.0); }},
        {"softplus", [](const Tensor& t) { return softplus(t); }},
    };
    for (const auto& [name, op] : ops) {
      SCOPED_TRACE(name);
      auto f = [&op](const std::vector<Tensor>& in) { return op(in[0]); };
      expect_runs_agree(run(f, {x}, false), run(f, {x}, true), tol_for(dt));
    }
  }
}

// The fused ops against their composed fallbacks, forward and backward, on
// edge rows.
TEST(KernelsAgree, FusedOpsAndTheirFallbacksOnEdgeRows) {
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    const double tol = dt == kFloat32 ? 1e-4 : 1e-10;
    // layer norm: an ordinary row, a constant row (variance 0), a NaN, an
    // infinity, values near float32's largest
    Tensor x = tensor(std::vector<double>{1, 2, 3, 4,  //
                                          5, 5, 5, 5,  //
                                          1, kNaN, 2, 3,  //
                                          1, kInf, 2, 3,  //
                                          1e18, -1e18, 3e18, 0},
                      {5, 4})
                   .to(dt);
    Tensor w = tensor(std::vector<double>{1, -2, 0.5, 3}).to(dt), b = tensor(std::vector<double>{0, 1, -1, 2}).to(dt);
    auto fused_ln = [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2], 1e-5); };
    auto composed_ln = [](const std::vector<Tensor>& in) { return composed::layer_norm(in[0], in[1], in[2], 1e-5); };
    {
      SCOPED_TRACE("layer_norm");
      expect_runs_agree(run(fused_ln, {x, w, b}, false), run(composed_ln, {x, w, b}, false), tol);
    }
    // cross entropy: an ordinary row, the target at -inf, another logit at
    // -inf, all -inf, a NaN, +inf, and an ignored row
    Tensor logits = tensor(std::vector<double>{1, 2, 3,  //
                                               -kInf, 2, 3,  //
                                               1, -kInf, 3,  //
                                               -kInf, -kInf, -kInf,  //
                                               1, kNaN, 3,  //
                                               1, kInf, 3,  //
                                               1, 2, 3},
                           {7, 3})
                        .to(dt);
    Tensor targets = tensor(std::vector<int64_t>{0, 0, 0, 1, 2, 2, -100});
    for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean}) {
      SCOPED_TRACE(::testing::Message() << "cross_entropy, reduction " << static_cast<int>(r));
      auto fused_ce = [&](const std::vector<Tensor>& in) { return cross_entropy(in[0], targets, r); };
      auto composed_ce = [&](const std::vector<Tensor>& in) {
        return composed::cross_entropy(in[0], targets, r, -100, r == Reduction::Mean ? 1.0 / 6.0 : 1.0);
      };
      expect_runs_agree(run(fused_ce, {logits}, false), run(composed_ce, {logits}, false), tol);
    }
    // gelu
    Tensor e = tensor(std::vector<double>{-kInf, -1e30, -30, -1, 0, 1, 30, 1e30, kInf, kNaN}).to(dt);
    for (GeluApprox a : {GeluApprox::None, GeluApprox::Tanh}) {
      SCOPED_TRACE(a == GeluApprox::None ? "gelu" : "gelu tanh");
      auto fused_g = [a](const std::vector<Tensor>& in) { return gelu(in[0], a); };
      auto composed_g = [a](const std::vector<Tensor>& in) { return composed::gelu(in[0], a); };
      expect_runs_agree(run(fused_g, {e}, false), run(composed_g, {e}, false), tol);
    }
  }
}
