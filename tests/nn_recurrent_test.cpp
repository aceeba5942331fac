// nn/recurrent.h: RNNCell, LSTMCell, GRUCell against single steps computed
// by hand with scalar C++ math; the lesson-C numbers through autograd; the
// sequence helpers against a manual unroll; float64 gradchecks of every cell
// and every unrolled sequence (through the initial state too); shape errors.
//
// Legend: B batch, T time steps, I input size, H hidden size.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember.h"
#include "nn/recurrent.h"
#include "test_util.h"

using namespace ember;
using ember::test::expect_close;
using ember::test::expect_error;
using ember::test::expect_values;
using ember::test::values;

namespace {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;  // row-major rows

void set(Tensor& p, const Vec& v) {
  NoGradGuard no_grad;
  p.copy_(tensor(v, p.shape()));
}
Vec flat(const Mat& m) {
  Vec v;
  for (const Vec& r : m) v.insert(v.end(), r.begin(), r.end());
  return v;
}
// y = M x (+ b)
Vec matvec(const Mat& m, const Vec& x, const Vec& b = {}) {
  Vec y(m.size(), 0.0);
  for (size_t o = 0; o < m.size(); ++o) {
    for (size_t i = 0; i < x.size(); ++i) y[o] += m[o][i] * x[i];
    if (!b.empty()) y[o] += b[o];
  }
  return y;
}
double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

Tensor leaf(const Shape& s, Generator& g, double scale = 1.0) {
  return (randn(s, g, kFloat64) * scale).detach().requires_grad_();
}
Tensor transposed_leaf(const Shape& s, Generator& g) {
  return randn({s[1], s[0]}, g, kFloat64).t().detach().requires_grad_();
}

}  // namespace

// ---------------------------------------------------------------- single steps

TEST(NnRNNCell, SingleStepByHand) {
  nn::RNNCell cell(2, 2, {.dtype = kFloat64, .generator = test::seeded(0)});
  const Mat Wx = {{0.5, -0.3}, {0.2, 0.8}}, Wh = {{0.1, 0.4}, {-0.6, 0.3}};
  const Vec b = {0.05, -0.1};
  set(cell.w_x->weight, flat(Wx));
  set(cell.w_x->bias, b);
  set(cell.w_h->weight, flat(Wh));
  const Vec x = {1.0, -2.0}, h = {0.3, -0.7};
  // h_t = tanh(W_x x + W_h h + b)
  Vec a = matvec(Wx, x, b), ah = matvec(Wh, h), expected;
  for (int k = 0; k < 2; ++k) expected.push_back(std::tanh(a[k] + ah[k]));
  Tensor out = cell.forward(tensor(x, {1, 2}), tensor(h, {1, 2}));
  EXPECT_EQ(out.shape(), (Shape{1, 2}));
  expect_values(out, expected, 1e-15);
  EXPECT_EQ(cell.hidden_size(), 2);
  EXPECT_EQ(cell.named_parameters().size(), 3u);  // w_x.weight, w_x.bias, w_h.weight
}

TEST(NnLSTMCell, SingleStepByHand) {
  // I = 2, H = 2: weight_ih (8, 2), weight_hh (8, 2), rows in gate order i, f, g, o
  nn::LSTMCell cell(2, 2, {.dtype = kFloat64, .generator = test::seeded(0)});
  Mat Wih, Whh;
  Vec bih, bhh;
  for (int r = 0; r < 8; ++r) {
    Wih.push_back({0.1 * (r + 1) - 0.4, 0.05 * r - 0.2});
    Whh.push_back({0.3 - 0.07 * r, 0.02 * r * r - 0.5});
    bih.push_back(0.01 * r - 0.03);
    bhh.push_back(0.2 - 0.04 * r);
  }
  set(cell.weight_ih, flat(Wih));
  set(cell.weight_hh, flat(Whh));
  set(cell.bias_ih, bih);
  set(cell.bias_hh, bhh);
  const Vec x = {0.7, -1.2}, h = {0.4, 0.1}, c = {-0.5, 0.9};
  Vec pre = matvec(Wih, x, bih), pre_h = matvec(Whh, h, bhh);
  for (int r = 0; r < 8; ++r) pre[r] += pre_h[r];
  Vec c_t(2), h_t(2);
  for (int k = 0; k < 2; ++k) {
    double i = sig(pre[k]), f = sig(pre[2 + k]), g = std::tanh(pre[4 + k]), o = sig(pre[6 + k]);
    c_t[k] = f * c[k] + i * g;
    h_t[k] = o * std::tanh(c_t[k]);
  }
  auto [h_out, c_out] = cell.forward(tensor(x, {1, 2}), {tensor(h, {1, 2}), tensor(c, {1, 2})});
  expect_values(c_out, c_t, 1e-15);
  expect_values(h_out, h_t, 1e-15);
  EXPECT_EQ(cell.weight_ih.shape(), (Shape{8, 2}));
  EXPECT_EQ(cell.weight_hh.shape(), (Shape{8, 2}));
  auto names = cell.named_parameters();
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0].first, "weight_ih");
  EXPECT_EQ(names[3].first, "bias_hh");
}

TEST(NnLSTMCell, InitBoundIsOneOverSqrtHidden) {
  nn::LSTMCell cell(3, 16, {.generator = test::seeded(1)});
  for (auto& [name, p] : cell.named_parameters())
    for (double v : values(p)) EXPECT_LE(std::abs(v), 0.25) << name;
}

TEST(NnGRUCell, SingleStepByHandLessonConvention) {
  nn::GRUCell cell(2, 2, {.dtype = kFloat64, .generator = test::seeded(0)});
  const Mat Wz = {{0.3, -0.2}, {0.5, 0.1}}, Wr = {{-0.4, 0.6}, {0.2, 0.2}}, Wh = {{0.7, -0.1}, {0.3, -0.8}};
  const Mat Uz = {{0.1, 0.2}, {-0.3, 0.4}}, Ur = {{0.5, -0.5}, {0.1, 0.3}}, Uh = {{-0.2, 0.6}, {0.9, 0.1}};
  const Vec bz = {0.1, -0.2}, br = {0.0, 0.3}, bh = {-0.1, 0.05};
  set(cell.w_z->weight, flat(Wz));
  set(cell.w_r->weight, flat(Wr));
  set(cell.w_h->weight, flat(Wh));
  set(cell.u_z->weight, flat(Uz));
  set(cell.u_r->weight, flat(Ur));
  set(cell.u_h->weight, flat(Uh));
  set(cell.w_z->bias, bz);
  set(cell.w_r->bias, br);
  set(cell.w_h->bias, bh);
  const Vec x = {1.5, -0.5}, h = {0.6, -0.2};
  // z = σ(W_z x + U_z h + b_z), r = σ(W_r x + U_r h + b_r)
  // h̃ = tanh(W_h x + U_h (r ⊙ h) + b_h), h_t = (1 - z) ⊙ h + z ⊙ h̃
  Vec az = matvec(Wz, x, bz), uz = matvec(Uz, h), ar = matvec(Wr, x, br), ur = matvec(Ur, h);
  Vec z(2), r(2), rh(2), expected(2);
  for (int k = 0; k < 2; ++k) {
    z[k] = sig(az[k] + uz[k]);
    r[k] = sig(ar[k] + ur[k]);
    rh[k] = r[k] * h[k];
  }
  Vec ah = matvec(Wh, x, bh), uh = matvec(Uh, rh);
  for (int k = 0; k < 2; ++k) expected[k] = (1 - z[k]) * h[k] + z[k] * std::tanh(ah[k] + uh[k]);
  Tensor out = cell.forward(tensor(x, {1, 2}), tensor(h, {1, 2}));
  expect_values(out, expected, 1e-15);
  // z = 0 keeps the old state: a huge negative z bias
  set(cell.w_z->bias, {-1e3, -1e3});
  expect_values(cell.forward(tensor(x, {1, 2}), tensor(h, {1, 2})), h, 1e-15);
}

TEST(NnRecurrent, CellsHandleABatchRowByRow) {
  Generator g(3);
  nn::GRUCell gru(3, 4, {.dtype = kFloat64, .generator = test::seeded(5)});
  nn::LSTMCell lstm(3, 4, {.dtype = kFloat64, .generator = test::seeded(6)});
  nn::RNNCell rnn(3, 4, {.dtype = kFloat64, .generator = test::seeded(7)});
  Tensor x = randn({3, 3}, g, kFloat64), h = randn({3, 4}, g, kFloat64), c = randn({3, 4}, g, kFloat64);
  Tensor yg = gru.forward(x, h), yr = rnn.forward(x, h);
  auto [hl, cl] = lstm.forward(x, {h, c});
  for (int64_t b = 0; b < 3; ++b) {
    auto row = [b](const Tensor& t) { return t.narrow(0, b, 1); };
    expect_close(row(yg), gru.forward(row(x), row(h)), 1e-14);
    expect_close(row(yr), rnn.forward(row(x), row(h)), 1e-14);
    auto [h1, c1] = lstm.forward(row(x), {row(h), row(c)});
    expect_close(row(hl), h1, 1e-14);
    expect_close(row(cl), c1, 1e-14);
  }
}

// ---------------------------------------------------------------- lesson C numbers

TEST(NnRecurrentLesson, LinearRnnValuesAndGradient) {
  // h_t = 0.5 h_{t-1} + x_t, h_0 = 0, x = (2, 0, 1)
  Tensor x = tensor(Vec{2, 0, 1}).requires_grad_();
  Tensor h = zeros({}, kFloat64);
  Vec hs;
  for (int64_t t = 0; t < 3; ++t) {
    h = h * 0.5 + x.select(0, t);
    hs.push_back(h.item<double>());
  }
  EXPECT_EQ(hs, (Vec{2, 1, 1.5}));
  h.backward();
  expect_values(x.grad(), {0.25, 0.5, 1.0}, 0.0);  // h_3 = 0.25 x_1 + 0.5 x_2 + x_3
}

TEST(NnRecurrentLesson, VanishingGradientThroughTime) {
  // local derivative 0.5 per step, 10 steps: 0.5^10 ≈ 0.00098
  Tensor x = zeros({10}, kFloat64).requires_grad_();
  Tensor h = zeros({}, kFloat64);
  for (int64_t t = 0; t < 10; ++t) h = h * 0.5 + x.select(0, t);
  h.backward();
  std::vector<double> gr = values(x.grad());
  EXPECT_DOUBLE_EQ(gr[0], std::pow(0.5, 9));  // x_1 enters 9 steps before h_10
  // through the initial state: 10 factors of 0.5
  Tensor h0 = tensor(Vec{1.0}).requires_grad_();
  Tensor hh = h0;
  for (int t = 0; t < 10; ++t) hh = hh * 0.5;
  hh.sum().backward();
  EXPECT_DOUBLE_EQ(h0.grad().item<double>(), std::pow(0.5, 10));
  EXPECT_NEAR(h0.grad().item<double>(), 0.00098, 5e-6);
  // the same with a 1-unit RNN cell: tanh(0.5 h) near 0 has derivative ≈ 0.5
  // per step, so the 10-step gradient is a product of ten numbers ≤ 0.5
  nn::RNNCell cell(1, 1, {.dtype = kFloat64, .generator = test::seeded(0)});
  set(cell.w_x->weight, {0.0});
  set(cell.w_x->bias, {0.0});
  set(cell.w_h->weight, {0.5});
  Tensor s0 = tensor(Vec{1e-3}, {1, 1}).requires_grad_();
  Tensor s = s0;
  for (int t = 0; t < 10; ++t) s = cell.forward(zeros({1, 1}, kFloat64), s);
  s.sum().backward();
  EXPECT_NEAR(s0.grad().item<double>(), std::pow(0.5, 10), 1e-9);
  EXPECT_LE(s0.grad().item<double>(), std::pow(0.5, 10));
}

TEST(NnRecurrentLesson, LstmWorkedStep) {
  // c_{t-1} = 0.8, f = 0.9, i = 0.2, g = 0.5  ->  c_t = 0.72 + 0.10 = 0.82
  nn::LSTMCell cell(1, 1, {.dtype = kFloat64, .generator = test::seeded(0)});
  auto logit = [](double p) { return std::log(p / (1 - p)); };
  {
    NoGradGuard no_grad;
    cell.weight_ih.zero_();
    cell.weight_hh.zero_();
    cell.bias_hh.zero_();
    cell.bias_ih.copy_(tensor(Vec{logit(0.2), logit(0.9), std::atanh(0.5), 0.0}));  // i, f, g, o
  }
  Tensor c_prev = full({1, 1}, 0.8, kFloat64).requires_grad_();
  auto [h_t, c_t] = cell.forward(zeros({1, 1}, kFloat64), {zeros({1, 1}, kFloat64), c_prev});
  EXPECT_NEAR(c_t.item<double>(), 0.82, 1e-15);
  EXPECT_NEAR(h_t.item<double>(), 0.5 * std::tanh(0.82), 1e-15);  // o = sigmoid(0) = 0.5
  // dc_t/dc_{t-1} = f = 0.9: the forget gate is the gradient highway
  c_t.backward();
  EXPECT_NEAR(c_prev.grad().item<double>(), 0.9, 1e-15);
}

// ---------------------------------------------------------------- sequence helpers

TEST(NnRecurrentSequence, ShapesAndZeroInitialState) {
  Generator g(4);
  Tensor x = randn({2, 5, 3}, g, kFloat64);
  nn::RNN rnn(3, 4, {.dtype = kFloat64, .generator = test::seeded(1)});
  nn::GRU gru(3, 4, {.dtype = kFloat64, .generator = test::seeded(2)});
  nn::LSTM lstm(3, 4, {.dtype = kFloat64, .generator = test::seeded(3)});
  auto [yr, hr] = rnn.forward(x);
  auto [yg, hg] = gru.forward(x);
  auto [yl, state] = lstm.forward(x);
  for (const Tensor& y : {yr, yg, yl}) EXPECT_EQ(y.shape(), (Shape{2, 5, 4}));
  for (const Tensor& h : {hr, hg, state.h, state.c}) EXPECT_EQ(h.shape(), (Shape{2, 4}));
  // the last output is the last state
  expect_close(yr.select(1, 4), hr, 0.0);
  expect_close(yg.select(1, 4), hg, 0.0);
  expect_close(yl.select(1, 4), state.h, 0.0);
  // a missing initial state is zeros
  Tensor z = zeros({2, 4}, kFloat64);
  expect_close(rnn.forward(x, z).first, yr, 0.0);
  expect_close(gru.forward(x, z).first, yg, 0.0);
  expect_close(lstm.forward(x, nn::LSTMState{z, z}).first, yl, 0.0);
  // T = 0: empty outputs, the initial state comes back
  Tensor h0 = randn({2, 4}, g, kFloat64);
  auto [y0, h_last] = rnn.forward(zeros({2, 0, 3}, kFloat64), h0);
  EXPECT_EQ(y0.shape(), (Shape{2, 0, 4}));
  expect_close(h_last, h0, 0.0);
}

TEST(NnRecurrentSequence, EqualsManualUnrollWithInitialState) {
  Generator g(5);
  Tensor x = randn({2, 4, 3}, g, kFloat64);
  Tensor h0 = randn({2, 5}, g, kFloat64), c0 = randn({2, 5}, g, kFloat64);
  nn::RNN rnn(3, 5, {.dtype = kFloat64, .generator = test::seeded(1)});
  nn::GRU gru(3, 5, {.dtype = kFloat64, .generator = test::seeded(2)});
  nn::LSTM lstm(3, 5, {.dtype = kFloat64, .generator = test::seeded(3)});
  auto [yr, hr] = rnn.forward(x, h0);
  auto [yg, hg] = gru.forward(x, h0);
  auto [yl, state] = lstm.forward(x, nn::LSTMState{h0, c0});
  Tensor h_r = h0, h_g = h0, h_l = h0, c_l = c0;
  for (int64_t t = 0; t < 4; ++t) {
    Tensor xt = x.select(1, t);
    h_r = rnn.cell->forward(xt, h_r);
    h_g = gru.cell->forward(xt, h_g);
    nn::LSTMState next = lstm.cell->forward(xt, {h_l, c_l});
    h_l = next.h;
    c_l = next.c;
    expect_close(yr.select(1, t), h_r, 0.0);
    expect_close(yg.select(1, t), h_g, 0.0);
    expect_close(yl.select(1, t), h_l, 0.0);
  }
  expect_close(hr, h_r, 0.0);
  expect_close(hg, h_g, 0.0);
  expect_close(state.h, h_l, 0.0);
  expect_close(state.c, c_l, 0.0);
}

TEST(NnRecurrentSequence, ParameterNames) {
  nn::LSTM lstm(3, 4);
  auto names = lstm.named_parameters();
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0].first, "cell.weight_ih");
  nn::GRU gru(3, 4);
  EXPECT_EQ(gru.named_parameters().size(), 9u);  // 3 W with bias + 3 U
  EXPECT_EQ(gru.named_parameters()[0].first, "cell.w_z.weight");
}

// ---------------------------------------------------------------- gradchecks

TEST(NnRecurrentGradcheck, RNNCell) {
  Generator g(10);
  // inputs: x (B, I), h (B, H), W_x (H, I), b (H), W_h (H, H)
  auto f = [](const std::vector<Tensor>& in) {
    nn::RNNCell cell(3, 2, {.dtype = kFloat64, .generator = test::seeded(0)});
    cell.w_x->weight = in[2];
    cell.w_x->bias = in[3];
    cell.w_h->weight = in[4];
    return cell.forward(in[0], in[1]);
  };
  EXPECT_GRADCHECK(f, {leaf({2, 3}, g), leaf({2, 2}, g), leaf({2, 3}, g), leaf({2}, g), leaf({2, 2}, g)});
  EXPECT_GRADCHECK(f, {transposed_leaf({2, 3}, g), transposed_leaf({2, 2}, g), transposed_leaf({2, 3}, g),
                       leaf({2}, g), leaf({2, 2}, g)});
}

TEST(NnRecurrentGradcheck, LSTMCell) {
  Generator g(11);
  // inputs: x (B, I), h, c (B, H), W_ih (4H, I), W_hh (4H, H), b_ih, b_hh (4H); output [h_t, c_t]
  auto f = [](const std::vector<Tensor>& in) {
    nn::LSTMCell cell(3, 2, {.dtype = kFloat64, .generator = test::seeded(0)});
    cell.weight_ih = in[3];
    cell.weight_hh = in[4];
    cell.bias_ih = in[5];
    cell.bias_hh = in[6];
    auto [h, c] = cell.forward(in[0], {in[1], in[2]});
    return cat({h, c}, 1);
  };
  EXPECT_GRADCHECK(f, {leaf({2, 3}, g), leaf({2, 2}, g), leaf({2, 2}, g), leaf({8, 3}, g), leaf({8, 2}, g),
                       leaf({8}, g), leaf({8}, g)});
  EXPECT_GRADCHECK(f, {transposed_leaf({2, 3}, g), transposed_leaf({2, 2}, g), transposed_leaf({2, 2}, g),
                       transposed_leaf({8, 3}, g), leaf({8, 2}, g), leaf({8}, g), leaf({8}, g)});
}

TEST(NnRecurrentGradcheck, GRUCell) {
  Generator g(12);
  // inputs: x (B, I), h (B, H), then W_z, W_r, W_h (H, I), b_z, b_r, b_h (H), U_z, U_r, U_h (H, H)
  auto f = [](const std::vector<Tensor>& in) {
    nn::GRUCell cell(3, 2, {.dtype = kFloat64, .generator = test::seeded(0)});
    cell.w_z->weight = in[2];
    cell.w_r->weight = in[3];
    cell.w_h->weight = in[4];
    cell.w_z->bias = in[5];
    cell.w_r->bias = in[6];
    cell.w_h->bias = in[7];
    cell.u_z->weight = in[8];
    cell.u_r->weight = in[9];
    cell.u_h->weight = in[10];
    return cell.forward(in[0], in[1]);
  };
  std::vector<Tensor> in = {transposed_leaf({2, 3}, g), leaf({2, 2}, g)};
  for (int k = 0; k < 3; ++k) in.push_back(leaf({2, 3}, g));
  for (int k = 0; k < 3; ++k) in.push_back(leaf({2}, g));
  for (int k = 0; k < 3; ++k) in.push_back(transposed_leaf({2, 2}, g));
  EXPECT_GRADCHECK(f, in);
}

TEST(NnRecurrentGradcheck, UnrolledRNNThroughInitialState) {
  Generator g(13);
  // inputs: x (B, T, I), h0 (B, H), W_x, b, W_h
  auto f = [](const std::vector<Tensor>& in) {
    nn::RNN rnn(2, 3, {.dtype = kFloat64, .generator = test::seeded(0)});
    rnn.cell->w_x->weight = in[2];
    rnn.cell->w_x->bias = in[3];
    rnn.cell->w_h->weight = in[4];
    auto [y, h] = rnn.forward(in[0], in[1]);
    return cat({y.flatten(), h.flatten()});
  };
  EXPECT_GRADCHECK(f, {leaf({2, 3, 2}, g), leaf({2, 3}, g), leaf({3, 2}, g), leaf({3}, g), leaf({3, 3}, g, 0.5)});
  // non-contiguous sequence: (B, T, I) stored as (T, B, I)
  Tensor x = randn({3, 2, 2}, g, kFloat64).transpose(0, 1).detach().requires_grad_();
  EXPECT_GRADCHECK(f, {x, leaf({2, 3}, g), leaf({3, 2}, g), leaf({3}, g), leaf({3, 3}, g, 0.5)});
}

TEST(NnRecurrentGradcheck, UnrolledLSTMThroughInitialState) {
  Generator g(14);
  // inputs: x (B, T, I), h0, c0 (B, H), W_ih, W_hh, b_ih, b_hh
  auto f = [](const std::vector<Tensor>& in) {
    nn::LSTM lstm(2, 2, {.dtype = kFloat64, .generator = test::seeded(0)});
    lstm.cell->weight_ih = in[3];
    lstm.cell->weight_hh = in[4];
    lstm.cell->bias_ih = in[5];
    lstm.cell->bias_hh = in[6];
    auto [y, state] = lstm.forward(in[0], nn::LSTMState{in[1], in[2]});
    return cat({y.flatten(), state.h.flatten(), state.c.flatten()});
  };
  Tensor x = randn({3, 2, 2}, g, kFloat64).transpose(0, 1).detach().requires_grad_();  // non-contiguous
  EXPECT_GRADCHECK(f, {x, leaf({2, 2}, g), leaf({2, 2}, g), leaf({8, 2}, g), leaf({8, 2}, g), leaf({8}, g),
                       leaf({8}, g)});
  // zero initial state (nothing to differentiate there)
  auto f0 = [](const std::vector<Tensor>& in) {
    nn::LSTM lstm(2, 2, {.dtype = kFloat64, .generator = test::seeded(0)});
    lstm.cell->weight_ih = in[1];
    lstm.cell->weight_hh = in[2];
    return lstm.forward(in[0]).first;
  };
  EXPECT_GRADCHECK(f0, {leaf({1, 4, 2}, g), leaf({8, 2}, g), leaf({8, 2}, g)});
}

TEST(NnRecurrentGradcheck, UnrolledGRUThroughInitialState) {
  Generator g(15);
  // inputs: x (B, T, I), h0 (B, H), W_h (H, I), U_z (H, H), U_h (H, H); the others keep their init
  auto f = [](const std::vector<Tensor>& in) {
    nn::GRU gru(2, 3, {.dtype = kFloat64, .generator = test::seeded(1)});
    gru.cell->w_h->weight = in[2];
    gru.cell->u_z->weight = in[3];
    gru.cell->u_h->weight = in[4];
    auto [y, h] = gru.forward(in[0], in[1]);
    return cat({y.flatten(), h.flatten()});
  };
  Tensor x = randn({3, 2, 2}, g, kFloat64).transpose(0, 1).detach().requires_grad_();
  EXPECT_GRADCHECK(f, {x, leaf({2, 3}, g), leaf({3, 2}, g), leaf({3, 3}, g), leaf({3, 3}, g)});
}

// ---------------------------------------------------------------- errors

TEST(NnRecurrentErrors, WrongShapesNameTheExpectedShape) {
  nn::RNNCell rnn(3, 4);
  nn::LSTMCell lstm(3, 4);
  nn::GRUCell gru(3, 4);
  expect_error([&] { rnn.forward(zeros({2, 5}), zeros({2, 4})); }, {"RNNCell", "(B, 3)", "(2, 5)"});
  expect_error([&] { rnn.forward(zeros({2, 3}), zeros({3, 4})); }, {"RNNCell", "(2, 4)", "(3, 4)"});
  expect_error([&] { gru.forward(zeros({2, 3}), zeros({2, 5})); }, {"GRUCell", "(2, 4)", "(2, 5)"});
  expect_error([&] { gru.forward(zeros({3}), zeros({1, 4})); }, {"GRUCell", "(B, 3)", "(3)"});
  expect_error([&] { lstm.forward(zeros({2, 3}), {zeros({2, 4}), zeros({2, 3})}); }, {"LSTMCell", "(2, 4)", "(2, 3)"});
  nn::LSTM seq(3, 4);
  expect_error([&] { seq.forward(zeros({2, 3})); }, {"LSTM", "(B, T, 3)", "(2, 3)"});
  nn::GRU gseq(3, 4);
  expect_error([&] { gseq.forward(zeros({2, 5, 2})); }, {"GRU", "(B, T, 3)", "(2, 5, 2)"});
  nn::RNN rseq(3, 4);
  expect_error([&] { rseq.forward(zeros({2, 5, 3}), zeros({1, 4})); }, {"RNNCell", "(2, 4)", "(1, 4)"});
  expect_error([] { nn::LSTMCell bad(0, 4); }, {"LSTMCell", "input_size 0"});
}
