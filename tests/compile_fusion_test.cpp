// compile/'s fusion and generated kernels:
//   * every op of the gradcheck registry, followed by neg so that an
//     elementwise op has a chain to join, compiled and run with no autograd
//     (the kernels run) on new inputs, in float64 and float32, gives eager's
//     bits;
//   * the pass groups what it says, and the kernel reads broadcast inputs
//     four ways (whole, one element, rows, columns, copied);
//   * the cache: a kernel compiled once is loaded from disk by the next
//     process, a new source compiles anew, a failed compile names its file;
//   * with autograd recording, a group runs its eager ops (gradients equal).
// The kernels compile into EMBER_KERNEL_CACHE (set by tests/CMakeLists.txt
// to one folder of the build), so a second run of the suite compiles none.
#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "compile/capture.h"
#include "compile/codegen.h"
#include "compile/compile.h"
#include "compile/fusion.h"
#include "compile/passes.h"
#include "compile/run.h"
#include "compile/toolchain.h"
#include "base/hooks.h"
#include "compile_checks.h"
#include "registry.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::compiler;
using ember::test::expect_error;
using ember::compile_checks::same_bits;
using ember::compile_checks::ScopedEnv;
using ember::compile_checks::test_name;
using Inputs = std::vector<Tensor>;

Inputs as_dtype(const Inputs& in, DType dt) {
  Inputs out;
  for (const Tensor& x : in) out.push_back(x.is_floating_point() ? x.detach().to(dt) : x);
  return out;
}

int fused_calls(const Graph& g) {
  int n = 0;
  for (const Call& c : g.calls) n += c.fused != nullptr;
  return n;
}

class CompileFusionRegistry : public ::testing::TestWithParam<samples::OpInfo> {};

TEST_P(CompileFusionRegistry, KernelsGiveEagersBits) {
  const samples::OpInfo& op = GetParam();
  if (op.name == "nn.checkpoint(TransformerBlock)") GTEST_SKIP() << "refused at capture (compile_capture_test)";
  NoGradGuard no_grad;  // the kernels run (with autograd recording, a group runs its eager ops)
  Generator g1(2024), g2(99);
  const std::vector<samples::OpSample> first = op.samples(g1), second = op.samples(g2);
  const Function fn = [&](const Inputs& in) {
    Tensor y = op.fn(in);
    return Inputs{y.is_floating_point() ? neg(y) : y};
  };
  for (DType dt : {kFloat64, kFloat32}) {
    for (size_t s = 0; s < first.size(); ++s) {
      SCOPED_TRACE(op.name + " on " + first[s].label + " in " + dtype_name(dt));
      const Inputs a = as_dtype(first[s].inputs, dt), b = as_dtype(second[s].inputs, dt);
      Inputs eager;
      try {
        eager = fn(b);
      } catch (const Error&) {
        continue;  // the op does not take this dtype (its own tests say so)
      }
      Capture c = capture(fn, a, {.draws_are_constants = true});
      optimize(c.graph);
      prepare_kernels(c.graph);
      EXPECT_TRUE(same_bits(run(c.graph, b)[0], eager[0])) << to_string(c.graph);
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Compile, CompileFusionRegistry, ::testing::ValuesIn(samples::op_registry()), test_name);

Inputs bias_gelu_scale(const Inputs& in) { return {gelu(in[0] + in[1]) * 0.5}; }

TEST(CompileFusion, AChainBecomesOneKernel) {
  Capture c = capture(bias_gelu_scale, {zeros({4, 8}), zeros({8})});
  optimize(c.graph);
  EXPECT_EQ(to_string(c.graph),
            "graph(%0: f32[4, 8], %1: f32[8]):\n"
            "  %4: f32[4, 8] = fused(%0, %1) {\n"
            "      %2: f32[4, 8] = add(%0, %1)\n"
            "      %3: f32[4, 8] = gelu(%2, approx=none)\n"
            "      %4: f32[4, 8] = mul(%3, other=0.5)\n"
            "  }\n"
            "  return %4\n");
  prepare_kernels(c.graph);
  const Fused& f = *c.graph.calls[0].fused;
  EXPECT_EQ(f.name, "fused[add,gelu,mul]");
  EXPECT_EQ(f.reads, (std::vector<Reads>{Reads::Whole, Reads::Rows}));
  EXPECT_NE(f.source.find("std::copy(in1 + r, in1 + r + n, b[0] + t);"), std::string::npos) << f.source;  // the bias's rows
  EXPECT_NE(f.source.find("const T v4 = b[1][t] * 0x1p-1f;  // %4 = mul"), std::string::npos) << f.source;  // 0.5, exactly
  EXPECT_NE(f.source.find("out0[j0 + t] = v4;"), std::string::npos) << f.source;
  Generator g(1);
  const Tensor x = randn({4, 8}, g), b = randn({8}, g);
  NoGradGuard no_grad;
  EXPECT_TRUE(same_bits(run(c.graph, {x, b})[0], bias_gelu_scale({x, b})[0]));
}

// An op eager computes a block at a time, on a value of the group (not an
// input): its block function reads an array of the kernel's own.
TEST(CompileFusion, BlockOpsOnValuesOfTheGroup) {
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> ops = {
      {"exp", [](const Tensor& v) { return exp(v); }},
      {"tanh", [](const Tensor& v) { return tanh(v); }},
      {"sigmoid", [](const Tensor& v) { return sigmoid(v); }},
      {"erf", [](const Tensor& v) { return erf(v); }},
      {"gelu", [](const Tensor& v) { return gelu(v); }},
      {"gelu tanh", [](const Tensor& v) { return gelu(v, GeluApprox::Tanh); }}};
  Generator g(6);
  NoGradGuard no_grad;
  for (DType dt : {kFloat32, kFloat64}) {
    for (const auto& [name, op] : ops) {
      SCOPED_TRACE(name + " in " + dtype_name(dt));
      const Function fn = [&](const Inputs& in) { return Inputs{op(in[0] * 3.0 - 1.0) + in[0]}; };
      Capture c = capture(fn, {zeros({1000}, dt)});
      optimize(c.graph);
      prepare_kernels(c.graph);
      ASSERT_EQ(fused_calls(c.graph), 1);
      const Tensor x = randn({1000}, g, dt);
      EXPECT_TRUE(same_bits(run(c.graph, {x})[0], fn({x})[0]));
    }
  }
}

// The four ways a kernel reads a broadcast input, each against eager.
TEST(CompileFusion, BroadcastInputsEveryWay) {
  Generator g(2);
  const Function fn = [](const Inputs& in) { return Inputs{exp(in[0] * in[1]) - in[1]}; };
  for (const Shape& s : std::vector<Shape>{{3, 5, 7}, {}, {7}, {1, 5, 7}, {3, 1, 1}, {3, 5, 1}, {3, 1, 7}, {5, 1}}) {
    SCOPED_TRACE(shape_str(s));
    const Tensor x = randn({3, 5, 7}, g, kFloat64), y = randn(s, g, kFloat64);
    Capture c = capture(fn, {x, y});
    optimize(c.graph);
    prepare_kernels(c.graph);
    ASSERT_EQ(fused_calls(c.graph), 1);
    const Tensor x2 = randn({3, 5, 7}, g, kFloat64), y2 = randn(s, g, kFloat64);
    EXPECT_TRUE(same_bits(run(c.graph, {x2, y2})[0], fn({x2, y2})[0]));
    EXPECT_TRUE(same_bits(run(c.graph, {x2.transpose(0, 2).contiguous().transpose(0, 2), y2})[0], fn({x2, y2})[0]))
        << "a non-contiguous input";
  }
}

TEST(CompileFusion, GroupsCloseWhereAnotherOpReadsThem) {
  Capture c = capture(
      [](const Inputs& in) {
        Tensor h = tanh(in[0] * 2.0) + 1.0;           // a group of three
        Tensor s = matmul(h, in[1]);                  // reads it: the group closes before
        return Inputs{exp(in[0] - s) * h, s};         // a second group, reading h again
      },
      {ones({4, 6}), ones({6, 1})});
  optimize(c.graph);
  prepare_kernels(c.graph);
  EXPECT_EQ(fused_calls(c.graph), 2);
  ASSERT_EQ(c.graph.calls.size(), 3u);
  EXPECT_EQ(c.graph.calls[1].op, "matmul");
  EXPECT_EQ(c.graph.calls[0].results.size(), 1u);  // h, which matmul and the second group read
  NoGradGuard no_grad;
  Generator g(3);
  const Tensor x = randn({4, 6}, g), w = randn({6, 1}, g);
  const Inputs got = run(c.graph, {x, w});
  const Tensor h = tanh(x * 2.0) + 1.0, s = matmul(h, w);
  EXPECT_TRUE(same_bits(got[0], exp(x - s) * h));
  EXPECT_TRUE(same_bits(got[1], s));
}

// A sum at the end of a chain joins it: the kernel adds each value up as it
// computes it, in eager's order (rows: eight partial sums in double, as
// tensor/reduce.cpp's row_sum; leading dims: each column in row order), so
// the sum has eager's bits too. Sums over a middle dim, or over one row
// longer than eager adds in one go, stay calls of their own.
TEST(CompileFusion, ASumEndsTheChainThatFeedsIt) {
  struct Case {
    const char* what;
    Shape shape;
    std::function<Tensor(const Tensor&, const Tensor&)> f;
    bool fused;
  };
  const std::vector<Case> cases = {
      {"rows, keepdim (softmax's backward)", {37, 700}, [](const Tensor& x, const Tensor& y) { return (x * y).sum({-1}, true); }, true},
      {"rows of 3 dims", {3, 5, 9}, [](const Tensor& x, const Tensor& y) { return exp(x - y).sum({1, 2}); }, true},
      {"every element", {41, 3}, [](const Tensor& x, const Tensor& y) { return (tanh(x) * y).sum(); }, true},
      {"a bias's gradient (sum_to)", {4, 6, 130}, [](const Tensor& x, const Tensor& y) { return sum_to(gelu(x) * y, {130}); }, true},
      {"leading dims", {600, 3, 4}, [](const Tensor& x, const Tensor& y) { return (x + y).sum({0}, true); }, true},
      {"a middle dim", {3, 5, 7}, [](const Tensor& x, const Tensor& y) { return (x * y).sum({1}); }, false},
      {"one long row", {20000}, [](const Tensor& x, const Tensor& y) { return (x * y).sum(); }, false},
  };
  for (const Case& k : cases)
    for (DType dt : {kFloat32, kFloat64}) {
      SCOPED_TRACE(std::string(k.what) + " in " + dtype_name(dt));
      const auto fn = [&](const Inputs& in) { return Inputs{k.f(in[0], in[1]), in[0] * in[1]}; };
      Capture c = capture(fn, {zeros(k.shape, dt), zeros(k.shape, dt)});
      optimize(c.graph);
      prepare_kernels(c.graph);
      bool summed = false;
      for (const Call& call : c.graph.calls) summed = summed || (call.fused && call.fused->sum);
      EXPECT_EQ(summed, k.fused) << to_string(c.graph);
      Generator g(8);
      const Tensor x = randn(k.shape, g, dt), y = randn(k.shape, g, dt);
      NoGradGuard no_grad;
      const Inputs got = run(c.graph, {x, y}), want = fn({x, y});
      EXPECT_TRUE(same_bits(got[0], want[0])) << to_string(c.graph);
      EXPECT_TRUE(same_bits(got[1], want[1]));
    }
}

// The instruments see a fused kernel as one op named by the ops it holds,
// with its work: inputs read once, the output written once.
TEST(CompileFusion, TheProfilerSeesTheKernelByItsOps) {
  struct Names : AutogradObserver, TensorObserver {
    std::vector<std::string> ops;
    double read = 0, written = 0;
    void op_begin(const char* op, const std::vector<const Tensor*>&) override { ops.push_back(op); }
    void allocated(const void*, size_t) override {}
    void freed(const void*, size_t) override {}
    void work(double, double r, double w) override {
      read += r;
      written += w;
    }
  } names;
  Compiled f = compile(bias_gelu_scale);
  const Tensor x = ones({64, 32}), b = ones({32});
  NoGradGuard no_grad;
  f({x, b});  // captured
  set_autograd_observer(&names);
  set_tensor_observer(&names);
  f({x, b});
  set_autograd_observer(nullptr);
  set_tensor_observer(nullptr);
  EXPECT_EQ(names.ops, (std::vector<std::string>{"fused[add,gelu,mul]"}));
  EXPECT_EQ(names.read, (64 * 32 + 32) * 4.0);
  EXPECT_EQ(names.written, 64 * 32 * 4.0);
}

TEST(CompileFusion, WithAutogradAGroupRunsItsOps) {
  Compiled f = compile(bias_gelu_scale);
  Generator g(4);
  auto leaf = [&](Shape s) { return randn(s, g, kFloat64).requires_grad_(); };
  f({leaf({3, 5}), leaf({5})});
  const Inputs in = {leaf({3, 5}), leaf({5})};
  const Tensor y = f(in)[0];
  ASSERT_NE(y.grad_fn(), nullptr);
  const Inputs ge = grad({bias_gelu_scale(in)[0].sum()}, in), gc = grad({y.sum()}, in);
  EXPECT_TRUE(same_bits(gc[0], ge[0]));
  EXPECT_TRUE(same_bits(gc[1], ge[1]));
  const GradcheckResult r = gradcheck([&](const Inputs& x) { return f(x)[0]; }, {leaf({3, 5}), leaf({5})});
  EXPECT_TRUE(r.ok) << r.report;
}

// ---- the cache ----

std::string kernel_source(double scale) {
  Capture c = capture([&](const Inputs& in) { return Inputs{exp(in[0]) * scale}; }, {ones({10})});
  optimize(c.graph);
  Fused f = *c.graph.calls.at(0).fused;
  return generate(f, c.graph.calls[0].results, c.graph);
}

TEST(CompileCache, CompiledOnceThenLoadedFromDisk) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ember_kernels_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ScopedEnv cache("EMBER_KERNEL_CACHE", dir.string());
  // a source no other test makes (a scale of its own), so this process has not loaded it
  const std::string src = kernel_source(1.0 + 1.0 / (1 << 20));
  const KernelStats before = kernel_stats();
  const LoadedKernel k = load_kernel(src);
  EXPECT_TRUE(k.compiled);
  EXPECT_EQ(kernel_stats().compiled, before.compiled + 1);
  EXPECT_TRUE(fs::exists(k.file));
  EXPECT_TRUE(fs::exists(fs::path(k.file).replace_extension(".cpp")));
  EXPECT_FALSE(load_kernel(src).compiled);  // in memory
  EXPECT_EQ(kernel_stats().from_memory, before.from_memory + 1);
  EXPECT_NE(load_kernel(kernel_source(2.0)).file, k.file);  // another source, another file
  // (another process finds it on disk: examples/compile_tour, run twice by CTest)
  fs::remove_all(dir);
}

TEST(CompileCache, AMissingCompilerOrAFailedCompileIsNamed) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ember_kernels_bad_" + std::to_string(::getpid()));
  ScopedEnv cache("EMBER_KERNEL_CACHE", dir.string());
  {
    ScopedEnv cxx("EMBER_CXX", "/nonexistent/c++");
    expect_error([] { load_kernel(kernel_source(3.0)); }, "compile", {"no C++ compiler '/nonexistent/c++'", "EMBER_CXX"});
  }
  expect_error([] { load_kernel("this is not C++\n"); }, "compile", {"did not compile", ".cpp", "error"});
  fs::remove_all(dir);
}

}  // namespace
