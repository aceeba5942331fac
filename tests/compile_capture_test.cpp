// compile/'s capture, graph, passes and interpreter:
//   * every op of the gradcheck registry, captured on one draw of its samples
//     and run from the graph on another draw, gives what the op gives on that
//     draw, bit for bit (the graph calls the same kernels);
//   * the graph prints as documented, the passes drop and merge what they say;
//   * what a graph cannot hold is refused by name, and a refused capture
//     leaves the hooks as they were;
//   * compile(): one graph per signature, constants read live, gradients
//     through the graph equal to eager ones.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <map>

#include "autograd/op_scope.h"
#include "compile/capture.h"
#include "compile/compile.h"
#include "compile/fusion.h"
#include "compile/op_table.h"
#include "compile/passes.h"
#include "compile/run.h"
#include "compile_checks.h"
#include "registry.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::compiler;
using ember::test::expect_error;
using ember::compile_checks::same_bits;
using ember::compile_checks::test_name;
using Inputs = std::vector<Tensor>;

class CompileRegistry : public ::testing::TestWithParam<samples::OpInfo> {};

// The entries a graph refuses, and the words of the refusal.
const std::map<std::string, std::string> kRefused = {
    {"nn.checkpoint(TransformerBlock)", "as checkpoint does with its inputs"},
};

// The registry's modules build themselves inside fn with a generator of a
// fixed seed (the same weights at every call), hence draws_are_constants.
TEST_P(CompileRegistry, GraphOnNewInputsEqualsEagerBitForBit) {
  const samples::OpInfo& op = GetParam();
  Generator g1(2024), g2(99);
  const std::vector<samples::OpSample> first = op.samples(g1), second = op.samples(g2);
  ASSERT_EQ(first.size(), second.size());
  const Function fn = [&](const Inputs& in) { return Inputs{op.fn(in)}; };
  for (size_t s = 0; s < first.size(); ++s) {
    SCOPED_TRACE(op.name + " on " + first[s].label);
    if (kRefused.count(op.name)) {
      expect_error([&] { capture(fn, first[s].inputs, {.draws_are_constants = true}); }, "compile",
                   {kRefused.at(op.name)});
      continue;
    }
    Capture c = capture(fn, first[s].inputs, {.draws_are_constants = true});
    ASSERT_FALSE(c.graph.calls.empty()) << "nothing captured";
    optimize(c.graph);
    const Inputs& fresh = second[s].inputs;
    const Inputs eager = fn(fresh), replayed = run(c.graph, fresh);
    ASSERT_EQ(replayed.size(), 1u);
    EXPECT_TRUE(same_bits(replayed[0], eager[0])) << to_string(c.graph);
    // and the gradients through the graph are eager's too
    if (!eager[0].requires_grad()) continue;
    Inputs leaves;
    for (const Tensor& x : fresh)
      if (x.requires_grad()) leaves.push_back(x);
    const Tensor seed = ones_like(eager[0]);
    const Inputs ge = grad({eager[0]}, leaves, {seed}, {.allow_unused = true});
    const Inputs gr = grad({replayed[0]}, leaves, {seed}, {.allow_unused = true});
    for (size_t i = 0; i < leaves.size(); ++i) {
      ASSERT_EQ(ge[i].defined(), gr[i].defined());
      if (ge[i].defined()) {
        EXPECT_TRUE(same_bits(gr[i], ge[i])) << "gradient of input " << i;
      }
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Compile, CompileRegistry, ::testing::ValuesIn(samples::op_registry()), test_name);

// The backward half: grad() of every op captured with the op (the joint
// graph), run on new inputs and a new output gradient, equals eager's grad()
// bit for bit when eager runs the rules in the form a capture gives them
// (detail::capture_composes): the rules' composed form in ember ops, and a
// fused op's backward kernel as one op (layer_norm_backward, ...).
class CompileBackwardRegistry : public ::testing::TestWithParam<samples::OpInfo> {};

TEST_P(CompileBackwardRegistry, JointGraphEqualsEagerBitForBit) {
  const samples::OpInfo& op = GetParam();
  Generator g1(2024), g2(99), seeds(5);
  const std::vector<samples::OpSample> first = op.samples(g1), second = op.samples(g2);
  for (size_t s = 0; s < first.size(); ++s) {
    SCOPED_TRACE(op.name + " on " + first[s].label);
    Inputs leaves;
    for (const Tensor& x : first[s].inputs) leaves.push_back(x);
    const Tensor y = op.fn(first[s].inputs);
    if (!y.requires_grad()) continue;
    // fn(inputs..., seed) = the gradients of <op(inputs), seed> for the inputs that require grad
    const Function fn = compile_checks::gradients_of(op, first[s].inputs.size());
    Inputs a = first[s].inputs, b = second[s].inputs;
    a.push_back(randn(y.shape(), seeds, y.dtype()));
    b.push_back(randn(y.shape(), seeds, y.dtype()));
    if (kRefused.count(op.name)) {
      expect_error([&] { capture(fn, a, {.draws_are_constants = true}); }, "compile", {kRefused.at(op.name)});
      continue;
    }
    Capture c = capture(fn, a, {.draws_are_constants = true});
    ASSERT_TRUE(c.graph.backward);
    optimize(c.graph);
    prepare_kernels(c.graph);  // the backward's elementwise chains run as generated kernels
    const Inputs eager = [&] {
      struct AsCaptured {
        AsCaptured() { detail::capture_composes = true; }
        ~AsCaptured() { detail::capture_composes = false; }
      } as_captured;
      return fn(b);
    }();
    const Inputs replayed = run(c.graph, b);
    ASSERT_EQ(replayed.size(), eager.size());
    for (size_t i = 0; i < eager.size(); ++i) EXPECT_TRUE(same_bits(replayed[i], eager[i])) << "gradient " << i;
  }
}
INSTANTIATE_TEST_SUITE_P(Compile, CompileBackwardRegistry, ::testing::ValuesIn(samples::op_registry()), test_name);

// Every op of tensor/op_list.h and autograd/ops.h has a rule (the registry
// check above runs most of them; this names the table's size).
TEST(CompileTable, EveryOpOfTheListHasARuleWithItsParameterNames) {
  int from_list = 0;
#define EMBER_DEFAULT(v)
#define EMBER_OP(R, name, params, args) ++from_list;
#include "tensor/op_list.h"
#undef EMBER_OP
#undef EMBER_DEFAULT
  EXPECT_EQ(from_list, 72);
  // and the 23 of autograd/ops.h alone (with detach, stand_in, matmul_bf16 and the 4 backward kernels)
  EXPECT_EQ(op_rules().size(), 72u + 23u);
  const OpRule* sum = find_rule("sum", {OpArg(Tensor()), OpArg(Shape{1}), OpArg(false)});
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->params, (std::vector<std::string>{"self", "dims", "keepdim"}));
  const OpRule* var = find_rule("var", {OpArg(Tensor()), OpArg(Shape{}), OpArg(int64_t{1}), OpArg(false)});
  ASSERT_NE(var, nullptr);
  EXPECT_EQ(var->params, (std::vector<std::string>{"self", "dims", "correction", "keepdim"}));
  EXPECT_EQ(find_rule("sum", {OpArg(Tensor()), OpArg(1.0)}), nullptr);  // no such overload
}

Inputs gelu_sum(const Inputs& in) { return {sum(gelu(in[0] + in[1]), {1})}; }

TEST(CompileGraph, PrintsOneLinePerCall) {
  Capture c = capture(gelu_sum, {zeros({4, 8}), zeros({8})});
  EXPECT_EQ(to_string(c.graph),
            "graph(%0: f32[4, 8], %1: f32[8]):\n"
            "  %2: f32[4, 8] = add(%0, %1)\n"
            "  %3: f32[4, 8] = gelu(%2, approx=none)\n"
            "  %4: f32[4] = sum(%3, dims=[1], keepdim=false)\n"
            "  return %4\n");
}

TEST(CompileGraph, ConstantsAndModulesAreNamed) {
  nn::Sequential net({std::make_shared<nn::Linear>(3, 2, nn::LinearOptions{.generator = test::seeded(1)})});
  Capture c = capture([&](const Inputs& in) { return Inputs{net.forward(in[0]) * 0.5}; }, {ones({5, 3})});
  const std::string text = to_string(c.graph);
  EXPECT_NE(text.find("%1: f32[2, 3] = constant\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# 0\n"), std::string::npos) << text;  // the call ran in module "0"
  EXPECT_NE(text.find("= mul(%"), std::string::npos) << text;
  EXPECT_NE(text.find(", other=0.5)"), std::string::npos) << text;
}

TEST(CompilePasses, DeadCodeAndCommonSubexpressions) {
  Capture c = capture(
      [](const Inputs& in) {
        Tensor a = exp(in[0]), b = exp(in[0]);  // the same call twice
        Tensor unused = log(in[0]) * 3.0;       // read by nothing
        (void)unused;
        return Inputs{a + b};
      },
      {ones({3})});
  ASSERT_EQ(c.graph.calls.size(), 5u);
  EXPECT_EQ(dead_code(c.graph), 2);
  EXPECT_EQ(common_subexpressions(c.graph), 1);
  EXPECT_EQ(to_string(c.graph),
            "graph(%0: f32[3]):\n"
            "  %1: f32[3] = exp(%0)\n"
            "  %5: f32[3] = add(%1, %1)\n"
            "  return %5\n");
  const Tensor x = tensor(std::vector<float>{0.f, 1.f, -2.f});
  EXPECT_TRUE(same_bits(run(c.graph, {x})[0], exp(x) + exp(x)));
}

// A mask the function makes is folded: computed once, a constant. A tensor
// someone else holds (w) is not: its product is computed each run.
TEST(CompilePasses, ConstantsOnlyTheGraphHoldsAreFolded) {
  Tensor w = tensor(std::vector<float>{1, 2, 3, 4});
  Capture c = capture(
      [&](const Inputs& in) { return Inputs{in[0] * triu(ones({4, 4}), 1) + w * 2.0}; }, {zeros({4, 4})});
  ASSERT_EQ(c.graph.calls.size(), 4u);  // triu, mul, mul, add
  EXPECT_EQ(fold_constants(c.graph), 1);
  EXPECT_EQ(dead_code(c.graph), 0);
  EXPECT_EQ(to_string(c.graph),
            "graph(%0: f32[4, 4]):\n"
            "  %1: f32[4] = constant\n"
            "  %4: f32[4, 4] = constant\n"  // triu's result, folded
            "  %2: f32[4] = mul(%1, other=2)\n"
            "  %5: f32[4, 4] = mul(%0, %4)\n"
            "  %6: f32[4, 4] = add(%5, %2)\n"
            "  return %6\n");
  Generator g(4);
  const Tensor x = randn({4, 4}, g);
  EXPECT_TRUE(same_bits(run(c.graph, {x})[0], x * triu(ones({4, 4}), 1) + w * 2.0));
  w.mul_(10.0);
  EXPECT_TRUE(same_bits(run(c.graph, {x})[0], x * triu(ones({4, 4}), 1) + w * 2.0));
}

// ---- refusals ----

// An op of the test's own, with no capture rule.
Tensor twice(const Tensor& x) {
  OpScope scope("twice", x);
  return scope.out(x * 2.0);
}

TEST(CompileRefuses, WhatAGraphCannotHold) {
  const Tensor x = ones({2, 3});
  expect_error([&] { capture([](const Inputs& in) { return Inputs{in[0] * in[0].sum().item()}; }, {x}); }, "compile",
               {"item() of a tensor of shape ()", "compile the parts before and after"});
  expect_error([&] { capture([](const Inputs& in) { return Inputs{in[0] + randn({2, 3})}; }, {x}); }, "compile",
               {"draws random numbers"});
  expect_error(
      [&] {
        capture(
            [](const Inputs& in) {
              Tensor y = in[0] * 2.0;
              y.add_(1.0);
              return Inputs{y};
            },
            {x});
      },
      "compile", {"add_ writes in place into a tensor of shape (2, 3)"});
  expect_error([&] { capture([](const Inputs& in) { return Inputs{twice(in[0])}; }, {x}); }, "compile",
               {"op twice (1 arguments) has no capture rule"});
  expect_error(
      [&] {
        capture(
            [](const Inputs& in) {
              (in[0] * in[0]).sum().backward();
              return Inputs{in[0].grad()};
            },
            {x.detach().requires_grad_()});
      },
      "compile", {"backward() writes .grad", "use grad(outputs, inputs)"});
  {  // refused before anything ran: no .grad written, the graph still whole
    const Tensor leaf = x.detach().requires_grad_();
    const Tensor loss = (leaf * leaf).sum();
    expect_error([&] { capture([&](const Inputs&) { loss.backward(); return Inputs{loss}; }, {x}); }, "compile",
                 {"backward() writes .grad"});
    EXPECT_FALSE(leaf.grad().defined());
    loss.backward();
    EXPECT_EQ(leaf.grad().sum().item(), 12.0);  // 2x over six ones
  }
  expect_error([&] { capture(Function(), {x}); }, "compile", {"empty"});
  expect_error([&] { capture([](const Inputs& in) { return in; }, {x, Tensor()}); }, "compile",
               {"input 1 is an undefined tensor"});
  // the hooks are put back: nothing watches after a refusal
  EXPECT_EQ(autograd_observer(), nullptr);
  EXPECT_EQ(detail::value_read_watcher, nullptr);
  EXPECT_EQ(detail::draw_watcher, nullptr);
  EXPECT_EQ((x * 2.0).sum().item(), 12.0);  // item() works again
  EXPECT_EQ(randn({3}).numel(), 3);            // and the default generator (its lock let go)
}

TEST(CompileRefuses, RunOnInputsOfAnotherShapeOrDtype) {
  Capture c = capture(gelu_sum, {zeros({4, 8}), zeros({8})});
  expect_error([&] { run(c.graph, {zeros({4, 9}), zeros({9})}); }, "compile",
               {"input 0 is float32 of shape (4, 9), but the graph was captured for float32 of shape (4, 8)"});
  expect_error([&] { run(c.graph, {zeros({4, 8}, kFloat64), zeros({8})}); }, "compile", {"float64"});
  expect_error([&] { run(c.graph, {zeros({4, 8})}); }, "compile", {"takes 2 inputs, got 1"});
}

// ---- compile() ----

TEST(Compile, OneGraphPerSignature) {
  int calls = 0;
  Compiled f = compile([&](const Inputs& in) {
    ++calls;
    return Inputs{in[0] * in[1] + 1.0};
  });
  const Tensor a = tensor(std::vector<float>{1, 2, 3}), b = tensor(std::vector<float>{4, 5, 6});
  EXPECT_TRUE(same_bits(f({a, b})[0], a * b + 1.0));
  EXPECT_TRUE(same_bits(f({b, a})[0], b * a + 1.0));  // the graph runs: fn is not called again
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(f.captures(), 1u);
  const Tensor c = tensor(std::vector<float>{1, 2});
  EXPECT_TRUE(same_bits(f({c, c})[0], c * c + 1.0));  // new shape, and the same tensor twice
  EXPECT_EQ(f.captures(), 2u);
  const Tensor d = tensor(std::vector<float>{3, 4});
  EXPECT_TRUE(same_bits(f({c, d})[0], c * d + 1.0));  // not "the same tensor twice": captured anew
  EXPECT_EQ(f.captures(), 3u);
  EXPECT_EQ(signature({c, c}), "f32[2] f32[2]=0");
}

// A tensor the function makes and returns is a new one at every call, as
// eager's is: writing into one call's result changes no later call's. A
// tensor from outside that it returns is that tensor, as eager's is.
TEST(Compile, AReturnedConstantIsTheFunctionsOwnOrTheCallers) {
  Tensor w = tensor(std::vector<float>{1, 2});
  Compiled f = compile([&](const Inputs& in) { return Inputs{ones({2}), w, in[0] * 2.0}; });
  const Tensor x = tensor(std::vector<float>{3, 4});
  Inputs first = f({x});
  first[0].mul_(5.0);
  const Inputs second = f({x});
  EXPECT_EQ(second[0].to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(second[1].storage().get(), w.storage().get());
  EXPECT_EQ(f.captures(), 1u);
}

TEST(Compile, ConstantsAreReadWhenTheGraphRuns) {
  Tensor w = tensor(std::vector<float>{1, 1});
  Compiled f = compile([&](const Inputs& in) { return Inputs{in[0] * w}; });
  const Tensor x = tensor(std::vector<float>{2, 3});
  f({x});
  w.mul_(10.0);  // an optimizer's step, in place
  EXPECT_EQ(f({x})[0].to_vector<float>(), (std::vector<float>{20, 30}));
}

TEST(Compile, GradientsThroughTheGraph) {
  Compiled f = compile([](const Inputs& in) { return Inputs{(tanh(matmul(in[0], in[1])) * in[1].sum()).sum()}; });
  Generator g(3);
  auto leaf = [&](Shape s) { return randn(s, g, kFloat64).requires_grad_(); };
  f({leaf({3, 4}), leaf({4, 2})});  // captured; gradcheck's calls run the graph
  const GradcheckResult r = gradcheck([&](const Inputs& in) { return f(in)[0]; }, {leaf({3, 4}), leaf({4, 2})});
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_EQ(f.captures(), 1u);
}

// detach() is no op, but the graph keeps it: the gradient stops there as in eager
// The same with a fused chain, a broadcast bias, a sum at the chain's end
// and a non-contiguous input (a transposed view).
TEST(Compile, GradcheckThroughAFusedChainWithBroadcastAndAView) {
  Compiled f = compile([](const Inputs& in) {
    return Inputs{(gelu(in[0] + in[1]) * in[0]).sum({-1}) + exp(in[1]).sum()};
  });
  Generator g(4);
  const Tensor base = randn({5, 3}, g, kFloat64);
  const Tensor x = base.transpose(0, 1).detach().requires_grad_(), b = randn({5}, g, kFloat64).requires_grad_();
  ASSERT_FALSE(x.is_contiguous());
  f({x, b});
  const GradcheckResult r = gradcheck([&](const Inputs& in) { return f(in)[0]; }, {x, b});
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_EQ(f.captures(), 1u);
  NoGradGuard no_grad;  // without autograd, the generated kernel runs: eager's bits
  EXPECT_TRUE(same_bits(f({x.detach(), b.detach()})[0], (gelu(x + b) * x).sum({-1}) + exp(b).sum()));
}

TEST(Compile, DetachInsideTheFunction) {
  const Function fn = [](const Inputs& in) {
    Tensor h = tanh(in[0]);
    return Inputs{(h * h.detach()).sum()};
  };
  Compiled f = compile(fn);
  Generator g(4);
  f({randn({5}, g, kFloat64).requires_grad_()});
  const Tensor x = randn({5}, g, kFloat64).requires_grad_();
  EXPECT_NE(to_string(f.graph_for({x})).find("= detach(%1)"), std::string::npos) << to_string(f.graph_for({x}));
  EXPECT_TRUE(same_bits(grad(f({x}), {x})[0], grad(fn({x}), {x})[0]));
}

// functional_call swaps a parameter's contents while it runs: the tracer
// must see the parameter's handle as the tensor standing in for it then, and
// as the parameter itself afterwards (one handle, two values in turn).
TEST(Compile, ParameterHandlesSwappedByFunctionalCall) {
  nn::Linear fc(3, 2, nn::LinearOptions{.generator = test::seeded(5)});
  fc.to(kFloat64);
  const Function fn = [&](const Inputs& in) {
    const Tensor with_given = nn::functional_call(fc, {{"weight", in[0]}}, [&] { return fc.forward(in[1]); });
    return Inputs{with_given + fc.forward(in[1]) * 2.0};
  };
  Generator g(6);
  for (bool requires_grad : {false, true}) {
    SCOPED_TRACE(requires_grad);
    const Inputs first{randn({2, 3}, g, kFloat64).requires_grad_(requires_grad), randn({4, 3}, g, kFloat64)};
    const Inputs second{randn({2, 3}, g, kFloat64).requires_grad_(requires_grad), randn({4, 3}, g, kFloat64)};
    const Capture c = capture(fn, first);
    EXPECT_TRUE(same_bits(run(c.graph, second)[0], fn(second)[0])) << to_string(c.graph);
  }
}

}  // namespace
