// Lesson C, from RNN to Transformer, with every number computed by ember.
// Each section prints what ember computed beside the lesson's value; the
// derivatives come from backward(), not from the formulas.
//
//   ./build/examples/sequence_models
#include <cmath>
#include <cstdio>
#include <iostream>

#include "common/program.h"
#include "ember.h"
#include "nn/attention.h"
#include "nn/recurrent.h"

using namespace ember;

namespace {

int failures = 0;

// Prints "label: ember value (lesson value)" and counts mismatches.
void show(const char* label, double got, double lesson, double tol = 5e-4) {
  bool ok = std::abs(got - lesson) <= tol;
  if (!ok) ++failures;
  std::printf("  %-34s ember %10.5f   lesson %10.5f   %s\n", label, got, lesson, ok ? "ok" : "MISMATCH");
}

void linear_rnn() {
  std::puts("1. A linear RNN: h_t = 0.5 h_{t-1} + x_t, h_0 = 0, x = (2, 0, 1)");
  Tensor x = tensor(std::vector<double>{2, 0, 1}).requires_grad_();
  Tensor h = zeros({}, kFloat64);
  const double lesson_h[] = {2, 1, 1.5};
  for (int64_t t = 0; t < 3; ++t) {
    h = h * 0.5 + x.select(0, t);  // the same weight 0.5 at every step
    std::string label = "h_" + std::to_string(t + 1);
    show(label.c_str(), h.item<double>(), lesson_h[t]);
  }
  // h_3 = 0.25 x_1 + 0.5 x_2 + x_3: backward through the three steps
  h.backward();
  std::vector<double> g = x.grad().to_vector<double>();
  const double lesson_g[] = {0.25, 0.5, 1.0};
  for (int i = 0; i < 3; ++i) {
    std::string label = "dh_3/dx_" + std::to_string(i + 1);
    show(label.c_str(), g[i], lesson_g[i]);
  }
}

void vanishing_gradient() {
  std::puts("\n2. Backpropagation through time: the gradient is a product of local derivatives");
  for (double factor : {0.5, 1.5}) {
    Tensor h0 = tensor(std::vector<double>{1.0}).requires_grad_();
    Tensor h = h0;
    for (int t = 0; t < 10; ++t) h = h * factor;  // local derivative `factor` per step
    h.sum().backward();
    double got = h0.grad().item<double>();
    std::string label = "factor " + std::to_string(factor).substr(0, 3) + ", 10 steps: dh_10/dh_0";
    show(label.c_str(), got, std::pow(factor, 10), 1e-9 * std::pow(factor, 10) + 1e-12);
  }
  std::puts("  0.5^10 ~ 0.00098: the signal from 10 steps back has all but vanished;");
  std::puts("  1.5^10 ~ 57.7: the same chain with a factor above 1 explodes instead.");
}

void lstm_step() {
  std::puts("\n3. One LSTM step: c_t = f * c_{t-1} + i * g with f=0.9, i=0.2, g=0.5, c_{t-1}=0.8");
  // A 1-unit cell whose weights are zero, so each gate is its bias:
  // i = sigmoid(b_i) = 0.2, f = sigmoid(b_f) = 0.9, g = tanh(b_g) = 0.5.
  nn::LSTMCell cell(1, 1, {.dtype = kFloat64});
  {
    NoGradGuard no_grad;  // setting parameters is not part of the graph
    cell.weight_ih.zero_();
    cell.weight_hh.zero_();
    cell.bias_hh.zero_();
    auto logit = [](double p) { return std::log(p / (1 - p)); };
    cell.bias_ih.copy_(tensor(std::vector<double>{logit(0.2), logit(0.9), std::atanh(0.5), 0.0}));  // i, f, g, o
  }
  Tensor x = zeros({1, 1}, kFloat64), h = zeros({1, 1}, kFloat64);
  Tensor c_prev = full({1, 1}, 0.8, kFloat64);
  nn::LSTMState next = cell.forward(x, {h, c_prev});
  std::printf("  f * c_prev = 0.9 * 0.8 = 0.72,  i * g = 0.2 * 0.5 = 0.10\n");
  show("c_t", next.c.item<double>(), 0.82);
  show("h_t = o * tanh(c_t), o = 0.5", next.h.item<double>(), 0.5 * std::tanh(0.82));
}

void two_score_attention() {
  std::puts("\n4. Attention over two encoder states: the scores are 2 and 1, the values 10 and 4");
  // With d = 1 the scaled dot product is q*k: q = 1 and the keys 2 and 1 give the scores 2 and 1.
  Tensor q = tensor(std::vector<double>{1}, {1, 1});
  Tensor k = tensor(std::vector<double>{2, 1}, {2, 1});
  Tensor v = tensor(std::vector<double>{10, 4}, {2, 1});
  nn::Attention a = nn::scaled_dot_product_attention(q, k, v);
  std::vector<double> w = a.weights.to_vector<double>();
  show("alpha_1 = softmax([2, 1])[0]", w[0], 0.731);
  show("alpha_2", w[1], 0.269);
  show("context = 0.731*10 + 0.269*4", a.output.item<double>(), 8.386, 1e-3);
}

void causal_self_attention() {
  std::puts("\n5. Causal self-attention: position t may not look at positions after t");
  const int64_t T = 5, D = 8;
  Generator gen(7);
  nn::MultiHeadAttention attn(D, /*heads=*/1, {.causal = true, .dtype = kFloat64, .generator = &gen});
  Tensor x = randn({1, T, D}, gen, kFloat64).requires_grad_();
  nn::Attention a = attn.forward(x, x, x);
  std::cout << "  attention weights (query rows, key columns); the upper triangle is 0:\n";
  Tensor w = a.weights.select(0, 0).select(0, 0);  // (T, T)
  for (int64_t i = 0; i < T; ++i) {
    std::printf("   ");
    for (int64_t j = 0; j < T; ++j) std::printf(" %6.3f", w.select(0, i).select(0, j).item<double>());
    std::printf("\n");
  }
  // d output[t] / d x[s] must be exactly 0 for every s > t.
  bool all_zero = true;
  for (int64_t t = 0; t < T; ++t) {
    x.set_grad(Tensor());
    Tensor out = a.output.select(1, t).sum();
    out.backward(Tensor(), /*retain_graph=*/true);
    std::vector<double> g = x.grad().to_vector<double>();  // (1, T, D)
    double future = 0, past = 0;
    for (int64_t s = 0; s < T; ++s)
      for (int64_t d = 0; d < D; ++d) (s > t ? future : past) += std::abs(g[s * D + d]);
    std::printf("  output %lld: sum |grad| from inputs after it = %g, from inputs up to it = %.4f\n",
                static_cast<long long>(t), future, past);
    all_zero = all_zero && future == 0.0;
  }
  if (!all_zero) ++failures;
  std::printf("  gradients from the future are exactly zero: %s\n", all_zero ? "yes" : "NO");
}

void multi_head_shapes() {
  std::puts("\n6. Multi-head attention, shape by shape (B=2, T=6, D=16, h=4 heads of d=4)");
  const int64_t B = 2, T = 6, D = 16, h = 4, d = D / h;
  nn::MultiHeadAttention mha(D, h);
  Tensor x = randn({B, T, D});
  Tensor q = mha.w_q->forward(x);
  Tensor qh = q.view({B, T, h, d}).transpose(1, 2);
  Tensor scores = matmul(qh, qh.transpose(-2, -1));
  std::cout << "  x                    " << shape_str(x.shape()) << "\n"
            << "  Q = x W_Q            " << shape_str(q.shape()) << "\n"
            << "  split heads (view)   " << shape_str(qh.shape()) << "   (B, h, T, d)\n"
            << "  scores Q K^T         " << shape_str(scores.shape()) << "   (B, h, T, T)\n";
  nn::Attention a = mha.forward(x, x, x);
  std::cout << "  weights              " << shape_str(a.weights.shape()) << "\n"
            << "  concat heads, W_O    " << shape_str(a.output.shape()) << "   (B, T, D)\n";
  std::puts("  The score matrix has T x T entries per head:");
  for (int64_t t : {128, 1024, 8192}) {
    double mb = static_cast<double>(t) * t * 4 / (1024.0 * 1024.0);
    std::printf("    T = %5lld: %11lld entries, %8.1f MiB in float32\n", static_cast<long long>(t),
                static_cast<long long>(t * t), mb);
  }
}

}  // namespace

// The program; main() below adds --help and turns any error into one line.
int program() {
  linear_rnn();
  vanishing_gradient();
  lstm_step();
  two_score_attention();
  causal_self_attention();
  multi_head_shapes();
  std::printf("\n%s\n", failures == 0 ? "every lesson-C number reproduced" : "SOME NUMBERS DID NOT MATCH");
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  CLI::App app{"Lesson C with ember: a linear RNN, vanishing gradients, an LSTM step, attention weights, causal masking, multi-head shapes."};
  EMBER_PARSE("sequence_models", app, argc, argv);
  return ember::examples::run("sequence_models", program);
}
