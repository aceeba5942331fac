// nn/attention.h: scaled dot-product attention (values by hand, float and
// bool masks, causal masking proven through gradients, the fully masked row
// rule), MultiHeadAttention (errors, shapes, heads = column blocks, cross
// attention), AdditiveAttention, TransformerBlock, and float64 gradchecks of
// every variant.
//
// Legend: B batch, T sequence length (Tq queries, Tk keys), D model dim,
//         h heads, d = D / h head dim.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember.h"
#include "nn/attention.h"
#include "tensor/kernels.h"
#include "test_util.h"

using namespace ember;
using ember::test::expect_close;
using ember::test::expect_error;
using ember::test::expect_values;
using ember::test::values;

namespace {

using Vec = std::vector<double>;
const double kInf = std::numeric_limits<double>::infinity();

Tensor leaf(const Shape& s, Generator& g) { return randn(s, g, kFloat64).requires_grad_(); }
// The same shape with the last two dims laid out transposed in memory.
Tensor transposed_leaf(const Shape& s, Generator& g) {
  Shape swapped = s;
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  return randn(swapped, g, kFloat64).transpose(-1, -2).detach().requires_grad_();
}

// Reference attention for one (Tq, d) x (Tk, d) x (Tk, dv) problem, scalar
// loops; keep[i][j] false blocks key j for query i.
struct Ref {
  std::vector<Vec> weights, out;
};
Ref reference(const Vec& q, const Vec& k, const Vec& v, int64_t Tq, int64_t Tk, int64_t d, int64_t dv,
              const std::vector<std::vector<bool>>& keep = {}, const std::vector<Vec>& add = {}) {
  Ref r;
  for (int64_t i = 0; i < Tq; ++i) {
    Vec s(Tk);
    double mx = -kInf;
    for (int64_t j = 0; j < Tk; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < d; ++c) dot += q[i * d + c] * k[j * d + c];
      s[j] = dot / std::sqrt(double(d)) + (add.empty() ? 0.0 : add[i][j]);
      if (!keep.empty() && !keep[i][j]) s[j] = -kInf;
      mx = std::max(mx, s[j]);
    }
    Vec w(Tk, 0.0), o(dv, 0.0);
    if (mx > -kInf) {
      double z = 0;
      for (int64_t j = 0; j < Tk; ++j) z += (w[j] = std::exp(s[j] - mx));
      for (int64_t j = 0; j < Tk; ++j) w[j] /= z;
    }
    for (int64_t j = 0; j < Tk; ++j)
      for (int64_t c = 0; c < dv; ++c) o[c] += w[j] * v[j * dv + c];
    r.weights.push_back(w);
    r.out.push_back(o);
  }
  return r;
}
Vec flat(const std::vector<Vec>& m) {
  Vec out;
  for (const Vec& r : m) out.insert(out.end(), r.begin(), r.end());
  return out;
}

}  // namespace

// ---------------------------------------------------------------- sdpa values

TEST(NnSdpa, LessonTwoScoreExample) {
  // d = 1, q = 1, the keys 2 and 1 -> the scores 2 and 1; the values 10 and 4
  Tensor q = tensor(Vec{1}, {1, 1}), k = tensor(Vec{2, 1}, {2, 1}), v = tensor(Vec{10, 4}, {2, 1});
  nn::Attention a = nn::scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(a.weights.shape(), (Shape{1, 2}));
  EXPECT_EQ(a.output.shape(), (Shape{1, 1}));
  expect_values(a.weights, {0.7310585786300049, 0.2689414213699951}, 1e-15);
  EXPECT_NEAR(a.output.item<double>(), 8.386351471780029, 1e-14);  // 0.731·10 + 0.269·4
}

TEST(NnSdpa, ValuesByHandBatched) {
  Generator g(1);
  const int64_t B = 2, Tq = 3, Tk = 4, d = 2, dv = 3;
  Tensor q = randn({B, Tq, d}, g, kFloat64), k = randn({B, Tk, d}, g, kFloat64), v = randn({B, Tk, dv}, g, kFloat64);
  nn::Attention a = nn::scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(a.output.shape(), (Shape{B, Tq, dv}));
  EXPECT_EQ(a.weights.shape(), (Shape{B, Tq, Tk}));
  for (int64_t b = 0; b < B; ++b) {
    Ref r = reference(values(q.select(0, b)), values(k.select(0, b)), values(v.select(0, b)), Tq, Tk, d, dv);
    expect_values(a.weights.select(0, b), flat(r.weights), 1e-14);
    expect_values(a.output.select(0, b), flat(r.out), 1e-14);
  }
  // rows of the weights sum to 1
  expect_values(a.weights.sum({-1}), Vec(B * Tq, 1.0), 1e-14);
}

TEST(NnSdpa, FloatMaskIsAddedAndBoolMaskKeepsTrue) {
  Generator g(2);
  const int64_t Tq = 3, Tk = 4, d = 2;
  Tensor q = randn({Tq, d}, g, kFloat64), k = randn({Tk, d}, g, kFloat64), v = randn({Tk, d}, g, kFloat64);
  // an additive bias with one blocked entry per row
  std::vector<Vec> add = {{0.5, -kInf, 0, 1}, {-kInf, 0, 0, -2}, {0.1, 0.2, 0.3, -kInf}};
  Tensor fmask = tensor(flat(add), {Tq, Tk});
  nn::Attention a = nn::scaled_dot_product_attention(q, k, v, fmask);
  Ref r = reference(values(q), values(k), values(v), Tq, Tk, d, d, {}, add);
  expect_values(a.weights, flat(r.weights), 1e-14);
  expect_values(a.output, flat(r.out), 1e-14);
  // bool mask: true = keep (PyTorch's convention)
  std::vector<std::vector<bool>> keep = {{true, false, true, true}, {false, true, true, false}, {true, true, true, true}};
  std::vector<bool> kv;
  for (auto& row : keep) kv.insert(kv.end(), row.begin(), row.end());
  Tensor bmask = tensor(kv, {Tq, Tk});
  nn::Attention b = nn::scaled_dot_product_attention(q, k, v, bmask);
  Ref rb = reference(values(q), values(k), values(v), Tq, Tk, d, d, keep);
  expect_values(b.weights, flat(rb.weights), 1e-14);
  expect_values(b.output, flat(rb.out), 1e-14);
  EXPECT_EQ(values(b.weights)[1], 0.0);  // blocked exactly
  // a (Tk) key-padding mask broadcasts over queries and a batch
  Tensor qb = randn({2, Tq, d}, g, kFloat64);
  Tensor pad = tensor(std::vector<bool>{true, true, false, true}, {Tk});
  nn::Attention c = nn::scaled_dot_product_attention(qb, k, v, pad);
  EXPECT_EQ(c.weights.shape(), (Shape{2, Tq, Tk}));
  for (int64_t i = 0; i < 2 * Tq; ++i) EXPECT_EQ(values(c.weights)[i * Tk + 2], 0.0);
}

TEST(NnSdpa, MaskShapeError) {
  Tensor q = randn({3, 2}), k = randn({4, 2}), v = randn({4, 2});
  expect_error([&] { nn::scaled_dot_product_attention(q, k, v, ones({3, 3})); }, {"scaled_dot_product_attention"});
  expect_error([&] { nn::scaled_dot_product_attention(q, randn({4, 3}), v); },
               {"scaled_dot_product_attention", "(3, 2)", "(4, 3)"});
  expect_error([&] { nn::scaled_dot_product_attention(q, k, randn({5, 2})); },
               {"scaled_dot_product_attention", "(5, 2)"});
  // a mask that broadcasts but would enlarge the scores
  expect_error([&] { nn::scaled_dot_product_attention(q, k, v, ones({2, 3, 4}, kBool)); },
               {"scaled_dot_product_attention", "(2, 3, 4)", "(3, 4)"});
}

TEST(NnSdpa, CausalWeightsAndValues) {
  Generator g(3);
  const int64_t T = 5, d = 3;
  Tensor x = randn({T, d}, g, kFloat64);
  nn::Attention a = nn::scaled_dot_product_attention(x, x, x, Tensor(), /*causal=*/true);
  std::vector<std::vector<bool>> keep(T, std::vector<bool>(T));
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) keep[i][j] = j <= i;
  Ref r = reference(values(x), values(x), values(x), T, T, d, d, keep);
  expect_values(a.weights, flat(r.weights), 1e-14);
  expect_values(a.output, flat(r.out), 1e-14);
  // the first query sees only itself
  expect_values(a.output.select(0, 0), values(x.select(0, 0)), 1e-15);
  // causal equals the explicit lower-triangular bool mask
  Tensor tri = tril(ones({T, T}, kBool));
  expect_close(nn::scaled_dot_product_attention(x, x, x, tri).output, a.output, 0.0);
}

// The lesson's rule, proven with backward(): output t does not depend on any
// input after t, so those gradients are exactly 0.0, and it does depend on
// every input up to t.
TEST(NnSdpa, CausalMaskingProvenThroughGradients) {
  Generator g(4);
  const int64_t T = 6, d = 4;
  Tensor q = leaf({T, d}, g), k = leaf({T, d}, g), v = leaf({T, d}, g);
  nn::Attention a = nn::scaled_dot_product_attention(q, k, v, Tensor(), true);
  for (int64_t t = 0; t < T; ++t) {
    for (Tensor* p : {&q, &k, &v}) p->set_grad(Tensor());
    a.output.select(0, t).sum().backward(Tensor(), /*retain_graph=*/true);
    for (int64_t s = 0; s < T; ++s) {
      for (const Tensor* p : {&k, &v}) {
        std::vector<double> gs = values(p->grad().select(0, s));
        double mag = 0;
        for (double x : gs) mag += std::abs(x);
        if (s > t) {
          EXPECT_EQ(mag, 0.0) << "output " << t << " reaches input " << s;
        } else if (p == &v || t > 0) {
          // (output 0 sees one key: its weight is 1 whatever k_0 is, so dk_0 = 0)
          EXPECT_GT(mag, 0.0) << "output " << t << " should reach input " << s;
        }
      }
      // queries: only row t matters
      double mq = 0;
      for (double x : values(q.grad().select(0, s))) mq += std::abs(x);
      if (s != t) {
        EXPECT_EQ(mq, 0.0);
      }
    }
  }
}

TEST(NnSdpa, FullyMaskedRowIsZeroNotNaN) {
  Generator g(5);
  const int64_t Tq = 3, Tk = 4, d = 2;
  Tensor q = leaf({Tq, d}, g), k = leaf({Tk, d}, g), v = leaf({Tk, d}, g);
  // query 1 may see nothing
  Tensor mask = tensor(std::vector<bool>{true, true, false, true,  //
                                         false, false, false, false, //
                                         false, true, true, true},
                       {Tq, Tk});
  nn::Attention a = nn::scaled_dot_product_attention(q, k, v, mask);
  for (double w : values(a.weights)) EXPECT_FALSE(std::isnan(w));
  expect_values(a.weights.select(0, 1), {0, 0, 0, 0}, 0.0);
  expect_values(a.output.select(0, 1), {0, 0}, 0.0);
  expect_values(a.weights.select(0, 0).sum(), {1.0}, 1e-15);
  // the gradient is finite everywhere, and 0 for the blind query
  (a.output * a.output).sum().backward();
  for (const Tensor* p : {&q, &k, &v})
    for (double x : values(p->grad())) EXPECT_TRUE(std::isfinite(x));
  expect_values(q.grad().select(0, 1), {0, 0}, 0.0);
  // the same with a float -inf mask
  Tensor fmask = where(mask, zeros({Tq, Tk}, kFloat64), full({Tq, Tk}, -kInf, kFloat64));
  nn::Attention b = nn::scaled_dot_product_attention(q.detach(), k.detach(), v.detach(), fmask);
  expect_close(b.output, a.output, 1e-15);
  expect_close(b.weights, a.weights, 1e-15);
}

// ---------------------------------------------------------------- sdpa gradchecks

TEST(NnSdpaGradcheck, PlainMasksCausalNonContiguous) {
  Generator g(6);
  auto out = [](Tensor mask, bool causal) {
    return [mask, causal](const std::vector<Tensor>& in) {
      return nn::scaled_dot_product_attention(in[0], in[1], in[2], mask, causal).output;
    };
  };
  auto weights = [](const std::vector<Tensor>& in) { return nn::scaled_dot_product_attention(in[0], in[1], in[2]).weights; };
  EXPECT_GRADCHECK(out(Tensor(), false), {leaf({3, 2}, g), leaf({4, 2}, g), leaf({4, 3}, g)});
  EXPECT_GRADCHECK(weights, {leaf({3, 2}, g), leaf({4, 2}, g), leaf({4, 3}, g)});
  // batched with heads (B, h, T, d)
  EXPECT_GRADCHECK(out(Tensor(), false), {leaf({2, 2, 3, 2}, g), leaf({2, 2, 3, 2}, g), leaf({2, 2, 3, 2}, g)});
  // causal
  EXPECT_GRADCHECK(out(Tensor(), true), {leaf({2, 4, 3}, g), leaf({2, 4, 3}, g), leaf({2, 4, 3}, g)});
  // float additive mask (with a blocked entry) and bool mask with a fully masked row
  Tensor fmask = tensor(Vec{0.5, -kInf, 0, 1, 0, -1, 0.2, 0, 0.3}, {3, 3});
  EXPECT_GRADCHECK(out(fmask, false), {leaf({3, 2}, g), leaf({3, 2}, g), leaf({3, 2}, g)});
  Tensor bmask = tensor(std::vector<bool>{true, false, true, false, false, false, true, true, false}, {3, 3});
  EXPECT_GRADCHECK(out(bmask, false), {leaf({3, 2}, g), leaf({3, 2}, g), leaf({3, 2}, g)});
  EXPECT_GRADCHECK(out(bmask, true), {leaf({3, 2}, g), leaf({3, 2}, g), leaf({3, 2}, g)});
  // non-contiguous q, k, v
  EXPECT_GRADCHECK(out(Tensor(), true), {transposed_leaf({3, 2}, g), transposed_leaf({3, 2}, g), transposed_leaf({3, 2}, g)});
  Tensor buf = randn({4, 6}, g, kFloat64);
  Tensor strided_v = buf.slice(1, 0, 6, 2).detach().requires_grad_();  // (4, 3) with stride 2
  EXPECT_GRADCHECK(out(Tensor(), false), {transposed_leaf({2, 3}, g), leaf({4, 3}, g), strided_v});
}

// ---------------------------------------------------------------- MultiHeadAttention

TEST(NnMultiHeadAttention, DimMustBeAMultipleOfHeads) {
  expect_error([] { nn::MultiHeadAttention m(10, 3); }, {"MultiHeadAttention", "10", "3"});
  expect_error([] { nn::MultiHeadAttention m(8, 0); }, {"MultiHeadAttention", "8", "0"});
  nn::MultiHeadAttention m(8, 2);
  expect_error([&] { m.forward(randn({2, 3, 6})); }, {"MultiHeadAttention", "(2, 3, 6)", "8"});
  expect_error([&] { m.forward(randn({2, 3, 8}), randn({2, 4, 8}), randn({2, 5, 8})); },
               {"MultiHeadAttention", "(2, 4, 8)", "(2, 5, 8)"});
}

TEST(NnMultiHeadAttention, ShapesAndParameters) {
  nn::MultiHeadAttention m(8, 2, {.causal = false, .bias = true, .generator = test::seeded(1)});
  EXPECT_EQ(m.heads(), 2);
  auto names = m.named_parameters();
  ASSERT_EQ(names.size(), 8u);
  EXPECT_EQ(names[0].first, "w_q.weight");
  EXPECT_EQ(names[7].first, "w_o.bias");
  Tensor x = randn({3, 5, 8});
  EXPECT_EQ(m.forward(x).shape(), (Shape{3, 5, 8}));
  nn::Attention a = m.forward(x, x, x);
  EXPECT_EQ(a.weights.shape(), (Shape{3, 2, 5, 5}));
  nn::MultiHeadAttention nb(8, 4, {.causal = true, .bias = false});
  EXPECT_EQ(nb.named_parameters().size(), 4u);
  EXPECT_NE(nb.extra_repr().find("causal"), std::string::npos);
}

// Head i reads columns [i d, (i+1) d) of the projections; the view-based split
// must agree with slicing those columns out by hand.
TEST(NnMultiHeadAttention, HeadsAreColumnBlocksOfTheProjections) {
  Generator g(7);
  const int64_t B = 2, Tq = 3, Tk = 5, D = 6, h = 3, d = 2;
  for (bool causal : {false, true}) {
    nn::MultiHeadAttention m(D, h, {.causal = causal, .bias = true, .dtype = kFloat64, .generator = test::seeded(3)});
    Tensor query = randn({B, Tq, D}, g, kFloat64), kv = randn({B, Tk, D}, g, kFloat64);  // cross-attention
    nn::Attention a = m.forward(query, kv, kv);
    EXPECT_EQ(a.output.shape(), (Shape{B, Tq, D}));
    EXPECT_EQ(a.weights.shape(), (Shape{B, h, Tq, Tk}));
    Tensor Q = m.w_q->forward(query), K = m.w_k->forward(kv), V = m.w_v->forward(kv);
    std::vector<Tensor> heads;
    for (int64_t i = 0; i < h; ++i) {
      nn::Attention ai = nn::scaled_dot_product_attention(Q.narrow(2, i * d, d), K.narrow(2, i * d, d),
                                                          V.narrow(2, i * d, d), Tensor(), causal);
      expect_close(a.weights.select(1, i), ai.weights, 1e-14);
      heads.push_back(ai.output);
    }
    Tensor expected = m.w_o->forward(cat(heads, 2));
    expect_close(a.output, expected, 1e-14);
  }
}

TEST(NnMultiHeadAttention, CrossAttentionAndMask) {
  Generator g(8);
  nn::MultiHeadAttention m(4, 2, {.causal = false, .bias = true, .dtype = kFloat64, .generator = test::seeded(0)});
  Tensor q = randn({1, 2, 4}, g, kFloat64), kv = randn({1, 3, 4}, g, kFloat64);
  // a key-padding mask: key 2 is padding
  Tensor pad = tensor(std::vector<bool>{true, true, false}, {3});
  nn::Attention a = m.forward(q, kv, kv, pad);
  for (int64_t i = 0; i < 2 * 2; ++i) EXPECT_EQ(values(a.weights)[i * 3 + 2], 0.0);
  // dropping the padded key gives the same output
  Tensor kv2 = kv.narrow(1, 0, 2);
  expect_close(m.forward(q, kv2, kv2).output, a.output, 1e-14);
}

TEST(NnMultiHeadAttention, CausalProvenThroughGradients) {
  Generator g(9);
  const int64_t T = 4, D = 4;
  nn::MultiHeadAttention m(D, 2, {.causal = true, .bias = true, .dtype = kFloat64, .generator = test::seeded(2)});
  Tensor x = leaf({2, T, D}, g);
  Tensor y = m.forward(x);
  for (int64_t t = 0; t < T; ++t) {
    x.set_grad(Tensor());
    y.select(1, t).sum().backward(Tensor(), true);
    for (int64_t s = 0; s < T; ++s) {
      double mag = 0;
      for (double v : values(x.grad().select(1, s))) mag += std::abs(v);
      if (s > t) {
        EXPECT_EQ(mag, 0.0) << "output " << t << " reaches input " << s;
      } else {
        EXPECT_GT(mag, 0.0);
      }
    }
  }
}

namespace {
// inputs: x (B, T, D) then W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o
GradFn mha_fn(int64_t D, int64_t heads, bool causal, bool cross = false) {
  return [=](const std::vector<Tensor>& in) {
    nn::MultiHeadAttention m(D, heads, {.causal = causal, .bias = true, .dtype = kFloat64, .generator = test::seeded(0)});
    std::shared_ptr<nn::Linear> lin[] = {m.w_q, m.w_k, m.w_v, m.w_o};
    for (int i = 0; i < 4; ++i) {
      lin[i]->weight = in[1 + 2 * i];
      lin[i]->bias = in[2 + 2 * i];
    }
    if (cross) return m.forward(in[0], in[9], in[9]).output;
    return m.forward(in[0]);
  };
}
std::vector<Tensor> mha_inputs(Generator& g, const Tensor& x, int64_t D) {
  std::vector<Tensor> in = {x};
  for (int i = 0; i < 4; ++i) {
    in.push_back((randn({D, D}, g, kFloat64) * 0.5).detach().requires_grad_());
    in.push_back(leaf({D}, g));
  }
  return in;
}
}  // namespace

TEST(NnMultiHeadAttentionGradcheck, SelfCausalAndNot) {
  Generator g(10);
  EXPECT_GRADCHECK(mha_fn(4, 2, false), mha_inputs(g, leaf({1, 3, 4}, g), 4));
  EXPECT_GRADCHECK(mha_fn(4, 2, true), mha_inputs(g, leaf({2, 3, 4}, g), 4));
  // non-contiguous x: (B, T, D) stored as (T, B, D)
  Tensor x = randn({3, 1, 4}, g, kFloat64).transpose(0, 1).detach().requires_grad_();
  EXPECT_GRADCHECK(mha_fn(4, 2, true), mha_inputs(g, x, 4));
}

TEST(NnMultiHeadAttentionGradcheck, CrossAttention) {
  Generator g(11);
  std::vector<Tensor> in = mha_inputs(g, leaf({1, 2, 4}, g), 4);
  in.push_back(leaf({1, 3, 4}, g));  // key/value, Tk = 3
  EXPECT_GRADCHECK(mha_fn(4, 2, false, true), in);
}

// ---------------------------------------------------------------- AdditiveAttention

TEST(NnAdditiveAttention, ScoresWeightsAndContextByHand) {
  Generator g(12);
  const int64_t B = 2, T = 4, Dq = 3, Dk = 2, A = 5;
  nn::AdditiveAttention att(Dq, Dk, A, {.dtype = kFloat64, .generator = test::seeded(1)});
  Tensor s = randn({B, Dq}, g, kFloat64), h = randn({B, T, Dk}, g, kFloat64);
  nn::Attention a = att.forward(s, h);
  EXPECT_EQ(a.weights.shape(), (Shape{B, T}));
  EXPECT_EQ(a.output.shape(), (Shape{B, Dk}));
  expect_values(a.weights.sum({-1}), {1, 1}, 1e-14);
  // e_j = vᵀ tanh(W s + U h_j + b_U), α = softmax(e), context = Σ α_j h_j
  Vec W = values(att.w->weight), U = values(att.u->weight), bu = values(att.u->bias), v = values(att.v->weight);
  Vec sv = values(s), hv = values(h);
  for (int64_t b = 0; b < B; ++b) {
    Vec e(T), alpha(T), ctx(Dk, 0.0);
    double mx = -kInf, z = 0;
    for (int64_t j = 0; j < T; ++j) {
      e[j] = 0;
      for (int64_t a_ = 0; a_ < A; ++a_) {
        double pre = bu[a_];
        for (int64_t c = 0; c < Dq; ++c) pre += W[a_ * Dq + c] * sv[b * Dq + c];
        for (int64_t c = 0; c < Dk; ++c) pre += U[a_ * Dk + c] * hv[(b * T + j) * Dk + c];
        e[j] += v[a_] * std::tanh(pre);
      }
      mx = std::max(mx, e[j]);
    }
    for (int64_t j = 0; j < T; ++j) z += (alpha[j] = std::exp(e[j] - mx));
    for (int64_t j = 0; j < T; ++j) {
      alpha[j] /= z;
      for (int64_t c = 0; c < Dk; ++c) ctx[c] += alpha[j] * hv[(b * T + j) * Dk + c];
    }
    expect_values(a.weights.select(0, b), alpha, 1e-14);
    expect_values(a.output.select(0, b), ctx, 1e-14);
  }
}

TEST(NnAdditiveAttention, MaskBlocksPositions) {
  Generator g(13);
  nn::AdditiveAttention att(3, 2, 4, {.dtype = kFloat64, .generator = test::seeded(2)});
  Tensor s = randn({2, 3}, g, kFloat64), h = randn({2, 4, 2}, g, kFloat64);
  Tensor mask = tensor(std::vector<bool>{true, true, false, false, true, false, true, true}, {2, 4});
  nn::Attention a = att.forward(s, h, mask);
  std::vector<double> w = values(a.weights);
  EXPECT_EQ(w[2], 0.0);
  EXPECT_EQ(w[3], 0.0);
  EXPECT_EQ(w[5], 0.0);
  expect_values(a.weights.sum({-1}), {1, 1}, 1e-14);
  // equal to attending over the unmasked positions only (batch row 0: first two)
  nn::Attention a0 = att.forward(s.narrow(0, 0, 1), h.narrow(0, 0, 1).narrow(1, 0, 2));
  expect_close(a.output.narrow(0, 0, 1), a0.output, 1e-14);
  expect_error([&] { att.forward(s, h, ones({2, 4})); }, {"AdditiveAttention", "bool", "(2, 4)"});
  expect_error([&] { att.forward(s, randn({3, 4, 2}, g, kFloat64)); }, {"AdditiveAttention", "(2, 3)", "(3, 4, 2)"});
}

TEST(NnAdditiveAttention, Gradcheck) {
  Generator g(14);
  // inputs: s (B, Dq), h (B, T, Dk), W (A, Dq), U (A, Dk), b_U (A), v (1, A)
  auto f = [](Tensor mask) {
    return [mask](const std::vector<Tensor>& in) {
      nn::AdditiveAttention att(3, 2, 4, {.dtype = kFloat64, .generator = test::seeded(0)});
      att.w->weight = in[2];
      att.u->weight = in[3];
      att.u->bias = in[4];
      att.v->weight = in[5];
      nn::Attention a = att.forward(in[0], in[1], mask);
      return cat({a.output.flatten(), a.weights.flatten()});
    };
  };
  auto inputs = [&g](Tensor h) {
    return std::vector<Tensor>{leaf({2, 3}, g), h, leaf({4, 3}, g), leaf({4, 2}, g), leaf({4}, g), leaf({1, 4}, g)};
  };
  EXPECT_GRADCHECK(f(Tensor()), inputs(leaf({2, 3, 2}, g)));
  Tensor mask = tensor(std::vector<bool>{true, false, true, false, true, true}, {2, 3});
  EXPECT_GRADCHECK(f(mask), inputs(transposed_leaf({2, 3, 2}, g)));  // non-contiguous h
}

// ---------------------------------------------------------------- TransformerBlock

TEST(NnTransformerBlock, ShapeAndParameters) {
  nn::TransformerBlock block(8, 2, {.mlp_ratio = 4, .dropout = 0.0, .causal = true, .generator = test::seeded(1)});
  Tensor x = randn({2, 5, 8});
  EXPECT_EQ(block.forward(x).shape(), (Shape{2, 5, 8}));
  auto names = block.named_parameters();
  // ln1 (2) + attn (8) + ln2 (2) + fc1 (2) + fc2 (2)
  EXPECT_EQ(names.size(), 16u);
  EXPECT_EQ(block.fc1->weight.shape(), (Shape{32, 8}));
  EXPECT_EQ(block.fc2->weight.shape(), (Shape{8, 32}));
}

TEST(NnTransformerBlock, ZeroOutputProjectionsMakeItTheIdentity) {
  Generator g(15);
  nn::TransformerBlock block(8, 2, {.mlp_ratio = 4, .dropout = 0.0, .causal = true, .dtype = kFloat64, .generator = test::seeded(2)});
  {
    NoGradGuard no_grad;
    block.attn->w_o->weight.zero_();
    block.attn->w_o->bias.zero_();
    block.fc2->weight.zero_();
    block.fc2->bias.zero_();
  }
  Tensor x = randn({2, 3, 8}, g, kFloat64);
  expect_close(block.forward(x), x, 0.0);  // both residual branches add exactly 0
  // with only fc2 zeroed, the block is x + attn(ln1(x))
  nn::TransformerBlock b2(8, 2, {.mlp_ratio = 4, .dropout = 0.0, .causal = true, .dtype = kFloat64, .generator = test::seeded(3)});
  {
    NoGradGuard no_grad;
    b2.fc2->weight.zero_();
    b2.fc2->bias.zero_();
  }
  expect_close(b2.forward(x), x + b2.attn->forward(b2.ln1->forward(x)), 1e-14);
}

TEST(NnTransformerBlock, CausalThroughTheWholeBlock) {
  Generator g(16);
  const int64_t T = 4;
  nn::TransformerBlock block(4, 2, {.mlp_ratio = 2, .dropout = 0.0, .causal = true, .dtype = kFloat64, .generator = test::seeded(4)});
  Tensor x = leaf({1, T, 4}, g);
  Tensor y = block.forward(x);
  for (int64_t t = 0; t < T; ++t) {
    x.set_grad(Tensor());
    y.select(1, t).sum().backward(Tensor(), true);
    for (int64_t s = t + 1; s < T; ++s)
      for (double v : values(x.grad().select(1, s))) EXPECT_EQ(v, 0.0);
  }
}

TEST(NnTransformerBlock, DropoutOnlyInTraining) {
  Generator g(17);
  nn::TransformerBlock block(8, 2, {.mlp_ratio = 4, .dropout = 0.5, .causal = true, .dtype = kFloat64, .generator = test::seeded(5)});
  Tensor x = randn({2, 3, 8}, g, kFloat64);
  Tensor train1 = block.forward(x), train2 = block.forward(x);
  EXPECT_NE(values(train1), values(train2));  // a fresh mask each call
  block.eval();
  EXPECT_FALSE(block.drop->is_training());
  Tensor eval1 = block.forward(x), eval2 = block.forward(x);
  expect_close(eval1, eval2, 0.0);
  EXPECT_NE(values(train1), values(eval1));
  // eval with p = 0.5 equals a p = 0 block with the same weights (same seed)
  nn::TransformerBlock no_drop(8, 2, {.mlp_ratio = 4, .dropout = 0.0, .causal = true, .dtype = kFloat64, .generator = test::seeded(5)});
  expect_close(no_drop.forward(x), eval1, 1e-14);
}

TEST(NnTransformerBlock, Gradcheck) {
  Generator g(18);
  // inputs: x (B, T, D), ln1.weight, attn.w_q.weight, attn.w_v.bias, ln2.bias, fc1.weight, fc2.weight
  auto f = [](bool causal) {
    return [causal](const std::vector<Tensor>& in) {
      nn::TransformerBlock block(4, 2, {.mlp_ratio = 2, .dropout = 0.0, .causal = causal, .dtype = kFloat64, .generator = test::seeded(6)});
      block.ln1->weight = in[1];
      block.attn->w_q->weight = in[2];
      block.attn->w_v->bias = in[3];
      block.ln2->bias = in[4];
      block.fc1->weight = in[5];
      block.fc2->weight = in[6];
      return block.forward(in[0]);
    };
  };
  auto inputs = [&g](Tensor x) {
    return std::vector<Tensor>{x, leaf({4}, g), leaf({4, 4}, g), leaf({4}, g), leaf({4}, g), leaf({8, 4}, g),
                               leaf({4, 8}, g)};
  };
  EXPECT_GRADCHECK(f(true), inputs(leaf({1, 3, 4}, g)));
  Tensor x = randn({3, 2, 4}, g, kFloat64).transpose(0, 1).detach().requires_grad_();  // non-contiguous
  EXPECT_GRADCHECK(f(false), inputs(x));
}

// ---- scaled_softmax: the fused op against the ops it replaces ----

namespace {
// softmax(masked_fill(x * scale, future, -inf), -1): the reference.
ember::Tensor scaled_softmax_reference(const ember::Tensor& x, double scale, bool causal) {
  using namespace ember;
  Tensor s = x * scale;
  if (causal) s = masked_fill(s, kernel::triu(ones({x.size(-2), x.size(-1)}, kBool), 1), -INFINITY);
  return softmax(s, -1);
}
}  // namespace

TEST(NnScaledSoftmax, EqualsTheComposedOpsForwardAndBackward) {
  using namespace ember;
  for (bool causal : {false, true}) {
    for (Shape shape : {Shape{4, 4}, Shape{2, 3, 5, 5}, Shape{2, 3, 6}}) {  // square, batched, Tq < Tk
      SCOPED_TRACE(::testing::Message() << "causal " << causal << " shape " << shape_str(shape));
      Generator g(21);
      Tensor x = randn(shape, g, kFloat64).requires_grad_();
      Tensor w = randn(shape, g, kFloat64);
      Tensor fused = scaled_softmax(x, 0.35, causal);
      (fused * w).sum().backward();
      const std::vector<double> grad_fused = x.grad().to_vector<double>();
      x.set_grad(Tensor());
      Tensor ref = scaled_softmax_reference(x, 0.35, causal);
      (ref * w).sum().backward();
      const std::vector<double> f = fused.to_vector<double>(), r = ref.to_vector<double>();
      const std::vector<double> gr = x.grad().to_vector<double>();
      for (size_t i = 0; i < f.size(); ++i) {
        ASSERT_NEAR(f[i], r[i], 1e-15) << i;
        ASSERT_NEAR(grad_fused[i], gr[i], 1e-14) << i;
      }
    }
  }
}

TEST(NnScaledSoftmax, CausalRowsSeeOnlyThePast) {
  using namespace ember;
  Tensor w = scaled_softmax(zeros({3, 3}), 1.0, true);  // equal scores: uniform over the visible keys
  const std::vector<double> v = w.to_vector<double>();
  const std::vector<double> want = {1, 0, 0, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-7) << i;
}

TEST(NnScaledSoftmax, Errors) {
  using namespace ember;
  EXPECT_THROW(scaled_softmax(zeros({3}), 1.0, true), Error);        // causal needs (…, Tq, Tk)
  EXPECT_THROW(scaled_softmax(zeros({2, 2}), 0.0, false), Error);    // the scale must be positive
  EXPECT_THROW(scaled_softmax(zeros({2, 2}), -1.0, false), Error);
  EXPECT_THROW(scaled_softmax(zeros({2, 2}), NAN, false), Error);
  EXPECT_THROW(scaled_softmax(zeros({2, 2}, kInt64), 1.0, false), Error);
  try {
    scaled_softmax(zeros({3}), 1.0, true);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scaled_softmax"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(3)"), std::string::npos) << e.what();
  }
}
