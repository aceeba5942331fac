// The public API as a new user meets it: one header, factories, errors on
// undefined tensors, printing, default initialization, module options,
// names, dtype conversion, in-memory state and module gradcheck.
#include <gtest/gtest.h>

#include "ember.h"  // the only ember include: nn, optim and train come with it
#include "test_util.h"

namespace {

using namespace ember;
using test::expect_error;

TEST(Api, TensorFromValuesAndLists) {
  Tensor v = tensor(std::vector<double>{1, 2, 3});
  EXPECT_EQ(v.shape(), (Shape{3}));                       // no shape: 1-D
  Tensor s = tensor(std::vector<double>{7}, {});
  EXPECT_EQ(s.dim(), 0);                                  // {}: 0-d
  EXPECT_EQ(s.item<double>(), 7);
  expect_error([] { tensor(std::vector<double>{1, 2}, {}); }, "tensor", {"2 values", "()"});
  Tensor f = tensor({0.5, -1.25});
  EXPECT_EQ(f.dtype(), kFloat32);                         // a list is float32 unless told
  EXPECT_EQ(test::values(f), (std::vector<double>{0.5, -1.25}));
  Tensor d = tensor({1, 2, 3, 4}, {2, 2}, kFloat64);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.shape(), (Shape{2, 2}));
  EXPECT_EQ(tensor({3, -4}, kInt64).to_vector<int64_t>(), (std::vector<int64_t>{3, -4}));
  expect_error([] { tensor({1.5}, kInt64); }, "tensor", {"1.5", "int64"});
}

TEST(Api, UndefinedTensorsAreErrorsNamingTheOp) {
  Tensor u, x = ones({2});
  expect_error([&] { (void)u.shape(); }, "shape", {"undefined"});
  expect_error([&] { (void)u.numel(); }, "numel", {"undefined"});
  expect_error([&] { (void)(u + x); }, "add", {"argument 1", "undefined"});
  expect_error([&] { (void)(x * u); }, "mul", {"argument 2", "undefined"});
  expect_error([&] { (void)matmul(x, u); }, "matmul", {"argument 2"});
  expect_error([&] { (void)cat({x, u}); }, "cat", {"tensor 1 of argument 1", "undefined"});
  expect_error([&] { (void)exp(u); }, "exp", {"undefined"});
  expect_error([&] { (void)layer_norm(u, x, x); }, "layer_norm", {"argument 1"});
  Tensor w = ones({2}).requires_grad_();
  expect_error([&] { (void)w.grad().sum(); }, "sum", {"grad() before any backward"});  // the classic one
  expect_error([&] { u.backward(); }, "backward", {"undefined"});
  expect_error([&] { (void)zeros_like(u); }, "", {"undefined"});
  EXPECT_EQ(u.to_string(), "tensor(undefined)");
}

TEST(Api, PrintingShowsGradFnAndNonLeafGradWarnsOnce) {
  Tensor a = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  EXPECT_NE(a.to_string().find("requires_grad=True"), std::string::npos) << a;
  Tensor b = a * 2.0;
  EXPECT_NE(b.to_string().find("grad_fn=<MulScalarBackward>"), std::string::npos) << b;
  b.sum().backward();
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(b.grad().defined());  // backward fills .grad of leaves only
  (void)b.grad();
  const std::string err = ::testing::internal::GetCapturedStderr();
  // Printed at most once per process (another test may already have triggered it).
  EXPECT_LE(std::count(err.begin(), err.end(), '\n'), 1) << err;
  if (!err.empty()) {
    EXPECT_NE(err.find("retain_grad()"), std::string::npos) << err;
  }
}

TEST(Api, DefaultInitDrawsFromTheSeededDefaultGenerator) {
  manual_seed(123);
  nn::Linear a(4, 4), b(4, 4);
  EXPECT_NE(test::values(a.weight), test::values(b.weight)) << "two default modules must differ";
  manual_seed(123);
  nn::Linear a2(4, 4);
  EXPECT_EQ(test::values(a.weight), test::values(a2.weight)) << "the same seed gives the same weights";
  Generator g1(5), g2(5);
  nn::Linear c(4, 4, {.generator = &g1}), d(4, 4, {.generator = &g2});
  EXPECT_EQ(test::values(c.weight), test::values(d.weight));
}

TEST(Api, OptionsInsteadOfPositionalTails) {
  nn::Linear lin(5, 4, {.bias = false, .dtype = kFloat64});
  EXPECT_FALSE(lin.bias.defined());
  EXPECT_EQ(lin.weight.dtype(), kFloat64);
  nn::Embedding emb(10, 3, {.padding_idx = -1});
  EXPECT_EQ(emb.padding_idx(), 9);
  nn::MultiHeadAttention attn(8, 2, {.causal = true});
  EXPECT_NE(attn.extra_repr().find("causal"), std::string::npos);
  nn::LayerNorm ln(6, {.eps = 0.5});
  EXPECT_EQ(ln.eps, 0.5);
}

TEST(Api, GptParametersUsePyTorchNestedNames) {
  nn::GPTConfig c;
  c.layers = 2;
  nn::GPT gpt(c);
  std::vector<std::string> names;
  for (const auto& [n, _] : gpt.named_parameters()) names.push_back(n);
  for (const char* want : {"embed.token.weight", "blocks.0.attn.w_q.weight", "blocks.1.fc2.bias", "ln_f.weight"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

TEST(Api, ModuleToConvertsInPlaceKeepingTies) {
  nn::GPTConfig c;
  c.layers = 1;
  nn::GPT gpt(c);
  Tensor head_handle = gpt.head->weight;  // a handle held elsewhere
  std::vector<double> before = test::values(gpt.embed->token->weight);
  gpt.to(kFloat64);
  EXPECT_EQ(gpt.embed->token->weight.dtype(), kFloat64);
  EXPECT_EQ(head_handle.dtype(), kFloat64) << "every handle sees the conversion";
  EXPECT_TRUE(gpt.head->weight.is_same(gpt.embed->token->weight)) << "still tied";
  EXPECT_EQ(test::values(gpt.embed->token->weight), before);  // float32 -> float64 is exact
  Tensor ids = tensor(std::vector<int64_t>{1, 2, 3}, {1, 3});
  EXPECT_EQ(gpt.forward(ids).dtype(), kFloat64);  // layer_norm takes a float64 input with float64 weights
  expect_error([&] { gpt.to(kInt64); }, "GPT", {"int64"});
}

TEST(Api, StateDictRoundTripAndChecks) {
  Generator g(1);
  nn::Linear a(3, 2, {.generator = &g}), b(3, 2, {.generator = &g});
  b.load_state_dict(a.state_dict());
  EXPECT_EQ(test::values(a.weight), test::values(b.weight));
  EXPECT_EQ(test::values(a.bias), test::values(b.bias));
  auto state = a.state_dict();
  state.pop_back();  // no bias
  std::vector<double> w = test::values(b.weight);
  expect_error([&] { b.load_state_dict(state); }, "load_state_dict", {"\"bias\"", "missing"});
  b.load_state_dict(state, /*strict=*/false);  // what is there loads
  state = {{"weight", zeros({2, 3})}, {"bias", zeros({5})}};
  expect_error([&] { b.load_state_dict(state); }, "load_state_dict", {"\"bias\"", "(5)", "(2)"});
  EXPECT_EQ(test::values(b.weight), w) << "a failed load changes nothing";
}

TEST(Api, GradcheckOfAWholeModule) {
  nn::Linear lin(3, 2, {.dtype = kFloat64});
  Tensor x = randn({4, 3}, kFloat64).requires_grad_();
  GradcheckResult r = nn::gradcheck(lin, [&](const std::vector<Tensor>& in) { return lin.forward(in[0]); }, {x});
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_EQ(r.checked, 8 * (12 + 6 + 2));  // outputs x (x, weight, bias) elements
  EXPECT_LT(r.max_err_over_tol, 1.0);
  nn::Linear f32(3, 2);
  expect_error([&] { nn::gradcheck(f32, [&](const std::vector<Tensor>& in) { return f32.forward(in[0]); }, {x}); },
               "gradcheck", {"\"weight\"", "float32", "to(kFloat64)"});
}

}  // namespace
