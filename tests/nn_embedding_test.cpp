// The embedding lesson's modules (nn/embedding.h), checked by value:
//   Embedding           lookup, the scatter-add gradient, errors, padding_idx, from_pretrained
//   LMHead              weight tying: one matrix, two roles, gradients that add
//   positional modules  shapes, broadcast over the batch, the sinusoidal closed form
//                       and its rotation property, the maximum length
//   lesson B            "The cat sleeps" with the 5x2 table
//   gradcheck           every module in float64, and the registry entries
//
// Legend: B batch, T sequence length, D embedding dim, V vocabulary size,
//         L maximum context length, N = B*T lookups.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "nn/embedding.h"
#include "test_util.h"

namespace {

using namespace ember;
using ember::test::expect_close;
using ember::test::expect_error;
using ember::test::expect_values;
using ember::test::values;

Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return tensor(v, s); }

// Indices of the rows of a (V, D) gradient that hold a non-zero value.
std::vector<int64_t> nonzero_rows(const Tensor& grad) {
  std::vector<double> v = values(grad);
  const int64_t V = grad.size(0), D = grad.size(1);
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < V; ++r)
    if (std::any_of(v.begin() + r * D, v.begin() + (r + 1) * D, [](double x) { return x != 0.0; })) rows.push_back(r);
  return rows;
}
std::vector<int64_t> all_rows(int64_t V) {
  std::vector<int64_t> r(V);
  for (int64_t i = 0; i < V; ++i) r[i] = i;
  return r;
}

// An upstream gradient (N..., D) whose entries are 1, 2, 3, ...: all distinct,
// and small integers, so sums of them are exact in float32.
Tensor counting_grad(const Shape& shape) {
  return arange(1, 1 + static_cast<double>(numel_of(shape))).reshape(shape);
}

// The lesson's normal(0, 0.02) weights are float32; gradcheck needs float64.
std::shared_ptr<nn::Embedding> embedding64(int64_t V, int64_t D, uint64_t seed,
                                           std::optional<int64_t> padding_idx = std::nullopt) {
  return std::make_shared<nn::Embedding>(V, D, nn::EmbeddingOptions{.padding_idx = padding_idx, .dtype = kFloat64, .generator = test::seeded(seed)});
}

// ---- Embedding: lookup ----

TEST(NnEmbedding, ForwardSelectsRows) {
  nn::Embedding emb(7, 3, {.generator = test::seeded(1)});
  EXPECT_EQ(emb.weight.shape(), (Shape{7, 3}));
  EXPECT_TRUE(emb.weight.requires_grad());
  Tensor ids = i64({6, 0, 6, 2}, {2, 2});
  Tensor out = emb.forward(ids);
  ASSERT_EQ(out.shape(), (Shape{2, 2, 3}));
  std::vector<double> w = values(emb.weight), o = values(out);
  const std::vector<int64_t> flat = {6, 0, 6, 2};
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t d = 0; d < 3; ++d) EXPECT_EQ(o[n * 3 + d], w[flat[n] * 3 + d]) << "lookup " << n << ", dim " << d;
  EXPECT_EQ(out.grad_fn()->name(), std::string("IndexSelectBackward"));
}

TEST(NnEmbedding, IdsOfAnyShape) {
  nn::Embedding emb(5, 4);
  Tensor id0 = i64({3}, {1}).reshape({});  // a 0-d id -> one vector
  ASSERT_EQ(id0.dim(), 0);
  EXPECT_EQ(emb.forward(id0).shape(), (Shape{4}));
  EXPECT_EQ(emb.forward(i64({1, 2, 3}, {3})).shape(), (Shape{3, 4}));
  EXPECT_EQ(emb.forward(i64({0, 1, 2, 3, 4, 0, 1, 2}, {2, 2, 2})).shape(), (Shape{2, 2, 2, 4}));
  EXPECT_EQ(emb.forward(i64({}, {2, 0})).shape(), (Shape{2, 0, 4}));
  std::vector<double> w = values(emb.weight);
  expect_values(emb.forward(id0), std::vector<double>(w.begin() + 12, w.begin() + 16), 0);  // row 3
}

// ---- Embedding: the gradient ----

TEST(NnEmbedding, UnusedRowsGetExactlyZeroGradient) {
  const int64_t V = 10, D = 4;
  nn::Embedding emb(V, D, {.generator = test::seeded(2)});
  Tensor ids = i64({1, 4, 7, 7, 4, 1}, {2, 3});
  Generator g(3);
  emb.forward(ids).backward(randn({2, 3, D}, g));
  ASSERT_TRUE(emb.weight.grad().defined());
  EXPECT_EQ(emb.weight.grad().shape(), (Shape{V, D}));
  EXPECT_EQ(nonzero_rows(emb.weight.grad()), (std::vector<int64_t>{1, 4, 7}));
  // "exactly zero": the rows that were not looked up are 0.0, not merely small
  std::vector<double> gv = values(emb.weight.grad());
  for (int64_t r : {0, 2, 3, 5, 6, 8, 9})
    for (int64_t d = 0; d < D; ++d) EXPECT_EQ(gv[r * D + d], 0.0) << "row " << r;
}

TEST(NnEmbedding, RepeatedIdGetsTheSumOfItsUpstreamGradients) {
  const int64_t V = 6, D = 3;
  nn::Embedding emb(V, D, {.generator = test::seeded(4)});
  const std::vector<int64_t> flat = {3, 1, 3, 3, 0, 1};  // id 3 three times, id 1 twice
  Tensor grad_out = counting_grad({2, 3, D});           // lookup n gets n*D+1 .. n*D+D
  emb.forward(i64(flat, {2, 3})).backward(grad_out);
  std::vector<double> expected(V * D, 0.0);
  for (size_t n = 0; n < flat.size(); ++n)
    for (int64_t d = 0; d < D; ++d) expected[flat[n] * D + d] += static_cast<double>(n * D + d + 1);
  // e.g. row 3 = (1,2,3) + (7,8,9) + (10,11,12) = (18, 21, 24)
  EXPECT_EQ(std::vector<double>(expected.begin() + 9, expected.begin() + 12), (std::vector<double>{18, 21, 24}));
  EXPECT_EQ(values(emb.weight.grad()), expected);

  // A second backward accumulates into the same .grad
  emb.forward(i64(flat, {2, 3})).backward(grad_out);
  for (double& e : expected) e *= 2;
  EXPECT_EQ(values(emb.weight.grad()), expected);
}

TEST(NnEmbedding, EmptyBatchGivesAZeroGradient) {
  nn::Embedding emb(4, 2);
  emb.forward(i64({}, {3, 0})).sum().backward();
  ASSERT_TRUE(emb.weight.grad().defined());
  EXPECT_EQ(values(emb.weight.grad()), std::vector<double>(8, 0.0));
}

// ---- Embedding: errors ----

TEST(NnEmbedding, IdOutsideTheVocabularyNamesIdPositionAndV) {
  nn::Embedding emb(5, 2, {.generator = test::seeded(5)});
  const std::vector<double> before = values(emb.weight);
  const uint64_t version = emb.weight.version();

  std::string msg = expect_error([&] { emb.forward(i64({0, 7, 1}, {1, 3})); }, {"id 7", "at [0, 1]", "[0, 5)"});
  EXPECT_EQ(msg, "embedding: id 7 at [0, 1] is outside the vocabulary [0, 5) (ids of shape (1, 3))");
  expect_error([&] { emb.forward(i64({0, 1, 2, 3, -1, 4}, {2, 3})); }, {"embedding", "id -1", "at [1, 1]", "[0, 5)"});
  expect_error([&] { emb.forward(i64({5}, {1})); }, {"embedding", "id 5", "at [0]", "[0, 5)"});

  // nothing was modified, nothing was recorded
  EXPECT_EQ(values(emb.weight), before);
  EXPECT_EQ(emb.weight.version(), version);
  EXPECT_FALSE(emb.weight.grad().defined());
}

TEST(NnEmbedding, IdsMustBeInt64) {
  nn::Embedding emb(5, 2);
  expect_error([&] { emb.forward(tensor(std::vector<float>{0, 1}, {1, 2})); }, {"embedding", "ids must be int64", "float32"});
  expect_error([&] { emb.forward(tensor(std::vector<bool>{true}, {1})); }, {"embedding", "ids must be int64", "bool"});
}

TEST(NnEmbedding, ConstructorChecks) {
  expect_error([] { nn::Embedding(0, 4); }, {"Embedding", "num_embeddings 0"});
  expect_error([] { nn::Embedding(4, -1); }, {"Embedding", "embedding_dim -1"});
  expect_error([] { nn::Embedding(6, 2, {.padding_idx = 6, .generator = test::seeded(0)}); }, {"Embedding", "padding_idx 6", "[0, 6)"});
  expect_error([] { nn::Embedding(6, 2, {.padding_idx = -7, .generator = test::seeded(0)}); }, {"Embedding", "padding_idx -7"});
}

// ---- Embedding: padding_idx ----

TEST(NnEmbedding, PaddingRowIsZeroAtInitAndGetsNoGradient) {
  const int64_t V = 6, D = 3;
  nn::Embedding emb(V, D, {.padding_idx = 2, .generator = test::seeded(6)});
  ASSERT_EQ(emb.padding_idx(), std::optional<int64_t>(2));
  EXPECT_EQ(nonzero_rows(emb.weight.detach()), (std::vector<int64_t>{0, 1, 3, 4, 5}));  // row 2 is all zeros

  const std::vector<int64_t> flat = {2, 0, 2, 5};
  Tensor out = emb.forward(i64(flat, {1, 4}));
  expect_values(out.select(1, 0), {0, 0, 0}, 0);  // the padding row is looked up like any other
  out.backward(counting_grad({1, 4, D}));
  // row 0 <- lookup 1, row 5 <- lookup 3; row 2 (looked up twice) <- nothing
  std::vector<double> expected(V * D, 0.0);
  for (int64_t d = 0; d < D; ++d) {
    expected[0 * D + d] = 1 * D + d + 1;
    expected[5 * D + d] = 3 * D + d + 1;
  }
  EXPECT_EQ(values(emb.weight.grad()), expected);
}

TEST(NnEmbedding, NegativePaddingIdxCountsFromTheEnd) {
  nn::Embedding emb(6, 2, {.padding_idx = -1, .generator = test::seeded(0)});
  EXPECT_EQ(emb.padding_idx(), std::optional<int64_t>(5));
  EXPECT_EQ(nonzero_rows(emb.weight.detach()), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(emb.extra_repr(), "6, 2, padding_idx=5");
}

// ---- Embedding: from_pretrained ----

TEST(NnEmbedding, FromPretrainedCopiesAndFreezes) {
  Tensor w = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {3, 2});
  auto frozen = nn::Embedding::from_pretrained(w);  // freeze defaults to true
  EXPECT_EQ(values(frozen->weight), values(w));
  EXPECT_FALSE(frozen->weight.requires_grad());
  EXPECT_FALSE(frozen->weight.is_same(w));
  EXPECT_EQ(frozen->num_embeddings(), 3);
  EXPECT_EQ(frozen->embedding_dim(), 2);
  EXPECT_EQ(frozen->num_parameters(), 6);  // frozen, but still a parameter of the module
  Tensor out = frozen->forward(i64({2, 0}, {1, 2}));
  EXPECT_FALSE(out.requires_grad());
  expect_values(out, {5, 6, 1, 2}, 0);
  // a copy: changing the source afterwards changes nothing
  w.fill_(0.0);
  expect_values(frozen->weight, {1, 2, 3, 4, 5, 6}, 0);

  auto trainable = nn::Embedding::from_pretrained(tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}), /*freeze=*/false);
  EXPECT_TRUE(trainable->weight.requires_grad());
  trainable->forward(i64({1, 1}, {2})).sum().backward();
  expect_values(trainable->weight.grad(), {0, 0, 2, 2}, 0);

  // non-contiguous weights are copied in row-major order
  Tensor t = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3}).t();  // (3, 2) view
  expect_values(nn::Embedding::from_pretrained(t)->weight, {1, 4, 2, 5, 3, 6}, 0);

  expect_error([] { nn::Embedding::from_pretrained(zeros({4})); }, {"Embedding::from_pretrained", "(4)"});
  expect_error([] { nn::Embedding::from_pretrained(tensor(std::vector<int64_t>{1, 2}, {1, 2})); },
               {"Embedding::from_pretrained", "int64"});
}

// ---- weight tying ----

// V = 9 words, a batch that uses only ids 2 and 5.
constexpr int64_t kV = 9, kD = 4;
Tensor two_id_batch() { return i64({2, 5, 5, 2, 2, 5}, {2, 3}); }

TEST(NnTying, UntiedEmbeddingKeepsUnusedRowsAtZero) {
  nn::Embedding emb(kV, kD, {.generator = test::seeded(1)});
  nn::LMHead head(kD, kV, {.generator = test::seeded(2)});
  EXPECT_FALSE(head.is_tied());
  Generator g(3);
  (head.forward(emb.forward(two_id_batch())) * randn({2, 3, kV}, g)).sum().backward();
  EXPECT_EQ(nonzero_rows(emb.weight.grad()), (std::vector<int64_t>{2, 5}));  // only the rows looked up
  EXPECT_EQ(nonzero_rows(head.weight.grad()), all_rows(kV));                 // every output row
}

TEST(NnTying, TiedMatrixGetsGradientInEveryRow) {
  nn::Embedding emb(kV, kD, {.generator = test::seeded(1)});
  nn::LMHead head(kD, kV, {.generator = test::seeded(2)});
  nn::tie_weights(head, emb);
  EXPECT_TRUE(head.is_tied());
  EXPECT_TRUE(head.weight.is_same(emb.weight));
  Generator g(3);
  (head.forward(emb.forward(two_id_batch())) * randn({2, 3, kV}, g)).sum().backward();
  EXPECT_EQ(nonzero_rows(emb.weight.grad()), all_rows(kV));
  EXPECT_TRUE(head.weight.grad().is_same(emb.weight.grad()));  // one tensor, one .grad
}

TEST(NnTying, TiedGradientIsLookupPlusProjection) {
  // float64 so that the only difference is the order of two additions
  auto emb = embedding64(kV, kD, /*seed=*/1);
  nn::LMHead head(kD, kV, {.dtype = kFloat64, .generator = test::seeded(2)});
  nn::tie_weights(head, *emb);
  Tensor ids = two_id_batch();
  Generator g(4);
  Tensor R = randn({2, 3, kV}, g, kFloat64);  // loss = sum(logits * R): a generic upstream gradient

  (head.forward(emb->forward(ids)) * R).sum().backward();
  Tensor tied = emb->weight.grad();

  // The same computation twice, each time letting only one role see a leaf:
  // lookup-only (the projection reads a detached copy) and projection-only.
  Tensor W = emb->weight.detach();
  Tensor for_lookup = W.clone().requires_grad_(), for_projection = W.clone().requires_grad_();
  (matmul(nn::embedding(for_lookup, ids), W.t()) * R).sum().backward();
  (matmul(nn::embedding(W, ids), for_projection.t()) * R).sum().backward();
  EXPECT_EQ(nonzero_rows(for_lookup.grad()), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(nonzero_rows(for_projection.grad()), all_rows(kV));

  expect_close(tied, for_lookup.grad() + for_projection.grad(), 1e-15);
}

TEST(NnTying, CountsTheMatrixOnceInAContainingModule) {
  // nn_module_test.cpp checks named_parameters; here: the counts the lesson prints.
  auto emb = std::make_shared<nn::Embedding>(kV, kD);
  auto head = std::make_shared<nn::LMHead>(kD, kV);
  EXPECT_EQ(emb->num_parameters() + head->num_parameters(), 2 * kV * kD);
  nn::tie_weights(*head, *emb);
  // A composer holding the embedding, plus the head: the union is one matrix.
  std::vector<Tensor> all = emb->parameters();
  for (const Tensor& p : head->parameters())
    if (std::none_of(all.begin(), all.end(), [&](const Tensor& q) { return q.is_same(p); })) all.push_back(p);
  EXPECT_EQ(all.size(), 1u);
}

TEST(NnTying, Errors) {
  nn::Embedding emb(8, 4);
  nn::LMHead head(4, 8);
  nn::tie_weights(head, emb);
  expect_error([&] { nn::tie_weights(head, emb); }, {"tie_weights", "already tied"});

  nn::Embedding wide(8, 5);
  nn::LMHead other(4, 8);
  const std::vector<double> before = values(other.weight);
  expect_error([&] { nn::tie_weights(other, wide); }, {"tie_weights", "(8, 4)", "(8, 5)", "must match"});
  EXPECT_FALSE(other.is_tied());  // nothing half-done
  EXPECT_EQ(values(other.weight), before);

  nn::Embedding dbl(8, 4, {.dtype = kFloat64, .generator = test::seeded(0)});
  expect_error([&] { nn::tie_weights(other, dbl); }, {"tie_weights", "float32", "float64"});
}

TEST(NnTying, LMHeadShapes) {
  nn::LMHead head(4, 11);
  EXPECT_EQ(head.weight.shape(), (Shape{11, 4}));
  EXPECT_EQ(head.forward(zeros({2, 3, 4})).shape(), (Shape{2, 3, 11}));
  EXPECT_EQ(head.forward(zeros({4})).shape(), (Shape{11}));
  expect_error([&] { head.forward(zeros({2, 5})); }, {"LMHead", "(2, 5)", "last dim of 4", "(11, 4)"});
}

// ---- positional embeddings and the composer ----

TEST(NnComposer, ShapesForSeveralBTD) {
  struct Case {
    int64_t B, T, D;
  };
  for (Case c : {Case{1, 1, 1}, Case{2, 3, 4}, Case{4, 16, 8}, Case{3, 7, 5}}) {
    SCOPED_TRACE("B=" + std::to_string(c.B) + " T=" + std::to_string(c.T) + " D=" + std::to_string(c.D));
    const int64_t V = 11, L = 16;
    auto token = std::make_shared<nn::Embedding>(V, c.D, nn::EmbeddingOptions{.generator = test::seeded(1)});
    auto learned = std::make_shared<nn::LearnedPositionalEmbedding>(L, c.D, nn::InitOptions{.generator = test::seeded(2)});
    auto sinusoidal = std::make_shared<nn::SinusoidalPositionalEmbedding>(L, c.D);
    Generator g(c.B * 100 + c.T);
    Tensor ids = randint(0, V, {c.B, c.T}, g);
    EXPECT_EQ(token->forward(ids).shape(), (Shape{c.B, c.T, c.D}));
    EXPECT_EQ(learned->forward(c.T).shape(), (Shape{c.T, c.D}));
    EXPECT_EQ(sinusoidal->forward(c.T).shape(), (Shape{c.T, c.D}));
    EXPECT_EQ(nn::EmbeddingComposer(token, learned).forward(ids).shape(), (Shape{c.B, c.T, c.D}));
    EXPECT_EQ(nn::EmbeddingComposer(token, sinusoidal).forward(ids).shape(), (Shape{c.B, c.T, c.D}));
    EXPECT_EQ(nn::EmbeddingComposer(token, nullptr).forward(ids).shape(), (Shape{c.B, c.T, c.D}));
  }
}

TEST(NnComposer, PositionalVectorIsBroadcastOverTheBatch) {
  const int64_t B = 3, T = 5, D = 4, V = 7;
  for (bool learned : {true, false}) {
    SCOPED_TRACE(learned ? "learned" : "sinusoidal");
    auto token = std::make_shared<nn::Embedding>(V, D, nn::EmbeddingOptions{.generator = test::seeded(1)});
    std::shared_ptr<nn::PositionalEmbedding> pos;
    if (learned) pos = std::make_shared<nn::LearnedPositionalEmbedding>(8, D, nn::InitOptions{.generator = test::seeded(2)});
    else pos = std::make_shared<nn::SinusoidalPositionalEmbedding>(8, D);
    nn::EmbeddingComposer c(token, pos);
    Tensor ids = i64({0, 1, 2, 3, 4, 6, 6, 6, 6, 6, 5, 0, 5, 0, 5}, {B, T});
    std::vector<double> out = values(c.forward(ids)), tok = values(token->forward(ids));
    std::vector<float> p = pos->forward(T).contiguous().to_vector<float>();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t d = 0; d < D; ++d) {
          const int64_t i = (b * T + t) * D + d;
          // out = token + positional, the same float32 addition for every batch row
          EXPECT_EQ(out[i], static_cast<double>(static_cast<float>(tok[i]) + p[t * D + d])) << b << "," << t << "," << d;
          // composer(ids) - token(ids) is the positional vector: equal across the batch
          EXPECT_NEAR(out[i] - tok[i], out[t * D + d] - tok[t * D + d], 1e-6);
        }
  }
}

TEST(NnComposer, ParameterCounts) {
  const int64_t V = 50, L = 12, D = 6;
  nn::EmbeddingComposer learned(std::make_shared<nn::Embedding>(V, D), std::make_shared<nn::LearnedPositionalEmbedding>(L, D));
  nn::EmbeddingComposer sinusoidal(std::make_shared<nn::Embedding>(V, D),
                                   std::make_shared<nn::SinusoidalPositionalEmbedding>(L, D));
  nn::EmbeddingComposer token_only(std::make_shared<nn::Embedding>(V, D), nullptr);
  EXPECT_EQ(learned.num_parameters(), V * D + L * D);  // learned adds L*D
  EXPECT_EQ(sinusoidal.num_parameters(), V * D);       // sinusoidal adds 0
  EXPECT_EQ(token_only.num_parameters(), V * D);
  EXPECT_EQ(nn::LearnedPositionalEmbedding(L, D).num_parameters(), L * D);
}

TEST(NnComposer, DimsMustMatch) {
  expect_error([] { nn::EmbeddingComposer(std::make_shared<nn::Embedding>(5, 4), std::make_shared<nn::SinusoidalPositionalEmbedding>(8, 6)); },
               {"EmbeddingComposer", "dim 4", "dim 6"});
  expect_error([] { nn::EmbeddingComposer(nullptr, nullptr); }, {"EmbeddingComposer", "token embedding is required"});
  nn::EmbeddingComposer c(std::make_shared<nn::Embedding>(5, 4), nullptr);
  expect_error([&] { c.forward(i64({1, 2}, {2})); }, {"EmbeddingComposer", "ids must be (B, T)", "(2)"});
}

TEST(NnPositional, LearnedIsTheFirstTRowsOfItsTable) {
  auto pos = std::make_shared<nn::LearnedPositionalEmbedding>(6, 3, nn::InitOptions{.generator = test::seeded(9)});
  EXPECT_EQ(pos->weight.shape(), (Shape{6, 3}));
  std::vector<double> w = values(pos->weight);
  expect_values(pos->forward(4), std::vector<double>(w.begin(), w.begin() + 12), 0);
  // The gradient lands in rows 0..T-1 only (one per position, summed over the batch).
  nn::EmbeddingComposer c(std::make_shared<nn::Embedding>(5, 3), pos);
  c.forward(i64({0, 1, 2, 3, 4, 0, 1, 2}, {2, 4})).sum().backward();
  std::vector<double> expected(18, 0.0);
  std::fill(expected.begin(), expected.begin() + 12, 2.0);  // B = 2 rows of ones per position
  EXPECT_EQ(values(pos->weight.grad()), expected);
}

TEST(NnPositional, ForwardFromIds) {
  nn::LearnedPositionalEmbedding learned(8, 3);
  nn::SinusoidalPositionalEmbedding sinusoidal(8, 3);
  Tensor ids = i64(std::vector<int64_t>(15, 1), {3, 5});
  expect_close(learned.forward(ids), learned.forward(5), 0);
  expect_close(sinusoidal.forward(ids), sinusoidal.forward(5), 0);
  expect_error([&] { learned.forward(i64({1, 2, 3}, {3})); }, {"LearnedPositionalEmbedding", "ids must be (B, T)", "(3)"});
  expect_error([&] { sinusoidal.forward(i64({1}, {1, 1, 1})); }, {"SinusoidalPositionalEmbedding", "(1, 1, 1)"});
}

TEST(NnPositional, LongerThanTheTableIsAnError) {
  nn::LearnedPositionalEmbedding learned(4, 2);
  nn::SinusoidalPositionalEmbedding sinusoidal(4, 2);
  EXPECT_EQ(learned.forward(4).shape(), (Shape{4, 2}));  // T = L is fine
  EXPECT_EQ(sinusoidal.forward(4).shape(), (Shape{4, 2}));
  expect_error([&] { learned.forward(5); }, {"LearnedPositionalEmbedding", "T = 5", "L = 4"});
  expect_error([&] { sinusoidal.forward(5); }, {"SinusoidalPositionalEmbedding", "T = 5", "L = 4"});
  // through the composer, with ids (1, 6)
  nn::EmbeddingComposer c(std::make_shared<nn::Embedding>(3, 2), std::make_shared<nn::LearnedPositionalEmbedding>(4, 2));
  expect_error([&] { c.forward(i64({0, 1, 2, 0, 1, 2}, {1, 6})); }, {"LearnedPositionalEmbedding", "T = 6", "L = 4"});
}

// angle(p, i) = p / 10000^(2*(i/2)/D); even columns sin, odd columns cos
double closed_form(int64_t p, int64_t i, int64_t D) {
  double angle = static_cast<double>(p) / std::pow(10000.0, static_cast<double>(2 * (i / 2)) / static_cast<double>(D));
  return i % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

TEST(NnPositional, SinusoidalTableMatchesTheClosedForm) {
  for (int64_t D : {8, 7, 64, 1}) {
    SCOPED_TRACE("D = " + std::to_string(D));
    const int64_t L = 100;
    nn::SinusoidalPositionalEmbedding pos64(L, D, kFloat64), pos32(L, D);
    EXPECT_EQ(pos32.table.dtype(), kFloat32);
    std::vector<double> t64 = values(pos64.table), t32 = values(pos32.table);
    for (int64_t p = 0; p < L; ++p)
      for (int64_t i = 0; i < D; ++i) {
        ASSERT_NEAR(t64[p * D + i], closed_form(p, i, D), 1e-12) << "p=" << p << " i=" << i;
        ASSERT_NEAR(t32[p * D + i], closed_form(p, i, D), 1e-7) << "p=" << p << " i=" << i;
      }
  }
  // Spot values: position 0 is (0, 1, 0, 1, ...); with odd D the last column is a sin.
  nn::SinusoidalPositionalEmbedding odd(10, 7, kFloat64);
  expect_values(odd.forward(1).select(0, 0), {0, 1, 0, 1, 0, 1, 0}, 0);
  EXPECT_NEAR(values(odd.table)[3 * 7 + 6], std::sin(3.0 / std::pow(10000.0, 6.0 / 7.0)), 1e-15);
  EXPECT_NEAR(values(odd.table)[1 * 7 + 0], std::sin(1.0), 1e-15);
  EXPECT_NEAR(values(odd.table)[1 * 7 + 1], std::cos(1.0), 1e-15);
  // A constant: forward records nothing.
  EXPECT_FALSE(odd.forward(5).requires_grad());
}

TEST(NnPositional, SinusoidalShiftIsARotationPerPair) {
  // For the pair (2k, 2k+1) with frequency w_k = 10000^(-2k/D), shifting the
  // position by m rotates (sin, cos) by the angle m*w_k, whatever p is:
  //   [sin((p+m)w)]   [ cos(mw)  sin(mw)] [sin(pw)]
  //   [cos((p+m)w)] = [-sin(mw)  cos(mw)] [cos(pw)]
  const int64_t D = 16, L = 256;
  nn::SinusoidalPositionalEmbedding pos(L, D, kFloat64);
  std::vector<double> t = values(pos.table);
  int checked = 0;
  for (int64_t k = 0; k < D / 2; ++k) {
    const double w = std::pow(10000.0, -2.0 * static_cast<double>(k) / D);
    for (int64_t m : {1, 5, 17, 60}) {
      const double c = std::cos(m * w), s = std::sin(m * w);
      for (int64_t p : {0, 3, 50, 120, 195}) {
        const double sin_p = t[p * D + 2 * k], cos_p = t[p * D + 2 * k + 1];
        EXPECT_NEAR(t[(p + m) * D + 2 * k], c * sin_p + s * cos_p, 1e-12) << "k=" << k << " m=" << m << " p=" << p;
        EXPECT_NEAR(t[(p + m) * D + 2 * k + 1], -s * sin_p + c * cos_p, 1e-12) << "k=" << k << " m=" << m << " p=" << p;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 8 * 4 * 5);
}

TEST(NnPositional, ConstructorChecks) {
  expect_error([] { nn::LearnedPositionalEmbedding(0, 4); }, {"LearnedPositionalEmbedding", "max_context_length 0"});
  expect_error([] { nn::SinusoidalPositionalEmbedding(4, 0); }, {"SinusoidalPositionalEmbedding", "embedding_dim 0"});
  expect_error([] { nn::SinusoidalPositionalEmbedding(4, 2, kInt64); }, {"SinusoidalPositionalEmbedding", "int64"});
}

// ---- lesson B: "The cat sleeps" ----

// Vocabulary 0 sleeps, 1 dog, 2 The, 3 runs, 4 cat; the table E (V=5, D=2).
Tensor lesson_table() {
  return tensor({-0.4f, 0.8f,   // 0 sleeps
                 0.1f, 0.5f,    // 1 dog
                 0.2f, -0.1f,   // 2 The
                 -0.2f, 0.6f,   // 3 runs
                 0.7f, 0.3f},   // 4 cat
                {5, 2});
}

TEST(NnLessonB, TheCatSleeps) {
  auto emb = nn::Embedding::from_pretrained(lesson_table());
  Tensor out = emb->forward(i64({2, 4, 0}, {1, 3}));  // The cat sleeps
  EXPECT_EQ(out.shape(), (Shape{1, 3, 2}));           // [B, T, D]
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{0.2f, -0.1f, 0.7f, 0.3f, -0.4f, 0.8f}));
}

TEST(NnLessonB, OneHotTimesTableIsTheLookup) {
  auto emb = nn::Embedding::from_pretrained(lesson_table());
  Tensor ids = i64({2, 4, 0}, {1, 3});
  Tensor onehot = one_hot(ids, 5).to(kFloat32);  // (1, 3, 5)
  EXPECT_EQ(onehot.to_vector<float>(), (std::vector<float>{0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0}));
  Tensor product = matmul(onehot, lesson_table());  // (1, 3, 5) @ (5, 2) -> (1, 3, 2)
  EXPECT_EQ(product.shape(), (Shape{1, 3, 2}));
  // 1*x + 0*y + ... is exact: the same numbers, not merely close
  EXPECT_EQ(product.to_vector<float>(), emb->forward(ids).to_vector<float>());
}

TEST(NnLessonB, SameIdSameRowAtAnyPosition) {
  auto emb = nn::Embedding::from_pretrained(lesson_table());
  // "The dog runs The dog runs The cat": cat at position 7
  Tensor out = emb->forward(i64({2, 1, 3, 2, 1, 3, 2, 4}, {1, 8}));
  EXPECT_EQ(out.select(1, 7).to_vector<float>(), (std::vector<float>{0.7f, 0.3f}));  // still row 4
  EXPECT_EQ(out.select(1, 1).to_vector<float>(), (std::vector<float>{0.1f, 0.5f}));  // dog, row 1
  // and "The" selects row 2 at positions 0, 3 and 6 alike
  for (int64_t p : {0, 3, 6}) EXPECT_EQ(out.select(1, p).to_vector<float>(), (std::vector<float>{0.2f, -0.1f}));
}

// ---- gradcheck (float64) ----

TEST(NnGradcheck, EmbeddingWithRepeatedIds) {
  auto emb = embedding64(5, 3, /*seed=*/1);
  Tensor ids = i64({4, 1, 4, 4, 0, 1}, {2, 3});
  // gradcheck perturbs emb->weight in place, and forward reads it
  EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return emb->forward(in[1]); }, {emb->weight, ids});
}

TEST(NnGradcheck, EmbeddingWithPaddingIdx) {
  // The padding row's "no gradient" is a rule, not the derivative (the row is
  // read), so it must not be perturbed: it is a constant between two leaves.
  // Every other row's gradient must still be exact with padding ids present.
  Generator g(2);
  Tensor above = randn({2, 3}, g, kFloat64).requires_grad_();  // rows 0, 1
  Tensor padding_row = zeros({1, 3}, kFloat64);                // row 2
  Tensor below = randn({3, 3}, g, kFloat64).requires_grad_();  // rows 3, 4, 5
  Tensor ids = i64({2, 0, 2, 5, 1, 2, 3, 3}, {2, 4});
  EXPECT_GRADCHECK(
      [&](const std::vector<Tensor>& in) {
        return nn::embedding(cat({in[0], padding_row, in[1]}, 0), in[2], /*padding_idx=*/2);
      },
      {above, below, ids});
}

TEST(NnGradcheck, LearnedPositionalEmbedding) {
  nn::LearnedPositionalEmbedding pos(6, 3, {.dtype = kFloat64, .generator = test::seeded(2)});
  EXPECT_GRADCHECK([&](const std::vector<Tensor>&) { return pos.forward(4); }, {pos.weight});
}

TEST(NnGradcheck, LearnedComposer) {
  auto token = embedding64(5, 3, /*seed=*/3);
  auto pos = std::make_shared<nn::LearnedPositionalEmbedding>(4, 3, nn::InitOptions{.dtype = kFloat64, .generator = test::seeded(4)});
  nn::EmbeddingComposer c(token, pos);
  Tensor ids = i64({1, 3, 1, 0, 0, 4}, {2, 3});
  EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return c.forward(in[2]); }, {token->weight, pos->weight, ids});
}

TEST(NnGradcheck, SinusoidalComposer) {
  auto token = embedding64(5, 3, /*seed=*/5);
  nn::EmbeddingComposer c(token, std::make_shared<nn::SinusoidalPositionalEmbedding>(6, 3, kFloat64));
  Tensor ids = i64({1, 3, 1, 0, 0, 4, 2, 2}, {2, 4});
  EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return c.forward(in[1]); }, {token->weight, ids});
}

TEST(NnGradcheck, LMHeadUntied) {
  nn::LMHead head(3, 5, {.dtype = kFloat64, .generator = test::seeded(6)});
  Generator g(7);
  Tensor R = randn({2, 4, 5}, g, kFloat64);  // loss = sum(logits * R)
  auto loss = [&](const std::vector<Tensor>& in) { return (head.forward(in[1]) * R).sum(); };
  Tensor hidden = randn({2, 4, 3}, g, kFloat64).requires_grad_();
  EXPECT_GRADCHECK(loss, {head.weight, hidden});
  // hidden laid out transposed in memory: (2, 4, 3) viewed from a (2, 3, 4) buffer
  Tensor hidden_t = randn({2, 3, 4}, g, kFloat64).transpose(1, 2).detach().requires_grad_();
  ASSERT_FALSE(hidden_t.is_contiguous());
  EXPECT_GRADCHECK(loss, {head.weight, hidden_t});
}

TEST(NnGradcheck, LMHeadTied) {
  auto emb = embedding64(5, 3, /*seed=*/8);
  nn::LMHead head(3, 5, {.dtype = kFloat64, .generator = test::seeded(9)});
  nn::tie_weights(head, *emb);
  Generator g(10);
  Tensor R = randn({2, 3, 5}, g, kFloat64);
  Tensor ids = i64({1, 3, 3, 1, 1, 3}, {2, 3});  // 2 ids of 5
  EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return (head.forward(emb->forward(in[1])) * R).sum(); },
                   {emb->weight, ids});
  // The same loss with a non-contiguous hidden state between lookup and head.
  EXPECT_GRADCHECK(
      [&](const std::vector<Tensor>& in) {
        Tensor h = emb->forward(in[1]).transpose(0, 1);  // (T, B, D), non-contiguous
        return (head.forward(h) * R.transpose(0, 1)).sum();
      },
      {emb->weight, ids});
}

}  // namespace

namespace {
// The functional form treats padding_idx like the module: negative counts
// from the end, out of range is an error naming it and V.
TEST(NnEmbedding, FunctionalPaddingIdxWrapsAndIsChecked) {
  using namespace ember;
  Tensor w = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2}).requires_grad_();
  Tensor ids = tensor(std::vector<int64_t>{2, 0, 2}, {3});
  nn::embedding(w, ids, -1).sum().backward();  // -1 is row 2: no gradient there
  test::expect_values(w.grad(), {1, 1, 0, 0, 0, 0}, 0);
  test::expect_error([&] { nn::embedding(w, ids, 3); }, "embedding", {"padding_idx 3", "[0, 3)", "(3, 2)"});
}
}  // namespace
