// Forward mode and the transforms against PyTorch: a small MLP and a pre-LN
// Transformer block (nn::TransformerBlock), from tests/fixtures/forward.json
// (made by tests/fixtures/make_forward_fixtures.py with torch 1.13, float64;
// these tests never run Python). For each: the output, the JVP with a tangent
// on x and on every parameter at once (through nn::functional_call), the VJP
// in x and every parameter, and H v in x (ember: forward-over-reverse;
// PyTorch: double backward).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember.h"
#include "test_util.h"

using namespace ember;
using json = nlohmann::json;

namespace {

constexpr double kTol = 1e-10;

json load() {
  const std::string path = std::string(EMBER_FIXTURE_DIR) + "/forward.json";
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open fixture " + path);
  return json::parse(f);
}

Tensor to_tensor(const json& j) { return tensor(j.at("data").get<std::vector<double>>(), j.at("shape").get<Shape>()); }

struct Mlp : nn::Module {
  std::shared_ptr<nn::Linear> fc1, fc2;
  Mlp() {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(4, 5, nn::LinearOptions{.dtype = kFloat64}));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(5, 2, nn::LinearOptions{.dtype = kFloat64}));
  }
  std::string type_name() const override { return "Mlp"; }
  Tensor forward(const Tensor& x) { return fc2->forward(tanh(fc1->forward(x))); }
};

// Loads the fixture's parameters, then checks the four results.
void check_model(nn::Module& model, const std::function<Tensor(const Tensor&)>& forward, const json& c) {
  std::vector<std::string> names;
  {
    NoGradGuard plain;
    for (auto& [name, p] : model.named_parameters()) {
      ASSERT_TRUE(c.at("params").contains(name)) << name;
      p.copy_(to_tensor(c.at("params").at(name)));
      names.push_back(name);
    }
  }
  ASSERT_EQ(names.size(), c.at("params").size());
  const Tensor x = to_tensor(c.at("x")), u = to_tensor(c.at("u"));
  // inputs: x, then every parameter in named_parameters order
  TensorFn f = [&](const std::vector<Tensor>& in) {
    std::vector<std::pair<std::string, Tensor>> ps;
    for (size_t i = 0; i < names.size(); ++i) ps.emplace_back(names[i], in[i + 1]);
    return nn::functional_call(model, ps, [&] { return forward(in[0]); });
  };
  std::vector<Tensor> primals = {x}, tangents = {to_tensor(c.at("tangents").at("x"))};
  for (auto& [name, p] : model.named_parameters()) {
    primals.push_back(p.detach());
    tangents.push_back(to_tensor(c.at("tangents").at(name)));
  }
  {
    SCOPED_TRACE("output");
    test::expect_close(forward(x), to_tensor(c.at("output")), kTol);
  }
  JvpResult r = jvp(f, primals, tangents);
  {
    SCOPED_TRACE("jvp");
    test::expect_close(r.output, to_tensor(c.at("output")), kTol);
    test::expect_close(r.tangent, to_tensor(c.at("jvp")), kTol);
  }
  std::vector<Tensor> pulled = vjp(f, primals).pullback(u);
  {
    SCOPED_TRACE("vjp x");
    test::expect_close(pulled[0], to_tensor(c.at("vjp").at("x")), kTol);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE("vjp " + names[i]);
    test::expect_close(pulled[i + 1], to_tensor(c.at("vjp").at(names[i])), kTol);
  }
  TensorFn inner = [&](const std::vector<Tensor>& in) { return sum(f(in) * u); };
  {
    SCOPED_TRACE("hvp in x");
    test::expect_close(hvp(inner, primals, tangents[0], 0), to_tensor(c.at("hvp_x")), kTol);
  }
}

TEST(ForwardFixtures, SmallMlpMatchesPyTorch) {
  const json j = load();
  Mlp m;
  check_model(m, [&](const Tensor& x) { return m.forward(x); }, j.at("mlp"));
}

TEST(ForwardFixtures, TransformerBlockMatchesPyTorch) {
  const json j = load();
  const json& c = j.at("block");
  nn::TransformerBlock block(c.at("D").get<int64_t>(), c.at("heads").get<int64_t>(), {.dtype = kFloat64});
  check_model(block, [&](const Tensor& x) { return block.forward(x); }, c);
}

}  // namespace
