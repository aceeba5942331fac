// nn::Module (the named tree of parameters, buffers and children) and nn::init
// (the seeded initializers), checked by value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nn/embedding.h"
#include "nn/init.h"
#include "nn/module.h"
#include "test_util.h"

namespace {

using namespace ember;
using ember::test::expect_error;
using ember::test::values;

// ---- small modules built only for these tests ----

// One parameter and one buffer, like a normalization layer with running stats.
class Leaf : public nn::Module {
 public:
  Leaf(int64_t n, uint64_t seed) {
    Generator g(seed);
    weight = register_parameter("weight", randn({n, 2}, g));
    bias = register_parameter("bias", zeros({2}));
    running = register_buffer("running", zeros({2}));
  }
  std::string type_name() const override { return "Leaf"; }
  std::string extra_repr() const override { return "n=" + std::to_string(weight.size(0)); }
  // Exposes the protected registration calls to the tests.
  void add_parameter(const std::string& name, const Tensor& t) { register_parameter(name, t); }
  void add_buffer(const std::string& name, const Tensor& t) { register_buffer(name, t); }
  Tensor weight, bias, running;
};

// Two levels of children: Tree(first: Leaf, inner: Inner(leaf: Leaf)).
class Inner : public nn::Module {
 public:
  Inner() { leaf = register_module("leaf", std::make_shared<Leaf>(3, 2)); }
  std::string type_name() const override { return "Inner"; }
  std::shared_ptr<Leaf> leaf;
};
class Tree : public nn::Module {
 public:
  Tree() {
    first = register_module("first", std::make_shared<Leaf>(4, 1));
    inner = register_module("inner", std::make_shared<Inner>());
    scale = register_parameter("scale", ones({1}));
  }
  std::string type_name() const override { return "Tree"; }
  template <typename M>
  void add_module(const std::string& name, std::shared_ptr<M> m) { register_module(name, m); }
  std::shared_ptr<Leaf> first;
  std::shared_ptr<Inner> inner;
  Tensor scale;
};

// A language model's two ends: token embedding and LM head, optionally tied.
class TinyLM : public nn::Module {
 public:
  TinyLM(int64_t V, int64_t D, bool tied) {
    embed = register_module("embed", std::make_shared<nn::Embedding>(V, D, nn::EmbeddingOptions{.generator = test::seeded(1)}));
    head = register_module("head", std::make_shared<nn::LMHead>(D, V, nn::InitOptions{.generator = test::seeded(2)}));
    if (tied) nn::tie_weights(*head, *embed);
  }
  std::string type_name() const override { return "TinyLM"; }
  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::LMHead> head;
};

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (const auto& [n, _] : named) out.push_back(n);
  return out;
}

// ---- the tree of names ----

TEST(NnModule, NamedParametersAreDottedAndRecursive) {
  Tree t;
  // Own parameters first, then each child's, depth-first in registration order.
  EXPECT_EQ(names_of(t.named_parameters()),
            (std::vector<std::string>{"scale", "first.weight", "first.bias", "inner.leaf.weight", "inner.leaf.bias"}));
  // The names lead to the very tensors the modules hold.
  auto named = t.named_parameters();
  EXPECT_TRUE(named[1].second.is_same(t.first->weight));
  EXPECT_TRUE(named[3].second.is_same(t.inner->leaf->weight));
  // parameters() is the same list without names.
  std::vector<Tensor> ps = t.parameters();
  ASSERT_EQ(ps.size(), 5u);
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_TRUE(ps[i].is_same(named[i].second)) << i;
  for (const Tensor& p : ps) EXPECT_TRUE(p.requires_grad());
}

TEST(NnModule, NamedBuffersAndModules) {
  Tree t;
  EXPECT_EQ(names_of(t.named_buffers()), (std::vector<std::string>{"first.running", "inner.leaf.running"}));
  std::vector<std::string> mods;
  for (const auto& [n, m] : t.named_modules()) mods.push_back(n + ":" + m->type_name());
  EXPECT_EQ(mods, (std::vector<std::string>{":Tree", "first:Leaf", "inner:Inner", "inner.leaf:Leaf"}));
}

TEST(NnModule, NumParametersCountsScalars) {
  Tree t;
  // scale 1 + first (4*2 + 2) + inner.leaf (3*2 + 2); buffers do not count.
  EXPECT_EQ(t.num_parameters(), 1 + 10 + 8);
}

TEST(NnModule, BuffersAreNeverParameters) {
  nn::SinusoidalPositionalEmbedding pos(16, 8);
  EXPECT_TRUE(pos.parameters().empty());
  EXPECT_EQ(pos.num_parameters(), 0);
  EXPECT_EQ(names_of(pos.named_buffers()), (std::vector<std::string>{"table"}));
  EXPECT_FALSE(pos.table.requires_grad());

  nn::EmbeddingComposer c(std::make_shared<nn::Embedding>(10, 8), std::make_shared<nn::SinusoidalPositionalEmbedding>(16, 8));
  EXPECT_EQ(names_of(c.named_parameters()), (std::vector<std::string>{"token.weight"}));
  EXPECT_EQ(names_of(c.named_buffers()), (std::vector<std::string>{"positional.table"}));
  EXPECT_EQ(c.num_parameters(), 10 * 8);
}

TEST(NnModule, LookupByLocalName) {
  Leaf l(2, 0);
  EXPECT_TRUE(l.parameter("bias").is_same(l.bias));
  EXPECT_TRUE(l.buffer("running").is_same(l.running));
  expect_error([&] { l.parameter("running"); }, {"Leaf", "no parameter named \"running\""});
  expect_error([&] { l.buffer("weight"); }, {"Leaf", "no buffer named \"weight\""});
}

TEST(NnModule, DuplicateOrInvalidNamesAreRejected) {
  Leaf l(2, 0);
  expect_error([&] { l.add_parameter("weight", zeros({2})); }, {"Leaf", "name \"weight\" is already registered"});
  // One namespace for parameters, buffers and children.
  expect_error([&] { l.add_buffer("bias", zeros({2})); }, {"Leaf", "\"bias\" is already registered"});
  expect_error([&] { l.add_parameter("a.b", zeros({2})); }, {"Leaf", "invalid name \"a.b\""});
  expect_error([&] { l.add_parameter("", zeros({2})); }, {"Leaf", "invalid name \"\""});
  expect_error([&] { l.add_parameter("ids", tensor(std::vector<int64_t>{1, 2})); },
               {"Leaf", "parameter \"ids\" must be a defined floating tensor"});
  Tree t;
  expect_error([&] { t.add_module("first", std::make_shared<Leaf>(1, 0)); }, {"Tree", "\"first\" is already registered"});
  expect_error([&] { t.add_module("scale", std::make_shared<Leaf>(1, 0)); }, {"Tree", "\"scale\" is already registered"});
  // A failed registration leaves the module as it was.
  EXPECT_EQ(l.named_parameters().size(), 2u);
  EXPECT_EQ(t.named_modules().size(), 4u);
}

// ---- gradients and modes ----

TEST(NnModule, ZeroGradSetsToNoneOrFillsZeros) {
  Tree t;
  Tensor loss = (t.first->weight.sum() + t.first->bias.sum() + t.inner->leaf->weight.pow(2.0).sum() +
                 t.inner->leaf->bias.sum()) *
                t.scale;
  loss.sum().backward();
  for (const Tensor& p : t.parameters()) ASSERT_TRUE(p.grad().defined());
  EXPECT_EQ(values(t.first->weight.grad()), std::vector<double>(8, 1.0));  // d/dw of sum(w) * scale(=1)

  t.zero_grad(/*set_to_none=*/false);
  for (const auto& [name, p] : t.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_EQ(values(p.grad()), std::vector<double>(p.numel(), 0.0)) << name;
  }
  t.zero_grad();  // the default: set to none
  for (const auto& [name, p] : t.named_parameters()) EXPECT_FALSE(p.grad().defined()) << name;
  // zero-fill on parameters without a grad leaves them without one
  t.zero_grad(false);
  for (const auto& [name, p] : t.named_parameters()) EXPECT_FALSE(p.grad().defined()) << name;
}

TEST(NnModule, TrainAndEvalAreRecursive) {
  Tree t;
  for (const auto& [n, m] : t.named_modules()) EXPECT_TRUE(m->is_training()) << n;
  t.eval();
  for (const auto& [n, m] : t.named_modules()) EXPECT_FALSE(m->is_training()) << n;
  t.inner->train();  // a subtree only
  EXPECT_FALSE(t.is_training());
  EXPECT_FALSE(t.first->is_training());
  EXPECT_TRUE(t.inner->is_training());
  EXPECT_TRUE(t.inner->leaf->is_training());
  t.train();
  for (const auto& [n, m] : t.named_modules()) EXPECT_TRUE(m->is_training()) << n;
}

// ---- printing ----

TEST(NnModule, ToStringOfTheComposer) {
  nn::EmbeddingComposer learned(std::make_shared<nn::Embedding>(100, 16),
                                std::make_shared<nn::LearnedPositionalEmbedding>(32, 16));
  EXPECT_EQ(learned.to_string(),
            "EmbeddingComposer(\n"
            "  (token): Embedding(100, 16)\n"
            "  (positional): LearnedPositionalEmbedding(32, 16)\n"
            ")");
  nn::EmbeddingComposer sinusoidal(std::make_shared<nn::Embedding>(100, 16, nn::EmbeddingOptions{.padding_idx = 0, .generator = test::seeded(0)}),
                                   std::make_shared<nn::SinusoidalPositionalEmbedding>(32, 16));
  std::ostringstream os;
  os << sinusoidal;  // operator<< is to_string()
  EXPECT_EQ(os.str(),
            "EmbeddingComposer(\n"
            "  (token): Embedding(100, 16, padding_idx=0)\n"
            "  (positional): SinusoidalPositionalEmbedding(32, 16)\n"
            ")");
  nn::EmbeddingComposer token_only(std::make_shared<nn::Embedding>(5, 2), nullptr);
  EXPECT_EQ(token_only.to_string(), "EmbeddingComposer(\n  (token): Embedding(5, 2)\n)");
}

TEST(NnModule, ToStringIndentsNestedChildren) {
  Tree t;
  EXPECT_EQ(t.to_string(),
            "Tree(\n"
            "  (first): Leaf(n=4)\n"
            "  (inner): Inner(\n"
            "    (leaf): Leaf(n=3)\n"
            "  )\n"
            ")");
  TinyLM tied(7, 3, true);
  EXPECT_EQ(tied.to_string(),
            "TinyLM(\n"
            "  (embed): Embedding(7, 3)\n"
            "  (head): LMHead(in=3, out=7, tied)\n"
            ")");
  EXPECT_EQ(TinyLM(7, 3, false).head->to_string(), "LMHead(in=3, out=7)");
}

// ---- weight tying seen from the module tree ----

TEST(NnModule, TiedParameterIsListedAndCountedOnce) {
  const int64_t V = 11, D = 4;
  TinyLM untied(V, D, false);
  EXPECT_EQ(names_of(untied.named_parameters()), (std::vector<std::string>{"embed.weight", "head.weight"}));
  EXPECT_EQ(untied.num_parameters(), 2 * V * D);

  TinyLM tied(V, D, true);
  EXPECT_EQ(names_of(tied.named_parameters()), (std::vector<std::string>{"embed.weight"}));  // first name wins
  ASSERT_EQ(tied.parameters().size(), 1u);
  EXPECT_TRUE(tied.parameters()[0].is_same(tied.embed->weight));
  EXPECT_TRUE(tied.head->weight.is_same(tied.embed->weight));
  EXPECT_EQ(tied.num_parameters(), V * D);
  // Each module on its own still owns the matrix.
  EXPECT_EQ(tied.head->num_parameters(), V * D);
  EXPECT_TRUE(tied.head->parameter("weight").is_same(tied.embed->weight));

  // zero_grad clears the one shared .grad
  Tensor ids = tensor(std::vector<int64_t>{1, 2}, {1, 2});
  tied.head->forward(tied.embed->forward(ids)).sum().backward();
  EXPECT_TRUE(tied.embed->weight.grad().defined());
  tied.zero_grad();
  EXPECT_FALSE(tied.head->weight.grad().defined());
}

// A tied weight whose .grad has a graph of its own (backward with
// create_graph) makes the cycle weight -> .grad -> graph -> weight, through
// both modules that hold it: it is broken when the modules go, so the memory
// returns, whichever goes first.
TEST(NnModule, ATiedWeightsGradWithAGraphIsReleasedWithItsModules) {
  Tensor ids = tensor(std::vector<int64_t>{1, 2}, {1, 2});
  for (bool head_first : {false, true}) {
    SCOPED_TRACE(head_first ? "the head goes first" : "the embedding goes first");
    std::weak_ptr<TensorImpl> weight, grad_of_weight;
    {
      auto embed = std::make_shared<nn::Embedding>(11, 4);
      auto head = std::make_shared<nn::LMHead>(4, 11);
      nn::tie_weights(*head, *embed);
      pow(head->forward(embed->forward(ids)), 2.0).sum().backward(Tensor(), false, /*create_graph=*/true);
      ASSERT_TRUE(embed->weight.grad().grad_fn());
      weight = embed->weight.impl_ptr();
      grad_of_weight = embed->weight.grad().impl_ptr();
      if (head_first) head.reset();
      else embed.reset();
    }
    EXPECT_TRUE(weight.expired());
    EXPECT_TRUE(grad_of_weight.expired());
  }
}

// ---- nn::init ----

struct Moments {
  double mean, var, min, max;
};
Moments moments(const Tensor& t) {
  std::vector<double> v = values(t);
  double s = 0, s2 = 0;
  for (double x : v) s += x;
  double mean = s / static_cast<double>(v.size());
  for (double x : v) s2 += (x - mean) * (x - mean);
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {mean, s2 / static_cast<double>(v.size() - 1), *lo, *hi};
}

// n i.i.d. samples of a distribution with variance var: the sample mean is
// within 5 standard errors (sqrt(var / n)) of the true mean, except with
// probability ~6e-7. The sample variance's standard error is about
// var * sqrt(kurtosis-term / n); 5 of those (kurtosis term <= 2) bound it.
constexpr int64_t kN = 200'000;
double mean_tol(double var) { return 5.0 * std::sqrt(var / kN); }
double var_tol(double var) { return 5.0 * var * std::sqrt(2.0 / kN); }

TEST(NnInit, NormalMomentsAndDeterminism) {
  Tensor w = empty({kN / 100, 100});
  Generator g(42);
  nn::init::normal_(w, 0.5, 2.0, g);
  Moments m = moments(w);
  EXPECT_NEAR(m.mean, 0.5, mean_tol(4.0));
  EXPECT_NEAR(m.var, 4.0, var_tol(4.0));
  // 200k normal samples reach beyond 4 sigma on both sides.
  EXPECT_LT(m.min, 0.5 - 4 * 2.0);
  EXPECT_GT(m.max, 0.5 + 4 * 2.0);

  Tensor again = empty({kN / 100, 100}), other = empty({kN / 100, 100});
  Generator g2(42), g3(43);
  nn::init::normal_(again, 0.5, 2.0, g2);
  nn::init::normal_(other, 0.5, 2.0, g3);
  EXPECT_EQ(values(again), values(w));
  EXPECT_NE(values(other), values(w));
}

TEST(NnInit, UniformBoundsAndMoments) {
  Tensor w = empty({kN}, kFloat64);
  Generator g(7);
  nn::init::uniform_(w, -3.0, 1.0, g);
  Moments m = moments(w);
  // U[lo, hi): mean (lo+hi)/2, variance (hi-lo)^2/12; samples fill the interval.
  EXPECT_NEAR(m.mean, -1.0, mean_tol(16.0 / 12));
  EXPECT_NEAR(m.var, 16.0 / 12, var_tol(16.0 / 12));
  EXPECT_GE(m.min, -3.0);
  EXPECT_LT(m.max, 1.0);
  EXPECT_LT(m.min, -3.0 + 1e-3);
  EXPECT_GT(m.max, 1.0 - 1e-3);

  Tensor again = empty({kN}, kFloat64);
  Generator g2(7);
  nn::init::uniform_(again, -3.0, 1.0, g2);
  EXPECT_EQ(values(again), values(w));
}

TEST(NnInit, ZerosOnAParameterRecordsNothing) {
  Generator g(0);
  Tensor w = randn({3, 4}, g).requires_grad_();
  uint64_t v0 = w.version();
  nn::init::zeros_(w);  // allowed on a leaf that requires grad: init runs without grad
  EXPECT_EQ(values(w), std::vector<double>(12, 0.0));
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_GT(w.version(), v0);  // an in-place write all the same
  nn::init::normal_(w, 0.0, 1.0, g);
  EXPECT_TRUE(w.is_leaf());
  EXPECT_NE(values(w), std::vector<double>(12, 0.0));
}

TEST(NnInit, XavierUniformBound) {
  // (out, in) = (300, 200): bound = gain * sqrt(6 / (fan_in + fan_out)) = gain * sqrt(6 / 500)
  for (double gain : {1.0, 2.0}) {
    Tensor w = empty({300, 200}, kFloat64);
    Generator g(1);
    nn::init::xavier_uniform_(w, g, gain);
    double bound = gain * std::sqrt(6.0 / 500.0);
    Moments m = moments(w);
    EXPECT_GE(m.min, -bound);
    EXPECT_LT(m.max, bound);
    EXPECT_LT(m.min, -0.999 * bound);
    EXPECT_GT(m.max, 0.999 * bound);
    double var = bound * bound / 3;  // U(-b, b)
    EXPECT_NEAR(m.mean, 0.0, 5.0 * std::sqrt(var / 60000));
    EXPECT_NEAR(m.var, var, 5.0 * var * std::sqrt(2.0 / 60000));
  }
  // A conv-like (out, in, kh, kw) weight: fans include the receptive field 3*3.
  Tensor conv = empty({8, 4, 3, 3}, kFloat64);
  Generator g(2);
  nn::init::xavier_uniform_(conv, g);
  double bound = std::sqrt(6.0 / (4 * 9 + 8 * 9));
  Moments m = moments(conv);
  EXPECT_GE(m.min, -bound);
  EXPECT_LT(m.max, bound);
  EXPECT_GT(m.max, 0.9 * bound);
}

TEST(NnInit, KaimingUniformBound) {
  // bound = sqrt(6 / ((1 + a^2) * fan_in)); a = sqrt(5) gives 1/sqrt(fan_in) (PyTorch's Linear)
  for (double a : {0.0, std::sqrt(5.0)}) {
    Tensor w = empty({400, 150}, kFloat64);
    Generator g(3);
    nn::init::kaiming_uniform_(w, g, a);
    double bound = std::sqrt(6.0 / ((1 + a * a) * 150));
    if (a > 0) {
      EXPECT_NEAR(bound, 1.0 / std::sqrt(150.0), 1e-15);
    }
    Moments m = moments(w);
    EXPECT_GE(m.min, -bound);
    EXPECT_LT(m.max, bound);
    EXPECT_LT(m.min, -0.999 * bound);
    EXPECT_GT(m.max, 0.999 * bound);
    double var = bound * bound / 3;
    EXPECT_NEAR(m.var, var, 5.0 * var * std::sqrt(2.0 / 60000));
  }
}

TEST(NnInit, FanNeedsTwoDims) {
  Tensor v = empty({5});
  Generator g(0);
  expect_error([&] { nn::init::xavier_uniform_(v, g); }, {"xavier_uniform_", "at least 2 dims", "(5)"});
  expect_error([&] { nn::init::kaiming_uniform_(v, g); }, {"kaiming_uniform_", "at least 2 dims"});
}

TEST(NnInit, ModulesInitFromTheirSeed) {
  // The lesson: normal(0, 0.02), the same values for the same seed.
  nn::Embedding a(1000, 64, {.generator = test::seeded(5)}), b(1000, 64, {.generator = test::seeded(5)}),
      c(1000, 64, {.generator = test::seeded(6)});
  EXPECT_EQ(values(a.weight), values(b.weight));
  EXPECT_NE(values(a.weight), values(c.weight));
  Moments m = moments(a.weight);
  EXPECT_NEAR(m.mean, 0.0, 5.0 * 0.02 / std::sqrt(64000.0));
  EXPECT_NEAR(std::sqrt(m.var), 0.02, 0.02 * 5.0 * std::sqrt(0.5 / 64000.0));
  // Passing a Generator continues its stream: two modules from one generator differ.
  Generator g(5);
  nn::Embedding first(1000, 64, {.generator = &g}), second(1000, 64, {.generator = &g});
  EXPECT_EQ(values(first.weight), values(a.weight));
  EXPECT_NE(values(second.weight), values(first.weight));
}

}  // namespace
