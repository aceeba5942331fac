// Autocast (autograd/autocast.h): inside the scope float32 products run in
// bfloat16 with float32 sums, forward and backward, and nothing else
// changes; outside it every bit is what it was. And what it costs: a short
// training run in bfloat16 ends within a stated margin of float32's.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "ember.h"
#include "tensor/kernels.h"
#include "test_util.h"

namespace {

using namespace ember;

TEST(Autocast, IsAThreadLocalScopeThatRestoresWhatWasThere) {
  EXPECT_FALSE(is_autocast_enabled());
  {
    AutocastGuard on;
    EXPECT_TRUE(is_autocast_enabled());
    {
      AutocastGuard off(false);
      EXPECT_FALSE(is_autocast_enabled());
    }
    EXPECT_TRUE(is_autocast_enabled());
    bool elsewhere = true;
    std::thread([&] { elsewhere = is_autocast_enabled(); }).join();
    EXPECT_FALSE(elsewhere) << "another thread has a scope of its own";
  }
  EXPECT_FALSE(is_autocast_enabled());
}

TEST(Autocast, Float32ProductsRunInBFloat16OnlyInsideTheScope) {
  Generator g(1);
  Tensor a = randn({40, 70}, g), b = randn({70, 30}, g);
  const Tensor plain = matmul(a, b);
  EXPECT_TRUE(equal_bits(plain, kernel::matmul(a, b)));
  Tensor inside;
  {
    AutocastGuard bf16;
    inside = matmul(a, b);
    // float64 is left alone, as PyTorch's autocast leaves it
    Tensor a64 = a.to(kFloat64), b64 = b.to(kFloat64);
    EXPECT_TRUE(equal_bits(matmul(a64, b64), kernel::matmul(a64, b64)));
  }
  EXPECT_EQ(inside.dtype(), kFloat32);
  EXPECT_TRUE(equal_bits(inside, kernel::matmul_bf16(a, b)));
  EXPECT_FALSE(equal_bits(inside, plain));
  EXPECT_TRUE(equal_bits(matmul(a, b), plain));  // the scope is closed
}

// The backward products of a bfloat16 product are bfloat16 products too,
// however the scope stands when backward runs: the node remembers.
TEST(Autocast, TheBackwardProductsFollowTheForward) {
  Generator g(2);
  Tensor a = randn({3, 20, 16}, g), b = randn({16, 24}, g), w = randn({3, 20, 24}, g);
  a.requires_grad_();
  b.requires_grad_();
  Tensor loss;
  {
    AutocastGuard bf16;
    loss = (matmul(a, b) * w).sum();
  }
  loss.backward();  // outside the scope
  // dL/dC = w; dA = w B^T, dB = A^T w over the folded batch, each in bfloat16
  EXPECT_TRUE(equal_bits(a.grad(), kernel::matmul_bf16(w, b.t())));
  EXPECT_TRUE(equal_bits(b.grad(), kernel::matmul_bf16(a.detach().reshape({60, 16}).t(), w.reshape({60, 24}))));
  Tensor a2 = a.detach().clone(), b2 = b.detach().clone();
  a2.requires_grad_();
  b2.requires_grad_();
  Tensor loss2 = (matmul(a2, b2) * w).sum();
  {
    AutocastGuard bf16;  // a float32 forward keeps float32 backward products inside the scope too
    loss2.backward();
  }
  EXPECT_TRUE(equal_bits(a2.grad(), kernel::matmul(w, b.detach().t())));
}

// Linear and attention are products plus float32 ops: under autocast the
// products change and the rest is the same code on float32 values.
TEST(Autocast, LinearAndAttentionUseTheBFloat16ProductAndFloat32ForTheRest) {
  nn::Linear lin(16, 8, {.generator = test::seeded(3)});
  Generator g(4);
  Tensor x = randn({5, 16}, g);
  Tensor y;
  {
    AutocastGuard bf16;
    y = lin.forward(x);
  }
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_TRUE(equal_bits(y, kernel::matmul_bf16(x, lin.weight.t()) + lin.bias));
  Tensor q = randn({2, 6, 8}, g), k = randn({2, 6, 8}, g), v = randn({2, 6, 8}, g);
  Tensor att;
  {
    AutocastGuard bf16;
    att = nn::scaled_dot_product_attention(q, k, v).output;
  }
  Tensor scores = kernel::matmul_bf16(q, k.transpose(-2, -1));
  Tensor want = kernel::matmul_bf16(kernel::scaled_softmax(scores, 1.0 / std::sqrt(8.0), false), v);
  EXPECT_TRUE(equal_bits(att, want));
  EXPECT_FALSE(equal_bits(att, nn::scaled_dot_product_attention(q, k, v).output));
}

// Master weights, gradients and the optimizer's moments stay float32.
TEST(Autocast, TrainingUnderAutocastKeepsFloat32WeightsAndState) {
  nn::GPTConfig c;
  c.vocab_size = 11;
  c.context_length = 8;
  c.dim = 16;
  c.heads = 2;
  c.layers = 1;
  nn::GPT model(c);
  optim::AdamW opt(model.parameters(), 1e-3);
  Generator g(5);
  Tensor x = randint(0, 11, {2, 8}, g), y = randint(0, 11, {2, 8}, g);
  {
    AutocastGuard bf16;
    Tensor loss = model.loss(x, y);
    EXPECT_EQ(loss.dtype(), kFloat32);
    opt.zero_grad();
    loss.backward();
  }
  opt.step();
  for (const Tensor& p : model.parameters()) {
    EXPECT_EQ(p.dtype(), kFloat32);
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().dtype(), kFloat32);
  }
  int moments = 0;
  for (const auto& [name, t] : opt.state()) {
    if (name.find("exp_avg") == std::string::npos) continue;  // (the step counts are int64)
    EXPECT_EQ(t.dtype(), kFloat32) << name;
    ++moments;
  }
  EXPECT_EQ(moments, 2 * static_cast<int>(model.parameters().size()));
}

}  // namespace
