// ember against PyTorch: nn.MultiheadAttention and nn.LSTM, values and
// gradients, from fixtures that tests/fixtures/make_fixtures.py generated
// with torch 1.13 in float64 (committed as tests/fixtures/{mha,lstm}.json;
// these tests never run Python).
//
// The PyTorch parameters load into ember's modules unchanged: MHA's
// in_proj_weight is stored split into W_Q, W_K, W_V row blocks, which are
// exactly ember's w_q, w_k, w_v Linear weights; nn.LSTM's weight_ih_l0 etc.
// have LSTMCell's layout (rows in gate order i, f, g, o).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember.h"
#include "nn/attention.h"
#include "nn/recurrent.h"
#include "test_util.h"

using namespace ember;
using json = nlohmann::json;

namespace {

constexpr double kTol = 1e-10;

json load(const std::string& name) {
  const std::string path = std::string(EMBER_FIXTURE_DIR) + "/" + name;
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open fixture " + path);
  return json::parse(f);
}

// {"shape": [...], "data": [...]} -> a float64 tensor
Tensor to_tensor(const json& j) {
  Shape s = j.at("shape").get<Shape>();
  return tensor(j.at("data").get<std::vector<double>>(), s);
}

void load_into(Tensor& param, const json& j) {
  Tensor v = to_tensor(j);
  ASSERT_EQ(shape_str(param.shape()), shape_str(v.shape()));
  NoGradGuard no_grad;
  param.copy_(v);
}

void expect_matches(const Tensor& actual, const json& j, const std::string& what) {
  SCOPED_TRACE(what);
  ember::test::expect_close(actual, to_tensor(j), kTol);
}

struct MhaCase {
  std::string name;
  bool causal;
};
void PrintTo(const MhaCase& c, std::ostream* os) { *os << c.name; }

}  // namespace

class NnFixtureMha : public ::testing::TestWithParam<MhaCase> {};

TEST_P(NnFixtureMha, OutputsWeightsAndGradientsMatchPyTorch) {
  const json fx = load("mha.json");
  const json& c = fx.at(GetParam().name);
  const int64_t D = fx.at("D"), heads = fx.at("heads");
  nn::MultiHeadAttention mha(D, heads, {.causal = GetParam().causal, .bias = true, .dtype = kFloat64, .generator = test::seeded(0)});
  std::vector<std::pair<std::string, Tensor>> params = mha.named_parameters();
  ASSERT_EQ(params.size(), fx.at("params").size());
  for (auto& [name, p] : params) load_into(p, fx.at("params").at(name));

  Tensor x = to_tensor(fx.at("x")).requires_grad_();
  nn::Attention a = mha.forward(x, x, x);
  expect_matches(a.output, c.at("output"), "output");
  expect_matches(a.weights, c.at("weights"), "per-head weights (B, h, T, T)");
  Tensor loss = (a.output * to_tensor(fx.at("loss_weights"))).sum();
  EXPECT_NEAR(loss.item<double>(), c.at("loss").get<double>(), kTol);
  loss.backward();
  expect_matches(x.grad(), c.at("grads").at("x"), "grad x");
  for (auto& [name, p] : params) expect_matches(p.grad(), c.at("grads").at(name), "grad " + name);
}

INSTANTIATE_TEST_SUITE_P(NnPyTorch, NnFixtureMha,
                         ::testing::Values(MhaCase{"full", false}, MhaCase{"causal", true}),
                         [](const auto& info) { return info.param.name; });

TEST(NnFixtureLstm, SequenceValuesAndGradientsMatchPyTorch) {
  const json fx = load("lstm.json");
  const int64_t I = fx.at("I"), H = fx.at("H");
  nn::LSTM lstm(I, H, {.dtype = kFloat64, .generator = test::seeded(0)});
  load_into(lstm.cell->weight_ih, fx.at("params").at("weight_ih_l0"));
  load_into(lstm.cell->weight_hh, fx.at("params").at("weight_hh_l0"));
  load_into(lstm.cell->bias_ih, fx.at("params").at("bias_ih_l0"));
  load_into(lstm.cell->bias_hh, fx.at("params").at("bias_hh_l0"));

  Tensor x = to_tensor(fx.at("x")).requires_grad_();
  Tensor h0 = to_tensor(fx.at("h0")).requires_grad_();
  Tensor c0 = to_tensor(fx.at("c0")).requires_grad_();
  auto [y, state] = lstm.forward(x, nn::LSTMState{h0, c0});
  expect_matches(y, fx.at("output"), "output (B, T, H)");
  expect_matches(state.h, fx.at("h_n"), "h_n");
  expect_matches(state.c, fx.at("c_n"), "c_n");

  Tensor loss = (y * to_tensor(fx.at("loss_weights"))).sum() + (state.c * to_tensor(fx.at("loss_weights_c"))).sum();
  EXPECT_NEAR(loss.item<double>(), fx.at("loss").get<double>(), kTol);
  loss.backward();
  const json& g = fx.at("grads");
  expect_matches(x.grad(), g.at("x"), "grad x");
  expect_matches(h0.grad(), g.at("h0"), "grad h0");
  expect_matches(c0.grad(), g.at("c0"), "grad c0");
  expect_matches(lstm.cell->weight_ih.grad(), g.at("weight_ih_l0"), "grad weight_ih");
  expect_matches(lstm.cell->weight_hh.grad(), g.at("weight_hh_l0"), "grad weight_hh");
  expect_matches(lstm.cell->bias_ih.grad(), g.at("bias_ih_l0"), "grad bias_ih");
  expect_matches(lstm.cell->bias_hh.grad(), g.at("bias_hh_l0"), "grad bias_hh");
}

// The same fixture, one step at a time through LSTMCell: the cell alone
// reproduces PyTorch's sequence.
TEST(NnFixtureLstm, CellUnrollMatchesPyTorch) {
  const json fx = load("lstm.json");
  const int64_t I = fx.at("I"), H = fx.at("H"), T = fx.at("T");
  nn::LSTMCell cell(I, H, {.dtype = kFloat64, .generator = test::seeded(0)});
  load_into(cell.weight_ih, fx.at("params").at("weight_ih_l0"));
  load_into(cell.weight_hh, fx.at("params").at("weight_hh_l0"));
  load_into(cell.bias_ih, fx.at("params").at("bias_ih_l0"));
  load_into(cell.bias_hh, fx.at("params").at("bias_hh_l0"));
  Tensor x = to_tensor(fx.at("x")), h = to_tensor(fx.at("h0")), c = to_tensor(fx.at("c0"));
  Tensor y = to_tensor(fx.at("output"));
  for (int64_t t = 0; t < T; ++t) {
    nn::LSTMState next = cell.forward(x.select(1, t), {h, c});
    h = next.h;
    c = next.c;
    ember::test::expect_close(h, y.select(1, t), kTol);
  }
  expect_matches(c, fx.at("c_n"), "c_n");
}
