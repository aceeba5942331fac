// compile/ on a whole training step, its cache's keys, and its bad input:
//   * the tiny GPT trained 20 steps with its loss and gradients from a
//     compiled joint graph gives eager's losses, to float32 rounding, and
//     with AdamW's update in the same graph, the same losses bit for bit;
//   * a kernel's file changes with its source and with the compiler, and a
//     Compiled captures again for a new shape or dtype;
//   * two threads calling one Compiled get the same results as eager;
//   * EMBER_COMPILE_DEBUG that is not a number is refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>

#include "compile/capture.h"
#include "compile/compile.h"
#include "compile/graph.h"
#include "compile/passes.h"
#include "compile/toolchain.h"
#include "compile_checks.h"
#include "test_util.h"
#include "train/optim.h"

namespace {

using namespace ember;
using namespace ember::compiler;
using ember::compile_checks::same_bits;
using ember::compile_checks::ScopedEnv;
using ember::test::expect_error;
using Inputs = std::vector<Tensor>;

// 20 AdamW steps of the tiny GPT on one batch; the loss and gradients
// eager, or from one compiled joint graph.
std::vector<double> train(bool compiled) {
  nn::GPT model(nn::GPTConfig{.vocab_size = 65, .context_length = 32, .dim = 32, .heads = 4, .layers = 2, .seed = 3});
  const std::vector<Tensor> params = model.parameters();
  optim::AdamW opt(params, /*lr=*/3e-3);
  const Function step = [&](const Inputs& in) {
    const Tensor loss = model.loss(in[0], in[1]);
    Inputs out = grad({loss}, params);
    out.insert(out.begin(), loss.detach());
    return out;
  };
  std::optional<Compiled> f;
  if (compiled) f.emplace(step);
  Generator g(11);
  const Tensor x = randint(0, 65, {4, 32}, g), y = randint(0, 65, {4, 32}, g);  // one batch, learned by heart
  std::vector<double> losses;
  for (int s = 0; s < 20; ++s) {
    const Inputs r = compiled ? (*f)({x, y}) : step({x, y});
    losses.push_back(r[0].item());
    for (size_t i = 0; i < params.size(); ++i) params[i].set_grad(r[i + 1]);
    opt.step();
  }
  if (compiled) {
    EXPECT_EQ(f->captures(), 1u);
  }
  return losses;
}

// The joint graph's gradients come from the rules' composed form, eager's
// from its fused kernels: the same values up to float32 rounding (one step:
// about 1e-8 apart), which 20 steps of AdamW carry into the losses.
TEST(CompileTrain, TinyGptTwentyStepsGiveEagersLosses) {
  const std::vector<double> eager = train(false), compiled = train(true);
  ASSERT_EQ(eager.size(), compiled.size());
  EXPECT_NEAR(eager.front(), std::log(65.0), 0.2);  // untrained: close to a uniform guess
  EXPECT_LT(eager.back(), eager.front() - 0.3);    // and it learns
  for (size_t s = 0; s < eager.size(); ++s) EXPECT_NEAR(compiled[s], eager[s], 1e-4) << "step " << s;
}

// The whole step in one graph: loss, gradients and AdamW's update
// (optim::adamw_update, ops, no writes in place). The graph returns the new
// parameters and moments; the caller puts the parameters back into the
// model (a copy, outside the graph). The update is AdamW::step's bits, so
// the losses are those of the graph above, bit for bit.
std::vector<double> train_whole_step() {
  nn::GPT model(nn::GPTConfig{.vocab_size = 65, .context_length = 32, .dim = 32, .heads = 4, .layers = 2, .seed = 3});
  const std::vector<Tensor> params = model.parameters();
  const size_t P = params.size();
  const Function step = [&](const Inputs& in) {  // x, y, decay, step_size, sqrt_bc2, moments m..., v...
    const Tensor loss = model.loss(in[0], in[1]);
    const Inputs grads = grad({loss}, params);
    const optim::AdamWScalars sc{in[2], in[3], in[4]};
    Inputs out{loss.detach()};
    for (size_t i = 0; i < P; ++i) {
      const optim::AdamWUpdate u = optim::adamw_update(params[i].detach(), grads[i], in[5 + i], in[5 + P + i], sc);
      out.insert(out.end(), {u.param, u.exp_avg, u.exp_avg_sq});
    }
    return out;
  };
  Compiled f(step);
  Generator g(11);
  const Tensor x = randint(0, 65, {4, 32}, g), y = randint(0, 65, {4, 32}, g);
  Inputs moments;
  for (int k = 0; k < 2; ++k)
    for (const Tensor& p : params) moments.push_back(zeros(p.shape()));
  std::vector<double> losses;
  for (int64_t t = 1; t <= 20; ++t) {
    const optim::AdamWScalars sc = optim::adamw_scalars(3e-3, 0.01, t, 0.9, 0.999, kFloat32);
    Inputs in{x, y, sc.decay, sc.step_size, sc.sqrt_bc2};
    in.insert(in.end(), moments.begin(), moments.end());
    const Inputs r = f(in);
    losses.push_back(r[0].item());
    NoGradGuard no_grad;
    for (size_t i = 0; i < P; ++i) {
      Tensor p = params[i];
      p.copy_(r[1 + 3 * i]);
      moments[i] = r[2 + 3 * i];
      moments[P + i] = r[3 + 3 * i];
    }
  }
  EXPECT_EQ(f.captures(), 1u);  // t and the learning rate are inputs: one graph for every step
  return losses;
}

TEST(CompileTrain, TheWholeStepInOneGraphGivesTheSameLosses) {
  const std::vector<double> whole = train_whole_step(), joint = train(true);
  EXPECT_EQ(whole, joint);
}

TEST(CompileCache, AKernelsFileChangesWithItsSourceAndItsCompiler) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ember_kernels_keys_" + std::to_string(::getpid()));
  ScopedEnv cache("EMBER_KERNEL_CACHE", dir.string());
  const std::string a = "extern \"C\" void ember_kernel(const void* const*, void* const*, const void* const*, long, long) {}\n";
  const std::string b = a + "// another source\n";
  const LoadedKernel ka = load_kernel(a), kb = load_kernel(b);
  EXPECT_NE(ka.file, kb.file);
  {
    ScopedEnv cxx("EMBER_CXX", "g++");  // another compiler (by name): another file
    EXPECT_NE(load_kernel(a).file, ka.file);
  }
  EXPECT_EQ(load_kernel(a).file, ka.file);
  fs::remove_all(dir);
}

TEST(Compile, NewShapesAndDtypesCaptureAgain) {
  Compiled f = compile([](const Inputs& in) { return Inputs{tanh(in[0]) * 2.0}; });
  for (DType dt : {kFloat32, kFloat64})
    for (int64_t n : {3, 5}) {
      const Tensor x = arange(0, static_cast<double>(n), 1.0, dt);
      EXPECT_TRUE(same_bits(f({x})[0], tanh(x) * 2.0));
      EXPECT_TRUE(same_bits(f({x})[0], tanh(x) * 2.0));  // from the graph
    }
  EXPECT_EQ(f.captures(), 4u);
}

TEST(Compile, TwoThreadsCallOneCompiled) {
  Compiled f = compile([](const Inputs& in) { return Inputs{exp(in[0] + 1.0) * in[0]}; });
  Generator g(5);
  const Tensor x = randn({1000}, g), want = exp(x + 1.0) * x;
  NoGradGuard no_grad;
  f({x});
  bool ok[2] = {false, false};
  std::thread t1([&] { ok[0] = same_bits(f({x})[0], want); });
  std::thread t2([&] { ok[1] = same_bits(f({x})[0], want); });
  t1.join();
  t2.join();
  EXPECT_TRUE(ok[0] && ok[1]);
}

TEST(CompileRefuses, ADebugLevelThatIsNotANumber) {
  ScopedEnv debug("EMBER_COMPILE_DEBUG", "lots");
  expect_error([] { compile([](const Inputs& in) { return in; })({ones({2})}); }, "compile", {"EMBER_COMPILE_DEBUG"});
}

}  // namespace
