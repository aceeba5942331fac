// tiled_attention (autograd/ops.h, tensor/attention.cpp): attention that
// never holds its (Tq, Tk) weights. What it must do: equal the stored-weights
// path (scaled_softmax and two matmuls) to rounding, forward and backward,
// over tile edges, causal or not, for every layout; give the closed forms
// where there are some; save no weights; keep its bits across thread counts;
// refuse bad shapes by name. Its gradcheck, gradgradcheck and forward-mode
// check are in the registry (tests/gradcheck_samples/samples_nn_attention.cpp).
//
// Legend: B batch, h heads, T sequence length (Tq queries, Tk keys), d head
// dim, dv value dim, D = h d model dim.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember.h"
#include "tensor/kernels.h"
#include "test_util.h"

using namespace ember;
using ember::test::expect_close;
using ember::test::expect_error;
using ember::test::values;

namespace {

Tensor stored(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  return nn::scaled_dot_product_attention(q, k, v, Tensor(), causal).output;
}

struct Grads {
  Tensor out, dq, dk, dv;
};
// out and the gradients of sum(out * w) for a fixed w.
template <typename F>
Grads run(F attention, const Tensor& q0, const Tensor& k0, const Tensor& v0, const Tensor& w) {
  Tensor q = q0.detach().requires_grad_(), k = k0.detach().requires_grad_(), v = v0.detach().requires_grad_();
  Tensor out = attention(q, k, v);
  (out * w).sum().backward();
  return {out.detach(), q.grad(), k.grad(), v.grad()};
}

}  // namespace

// Against the stored path in float64, over shapes that cross the 128-row and
// 128-key tile edges, causal and not, Tq != Tk, d != dv.
TEST(TiledAttention, EqualsTheStoredWeightsPathForwardAndBackward) {
  Generator g(11);
  struct Case {
    int64_t Tq, Tk, d, dv;
    bool causal;
  };
  for (Case c : {Case{1, 1, 1, 1, false}, Case{5, 7, 3, 2, false}, Case{64, 128, 4, 4, false},
                 Case{129, 257, 3, 5, false}, Case{200, 200, 4, 4, true}, Case{257, 257, 2, 2, true}, Case{130, 70, 2, 3, true},
                 Case{70, 300, 8, 8, true}}) {
    SCOPED_TRACE(::testing::Message() << "Tq " << c.Tq << " Tk " << c.Tk << " d " << c.d << " dv " << c.dv
                                      << (c.causal ? " causal" : ""));
    Tensor q = randn({2, c.Tq, c.d}, g, kFloat64), k = randn({2, c.Tk, c.d}, g, kFloat64);
    Tensor v = randn({2, c.Tk, c.dv}, g, kFloat64), w = randn({2, c.Tq, c.dv}, g, kFloat64);
    Grads a = run([&](auto& q_, auto& k_, auto& v_) { return tiled_attention(q_, k_, v_, c.causal); }, q, k, v, w);
    Grads b = run([&](auto& q_, auto& k_, auto& v_) { return stored(q_, k_, v_, c.causal); }, q, k, v, w);
    expect_close(a.out, b.out, 1e-12);
    expect_close(a.dq, b.dq, 1e-12);
    expect_close(a.dk, b.dk, 1e-12);
    expect_close(a.dv, b.dv, 1e-12);
  }
}

// q = 0: every key scores the same, so row i averages the values it sees,
// all of them, or (causal) v_0..v_i. And the log-sum-exp is log(keys seen).
TEST(TiledAttention, ZeroQueriesAverageTheValuesTheySee) {
  const int64_t T = 150;  // two key tiles, three row tiles
  Tensor q = zeros({T, 2}, kFloat64), k = randn({T, 2}, *test::seeded(3), kFloat64);
  Tensor v = arange(0, T, 1, kFloat64).reshape({T, 1});  // v_j = j
  std::vector<double> all(T, (T - 1) / 2.0), causal(T);
  for (int64_t i = 0; i < T; ++i) causal[i] = i / 2.0;  // mean of 0..i
  test::expect_values(tiled_attention(q, k, v, false), all, 1e-12);
  test::expect_values(tiled_attention(q, k, v, true), causal, 1e-12);
  kernel::TiledAttention f = kernel::tiled_attention_forward(q, k, v, 1.0, true);
  std::vector<double> lse(T);
  for (int64_t i = 0; i < T; ++i) lse[i] = std::log(double(i + 1));
  test::expect_values(f.lse, lse, 1e-12);
}

// A row whose scores grow tile after tile: the running max is raised in
// every key tile, and the rescaled sums must still give the exact softmax.
TEST(TiledAttention, OnlineSoftmaxRescalesExactly) {
  const int64_t Tk = 400;
  Tensor q = ones({1, 1}, kFloat64);
  Tensor k = arange(0, Tk, 1, kFloat64).reshape({Tk, 1}) * 0.05;  // scores 0, 0.05, ... rising
  Tensor v = arange(0, Tk, 1, kFloat64).reshape({Tk, 1});
  double num = 0, den = 0;
  for (int64_t j = 0; j < Tk; ++j) {
    num += std::exp(0.05 * j) * j;
    den += std::exp(0.05 * j);
  }
  test::expect_values(tiled_attention(q, k, v, false), {num / den}, 1e-10);
}

// The GPT's layout: q, k, v are (B, h, T, d) head views of (B, T, D)
// projections. The output comes back in the same layout, so the heads merge
// into (B, T, D) without a copy; and float32 agrees with the stored path to
// float32 rounding.
TEST(TiledAttention, HeadViewsInAndOutFloat32) {
  const int64_t B = 2, T = 100, h = 4, d = 8;
  Generator g(5);
  auto heads = [&] { return randn({B, T, h * d}, g).reshape({B, T, h, d}).transpose(1, 2); };
  Tensor q = heads(), k = heads(), v = heads();
  ASSERT_FALSE(q.is_contiguous());
  Tensor out = tiled_attention(q, k, v, true);
  EXPECT_EQ(out.stride(), q.stride());  // (B, h, T, d) over a (B, T, h, d) buffer
  EXPECT_TRUE(out.transpose(1, 2).is_contiguous());
  Tensor ref = stored(q, k, v, true);
  double worst = 0;
  std::vector<double> a = values(out), b = values(ref);
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  EXPECT_LT(worst, 1e-5);  // float32: two orders of the same sums
}

// What backward keeps: q, k, v, the output and one log-sum-exp per row; no
// (Tq, Tk) tensor.
TEST(TiledAttention, SavesNoWeights) {
  const int64_t T = 300, d = 4;
  Tensor q = randn({T, d}, *test::seeded(1)).requires_grad_(), k = randn({T, d}, *test::seeded(2)).requires_grad_();
  Tensor v = randn({T, d}, *test::seeded(3)).requires_grad_();
  Tensor out = tiled_attention(q, k, v, true);
  int64_t saved = 0;
  for (SavedTensor* s : out.grad_fn()->saved()) {
    EXPECT_LT(s->peek().numel(), T * T / 2);
    saved += s->peek().numel();
  }
  EXPECT_EQ(saved, 4 * T * d + T);
}

// Each (B h) matrix is done on one thread in a fixed order: the bits do not
// depend on how many threads there are.
TEST(TiledAttention, SameBitsOnOneAndTwoThreads) {
  Generator g(9);
  Tensor q = randn({8, 200, 16}, g), k = randn({8, 200, 16}, g), v = randn({8, 200, 16}, g), w = randn({8, 200, 16}, g);
  const int before = get_num_threads();
  auto attention = [](auto& q_, auto& k_, auto& v_) { return tiled_attention(q_, k_, v_, true); };
  set_num_threads(1);
  Grads one = run(attention, q, k, v, w);
  set_num_threads(2);
  Grads two = run(attention, q, k, v, w);
  set_num_threads(before);
  EXPECT_EQ(values(one.out), values(two.out));
  EXPECT_EQ(values(one.dq), values(two.dq));
  EXPECT_EQ(values(one.dk), values(two.dk));
  EXPECT_EQ(values(one.dv), values(two.dv));
}

TEST(TiledAttention, NoKeysGiveZeroAndNoNaN) {
  Tensor q = ones({3, 2}, kFloat64).requires_grad_();
  Tensor k = zeros({0, 2}, kFloat64), v = zeros({0, 4}, kFloat64);
  Tensor out = tiled_attention(q, k, v, false);
  test::expect_values(out, std::vector<double>(12, 0.0), 0.0);
  out.sum().backward();
  test::expect_values(q.grad(), std::vector<double>(6, 0.0), 0.0);
}

TEST(TiledAttention, BadInputIsAnErrorNamingTheShapes) {
  Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4}), v = zeros({2, 5, 6});
  expect_error([&] { tiled_attention(q, zeros({3, 5, 4}), zeros({3, 5, 6})); }, "tiled_attention",
               {"(2, 3, 4)", "(3, 5, 4)", "same leading dims"});
  expect_error([&] { tiled_attention(q, zeros({2, 5, 3}), v); }, "tiled_attention", {"must share d"});
  expect_error([&] { tiled_attention(q, k, zeros({2, 4, 6})); }, "tiled_attention", {"must share Tk"});
  expect_error([&] { tiled_attention(q, to(k, kFloat64), to(v, kFloat64)); }, "tiled_attention",
               {"float32", "float64"});
  expect_error([&] { tiled_attention(zeros({4}), k, v); }, "tiled_attention", {"(..., T, d)"});
  expect_error([&] { tiled_attention(zeros({3, 4}, kInt64), zeros({5, 4}, kInt64), zeros({5, 4}, kInt64)); },
               "tiled_attention", {"int64"});
  expect_error([&] { tiled_attention(q, Tensor(), v); }, "tiled_attention", {"undefined"});
}

// MultiHeadAttention and the GPT use it by default; the stored path stays an
// option, and the two agree on the tiny GPT's loss and gradients to float32
// rounding.
TEST(TiledAttention, GptTiledAndStoredAgree) {
  nn::GPTConfig c;
  c.vocab_size = 13;
  c.context_length = 96;
  c.dim = 32;
  c.heads = 4;
  c.layers = 2;
  c.seed = 4;
  nn::GPT tiled(c), stored_model(c);
  stored_model.set_attention(nn::AttentionKernel::Stored);
  EXPECT_EQ(tiled.attention(), nn::AttentionKernel::Tiled);
  EXPECT_EQ(stored_model.attention(), nn::AttentionKernel::Stored);
  Generator g(2);
  Tensor x = randint(0, 13, {3, 96}, g), y = randint(0, 13, {3, 96}, g);
  Tensor la = tiled.loss(x, y), lb = stored_model.loss(x, y);
  EXPECT_NEAR(la.item<double>(), lb.item<double>(), 1e-6);
  la.backward();
  lb.backward();
  auto pa = tiled.named_parameters(), pb = stored_model.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    std::vector<double> a = values(pa[i].second.grad()), b = values(pb[i].second.grad());
    double scale = 0, worst = 0;
    for (size_t j = 0; j < a.size(); ++j) {
      scale = std::max(scale, std::abs(b[j]));
      worst = std::max(worst, std::abs(a[j] - b[j]));
    }
    EXPECT_LE(worst, 1e-4 * scale + 1e-7) << pa[i].first;
  }
}

// d = 0: every score is 0, so row i averages the values it sees (all 7, or
// causal the first i + 1), and the gradient of v is the closed form of that
// average, not zero.
TEST(TiledAttention, ZeroHeadDimAveragesTheValues) {
  const int64_t Tq = 5, Tk = 7, dv = 3;
  Tensor q = zeros({Tq, 0}, kFloat64), k = zeros({Tk, 0}, kFloat64);
  Tensor v0 = randn({Tk, dv}, *test::seeded(8), kFloat64), w = randn({Tq, dv}, *test::seeded(9), kFloat64);
  const std::vector<double> V = values(v0), W = values(w);
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "all keys");
    Grads a = run([&](auto& q_, auto& k_, auto& v_) { return tiled_attention(q_, k_, v_, causal); }, q, k, v0, w);
    std::vector<double> out(Tq * dv, 0.0), dvv(Tk * dv, 0.0);
    for (int64_t i = 0; i < Tq; ++i) {
      const int64_t seen = causal ? std::min(i + 1, Tk) : Tk;
      for (int64_t j = 0; j < seen; ++j)
        for (int64_t e = 0; e < dv; ++e) {
          out[i * dv + e] += V[j * dv + e] / seen;
          dvv[j * dv + e] += W[i * dv + e] / seen;
        }
    }
    test::expect_values(a.out, out, 1e-14);
    test::expect_values(a.dv, dvv, 1e-14);
  }
}

// The backward kernel refuses an output or log-sum-exp of the wrong shape.
TEST(TiledAttention, BackwardKernelChecksItsSavedTensors) {
  Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4}), v = zeros({2, 5, 6});
  kernel::TiledAttention f = kernel::tiled_attention_forward(q, k, v, 0.5, false);
  expect_error([&] { kernel::tiled_attention_backward(q, k, v, f.out, zeros({2, 4}), f.out, 0.5, false); },
               "tiled_attention backward", {"lse", "(2, 4)", "(2, 3)"});
  expect_error([&] { kernel::tiled_attention_backward(q, k, v, zeros({2, 3, 5}), f.lse, zeros({2, 3, 5}), 0.5, false); },
               "tiled_attention backward", {"(2, 3, 5)", "(2, 3, 6)"});
}
