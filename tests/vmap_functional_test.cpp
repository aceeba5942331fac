// vmap/functional.h: the Jacobians in one batched pass equal autograd's
// loops (autograd/functional.h), over the whole gradcheck registry and on
// the chapter's functions; per-sample gradients of a GPT's loss.
#include <gtest/gtest.h>

#include "autograd/functional.h"
#include "compile_checks.h"
#include "registry.h"
#include "tensor/factory.h"
#include "tensor/random.h"
#include "test_util.h"
#include "vmap/functional.h"
#include "vmap/vmap.h"

namespace {

using namespace ember;
using ember::compile_checks::test_name;
using ember::test::expect_close;
using ember::test::expect_error;
using Inputs = std::vector<Tensor>;

Tensor mlp(const Inputs& in) { return matmul(in[1], tanh(matmul(in[2], in[0]))); }  // W2 tanh(W1 x)

TEST(VmapJacobians, EqualTheLoopsOnTheChaptersFunction) {
  Generator g(11);
  const Tensor x = randn({6}, g, kFloat64), w1 = randn({5, 6}, g, kFloat64), w2 = randn({3, 5}, g, kFloat64);
  for (int argnum : {0, 1, 2}) {
    SCOPED_TRACE(argnum);
    expect_close(jacrev_vmap(mlp, argnum)({x, w2, w1}), jacrev(mlp, argnum)({x, w2, w1}), 1e-13);
    expect_close(jacfwd_vmap(mlp, argnum)({x, w2, w1}), jacfwd(mlp, argnum)({x, w2, w1}), 1e-13);
  }
  const TensorFn loss = [](const Inputs& in) { return (softmax(matmul(in[0], in[1]), -1) * in[0].sum({1}, true)).sum(); };
  const Tensor a = randn({3, 4}, g, kFloat64), b = randn({4, 2}, g, kFloat64);
  expect_close(hessian_vmap(loss)({a, b}), hessian(loss)({a, b}), 1e-12);
  expect_close(hessian_vmap(loss, 1)({a, b}), hessian(loss, 1)({a, b}), 1e-12);
  EXPECT_EQ(hessian_vmap(loss)({a, b}).shape(), (Shape{3, 4, 3, 4}));
}

TEST(VmapJacobians, ErrorsNameTheTransform) {
  const Tensor x = ones({3}, kFloat64);
  expect_error([&] { jacrev_vmap(mlp, 5)({x}); }, "jacrev_vmap", {"argnum 5 is out of range for 1 inputs"});
  expect_error([&] { jacfwd_vmap(mlp, 0)({tensor(std::vector<int64_t>{1})}); }, "jacfwd_vmap", {"int64"});
  expect_error([&] { hessian_vmap([](const Inputs& in) { return in[0] * 2.0; })({x}); }, "hessian_vmap",
               {"one number", "(3)"});
}

// Every op of the registry, every floating input: jacrev_vmap equals
// jacrev, jacfwd_vmap equals jacfwd (1e-10 relative: float64, and the
// batched products round differently). jacfwd_vmap differentiates the
// pullback, so an op whose backward has no derivative is refused by name.
class VmapJacobianRegistry : public ::testing::TestWithParam<samples::OpInfo> {};

TEST_P(VmapJacobianRegistry, EqualTheLoopsOfAutograd) {
  const samples::OpInfo& op = GetParam();
  if (op.name == "nn.checkpoint(TransformerBlock)") GTEST_SKIP() << "refused under vmap (tests/vmap_registry_test.cpp)";
  Generator g1(2024);
  const TensorFn fn = [&](const Inputs& in) { return op.fn(in); };
  for (const samples::OpSample& s : op.samples(g1)) {
    SCOPED_TRACE(op.name + " on " + s.label);
    if (!op.fn(s.inputs).requires_grad()) continue;
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      if (!s.inputs[i].requires_grad()) continue;
      SCOPED_TRACE(testing::Message() << "input " << i);
      const int argnum = static_cast<int>(i);
      const Tensor want = jacrev(fn, argnum)(s.inputs);
      const Tensor rev = jacrev_vmap(fn, argnum)(s.inputs);
      ASSERT_EQ(rev.shape(), want.shape());
      const double tol = 1e-10 * (1 + (want.numel() ? want.abs().max().item() : 0.0));
      expect_close(rev, want, tol);
      if (!op.no_second_order.empty()) {
        expect_error([&] { jacfwd_vmap(fn, argnum, Randomness::Same)(s.inputs); }, {});
        continue;
      }
      // the modules build themselves inside fn from a fixed seed: the same draw at every call
      const Tensor fwd = jacfwd_vmap(fn, argnum, Randomness::Same)(s.inputs);
      expect_close(fwd, want, tol);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Vmap, VmapJacobianRegistry, ::testing::ValuesIn(samples::op_registry()), test_name);

}  // namespace
