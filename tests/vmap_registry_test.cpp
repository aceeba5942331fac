// The vmap check over the whole gradcheck registry, as gradcheck is run
// over it: every op and module under vmap equals a loop over the batch of
// the op itself,
//   * for every combination of mapped and unmapped inputs (every one of them
//     for up to 4 inputs; each alone and all together beyond), with the
//     batch at dim 0, at the last dim, and in the middle;
//   * for a zero-size batch (the shapes a loop would give);
//   * nested: vmap of vmap, two batch levels;
//   * backward too: vmap of grad() of the op (per-sample gradients), which
//     runs the batching rules of the backward pass's ops (sum_to, the fused
//     ops' backward kernels).
// Bit for bit (NaN where the loop has NaN), except the entries listed
// below, whose batched run rounds differently: those within 1e-12 relative
// (the samples are float64).
// And every op that a graph can hold has a batching rule, or is listed below
// with the reason it loops.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "autograd/batching.h"
#include "autograd/engine.h"
#include "compile/op_table.h"
#include "compile_checks.h"
#include "registry.h"
#include "test_util.h"
#include "vmap/vmap.h"
#include "vmap_checks.h"

namespace {

using namespace ember;
using ember::compile_checks::test_name;
using ember::test::expect_error;
using ember::vmap_checks::loop_over_batch;
using Inputs = std::vector<Tensor>;
using Dims = std::vector<std::optional<int64_t>>;

// Entries vmap refuses (compile/'s capture cannot hold them), and the words of the refusal.
const std::map<std::string, std::string> kRefused = {
    {"nn.checkpoint(TransformerBlock)", "op checkpoint (1 arguments) has no capture rule"},
};

// Ops of compile/op_table.h without a batching rule, and why that is right
// (none today: every op has one; some rules loop for some arguments, as
// embedding with a weight per sample does).
const std::map<std::string, std::string> kLoops = {};

// Entries whose batched run rounds differently from the loop (the bound
// above applies to them; every other entry must agree to the bit):
// a batched product is one GEMM of other shapes than the loop's (matmul and
// the modules with a Linear), and a sum runs over another dim of the batch
// than the sample's last, in another order (cross-entropy per sample,
// softmax's backward, sum_to's).
const std::set<std::string> kRoundsForward = {"matmul", "cross_entropy", "nn.LMHead", "nn.TransformerBlock"};
const std::set<std::string> kRoundsBackward = {
    "cross_entropy", "expand", "log_softmax", "softmax", "scaled_softmax", "scaled_softmax(causal)", "nn.Linear",
    "nn.AdditiveAttention", "nn.MultiHeadAttention", "nn.MultiHeadAttention(causal)", "nn.sdpa", "nn.sdpa(causal)",
    "nn.TransformerBlock"};

::testing::AssertionResult close(const Tensor& got, const Tensor& want, bool exact) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << "shape " << shape_str(got.shape()) << " " << dtype_name(got.dtype())
                                         << " vs " << shape_str(want.shape()) << " " << dtype_name(want.dtype());
  const std::vector<double> a = got.to_vector<double>(), b = want.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i]) ? std::isnan(a[i])
                         : (a[i] == b[i] || (!exact && std::abs(a[i] - b[i]) <= 1e-12 * (1 + std::abs(b[i])))))
      continue;
    return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i];
  }
  return ::testing::AssertionSuccess();
}

// x's elements in reverse order, in x's shape.
Tensor reversed(const Tensor& x) {
  std::vector<int64_t> ids;
  for (int64_t i = x.numel() - 1; i >= 0; --i) ids.push_back(i);
  return x.reshape({-1}).index_select(0, tensor(ids)).reshape(x.shape());
}

// B samples of x: x itself, then (floats) x plus a little noise, (ids, masks)
// x's elements in reverse order, which keeps every id valid.
Inputs variants(const Tensor& x, int64_t size, Generator& g) {
  Inputs out{x.detach()};
  for (int64_t b = 1; b < size; ++b) {
    if (x.is_floating_point())
      out.push_back(x.detach() + randn(x.shape(), g, x.dtype()) * 0.1);
    else
      out.push_back(b % 2 ? reversed(x.detach()) : x.detach());
  }
  return out;
}

// The batch of each input, stacked at `where` (0 first, 1 last, 2 middle).
Tensor batch_of(const Tensor& x, int64_t size, int where, int64_t& dim, Generator& g) {
  dim = where == 0 ? 0 : where == 1 ? x.dim() : x.dim() / 2;
  if (size == 0) {
    Shape s = x.shape();
    s.insert(s.begin() + dim, 0);
    return zeros(s, x.dtype());
  }
  return stack(variants(x, size, g), dim);
}

std::vector<uint32_t> combinations(size_t n) {
  std::vector<uint32_t> masks;
  if (n <= 4) {
    for (uint32_t m = 1; m < (1u << n); ++m) masks.push_back(m);
  } else {
    for (size_t i = 0; i < n; ++i) masks.push_back(1u << i);
    masks.push_back((1u << n) - 1);
  }
  return masks;
}

class VmapRegistry : public ::testing::TestWithParam<samples::OpInfo> {};

TEST_P(VmapRegistry, EqualsTheLoopOverTheBatch) {
  const samples::OpInfo& op = GetParam();
  Generator g1(2024), noise(7);
  const std::vector<samples::OpSample> draws = op.samples(g1);
  const BatchFn fn = [&](const Inputs& in) { return Inputs{op.fn(in)}; };
  const VmapOptions same{.randomness = Randomness::Same};  // modules built inside fn from a fixed seed
  const bool exact = !kRoundsForward.count(op.name);
  for (const samples::OpSample& s : draws) {
    SCOPED_TRACE(op.name + " on " + s.label);
    const size_t n = s.inputs.size();
    if (kRefused.count(op.name)) {
      Inputs two;
      for (const Tensor& x : s.inputs) two.push_back(stack({x.detach(), x.detach()}));
      expect_error([&] { vmap(fn, same)(two); }, "vmap", {kRefused.at(op.name)});
      continue;
    }
    for (uint32_t mask : combinations(n)) {
      for (int where = 0; where < 3; ++where) {
        for (int64_t size : {int64_t{3}, int64_t{0}}) {
          if (size == 0 && (where != 0 || mask != (1u << n) - 1)) continue;  // one zero-size case per sample
          SCOPED_TRACE(testing::Message() << "mask " << mask << " at " << where << " batch " << size);
          Inputs in;
          Dims dims;
          for (size_t i = 0; i < n; ++i) {
            if (!(mask >> i & 1u)) {
              in.push_back(s.inputs[i].detach());
              dims.push_back(not_mapped);
              continue;
            }
            int64_t d = 0;
            in.push_back(batch_of(s.inputs[i], size, where, d, noise));
            dims.push_back(d);
          }
          VmapOptions o = same;
          o.in_dims = dims;
          const Tensor got = vmap(fn, o)(in)[0];
          if (size == 0) {
            Inputs one;
            for (const Tensor& x : s.inputs) one.push_back(x.detach());
            Shape want = fn(one)[0].shape();
            want.insert(want.begin(), 0);
            EXPECT_EQ(shape_str(got.shape()), shape_str(want));
            continue;
          }
          EXPECT_TRUE(close(got, loop_over_batch(fn, in, dims)[0], exact));
        }
      }
    }
    // nested: two batch levels over every input
    Inputs in;
    for (const Tensor& x : s.inputs) {
      Inputs outer;
      for (const Tensor& v : variants(x, 2, noise)) outer.push_back(stack(variants(v, 3, noise), 0));
      in.push_back(stack(outer, 0));  // (2, 3, *x)
    }
    const Tensor got = vmap(vmap(fn, same), same)(in)[0];
    const BatchFn inner_loop = [&](const Inputs& xs) { return loop_over_batch(fn, xs, Dims(n, int64_t{0})); };
    EXPECT_TRUE(close(got, loop_over_batch(inner_loop, in, Dims(n, int64_t{0}))[0], exact)) << "nested";
  }
}

INSTANTIATE_TEST_SUITE_P(Vmap, VmapRegistry, ::testing::ValuesIn(samples::op_registry()), test_name);

// Per-sample gradients of every op: vmap of grad(<op(inputs), seed>) with
// every input and the seed mapped, against the loop of grad.
class VmapGradRegistry : public ::testing::TestWithParam<samples::OpInfo> {};

TEST_P(VmapGradRegistry, PerSampleGradientsEqualTheLoopOfGrad) {
  const samples::OpInfo& op = GetParam();
  if (kRefused.count(op.name)) GTEST_SKIP() << "refused under vmap (see VmapRegistry)";
  Generator g1(2024), noise(9);
  for (const samples::OpSample& s : op.samples(g1)) {
    SCOPED_TRACE(op.name + " on " + s.label);
    const Tensor y = op.fn(s.inputs);
    if (!y.requires_grad()) continue;
    const size_t n = s.inputs.size();
    const BatchFn fn = compile_checks::gradients_of(op, n);
    Inputs in;
    for (const Tensor& x : s.inputs) in.push_back(stack(variants(x, 3, noise), 0).requires_grad_(x.requires_grad()));
    in.push_back(stack(variants(randn(y.shape(), noise, y.dtype()), 3, noise), 0));
    const Dims dims(n + 1, int64_t{0});
    const Inputs got = vmap(fn, {.in_dims = dims, .randomness = Randomness::Same})(in);
    const Inputs want = loop_over_batch(fn, in, dims);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_TRUE(close(got[k], want[k], !kRoundsBackward.count(op.name))) << "gradient " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Vmap, VmapGradRegistry, ::testing::ValuesIn(samples::op_registry()), test_name);

// Every op a graph can hold has a batching rule, or loops for a stated reason.
TEST(VmapRules, EveryCapturableOpHasARuleOrAReasonToLoop) {
  std::set<std::string> missing;
  for (const compiler::OpRule& r : compiler::op_rules())
    if (!batching::find_rule(r.op) && !kLoops.count(r.op) && !r.composite) missing.insert(r.op);
  std::string names;
  for (const std::string& m : missing) names += m + " ";
  EXPECT_TRUE(missing.empty()) << "no batching rule (autograd/ops/<family>.cpp) and no reason to loop: " << names;
  for (const auto& [op, why] : kLoops) EXPECT_EQ(batching::find_rule(op), nullptr) << op << " has a rule now";
}

}  // namespace
