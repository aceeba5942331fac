// nn::Embedding with sparse = true: the table's gradient left as the rows
// looked up (Tensor::row_grad()), read dense by anyone who asks for .grad(),
// and SGD updating only those rows. Every check is against the same model
// with a dense table: the same bits, row for row.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

#include "autograd/engine.h"
#include "inspect/inspect.h"
#include "nn/embedding.h"
#include "nn/layers.h"
#include "tensor/kernels.h"
#include "test_util.h"
#include "train/optim.h"

namespace {

using namespace ember;
using ember::test::expect_error;

constexpr int64_t kV = 50, kD = 8;

// Two tables with the same weights, one dense and one sparse.
struct Pair {
  std::shared_ptr<nn::Embedding> dense, sparse;
  Pair(DType dt, std::optional<int64_t> pad = std::nullopt) {
    dense = std::make_shared<nn::Embedding>(kV, kD, nn::EmbeddingOptions{.padding_idx = pad, .dtype = dt,
                                                                         .generator = test::seeded(11)});
    sparse = std::make_shared<nn::Embedding>(
        kV, kD, nn::EmbeddingOptions{.padding_idx = pad, .dtype = dt, .generator = test::seeded(11), .sparse = true});
  }
};

// (3, 7) ids with repeats (and the id 4 three times).
Tensor some_ids() {
  return tensor(std::vector<int64_t>{4, 9, 4, 17, 0, 49, 4, 23, 23, 1, 2, 3, 9, 30, 31, 32, 33, 9, 17, 5, 6}, {3, 7});
}
// loss = sum(emb(ids) * R): R is the upstream gradient of every looked-up row.
Tensor loss(const nn::Embedding& e, const Tensor& ids, uint64_t seed) {
  Generator g(seed);
  Shape s = ids.shape();
  s.push_back(kD);
  return (e.forward(ids) * randn(s, g, e.weight.dtype())).sum();
}

TEST(NnSparseEmbedding, RowsAreTheDenseGradientsBits) {
  for (DType dt : {kFloat32, kFloat64}) {
    Pair p(dt);
    loss(*p.dense, some_ids(), 1).backward();
    loss(*p.sparse, some_ids(), 1).backward();
    // One chunk: the 17 distinct ids, in the order they first appear.
    ASSERT_EQ(p.sparse->weight.row_grad().size(), 1u);
    const RowGrad& r = p.sparse->weight.row_grad()[0];
    EXPECT_EQ(r.ids.to_vector<int64_t>(),
              (std::vector<int64_t>{4, 9, 17, 0, 49, 23, 1, 2, 3, 30, 31, 32, 33, 5, 6}));
    EXPECT_EQ(r.rows.shape(), (Shape{15, kD}));
    // Read dense, it is the dense table's gradient bit for bit, and no rows remain.
    EXPECT_TRUE(equal_bits(p.sparse->weight.grad(), p.dense->weight.grad())) << dtype_name(dt);
    EXPECT_TRUE(p.sparse->weight.row_grad().empty());
  }
}

TEST(NnSparseEmbedding, ThePaddingRowGetsNothing) {
  Pair p(kFloat32, /*pad=*/4);
  loss(*p.dense, some_ids(), 2).backward();
  loss(*p.sparse, some_ids(), 2).backward();
  ASSERT_EQ(p.sparse->weight.row_grad().size(), 1u);
  const std::vector<int64_t> ids = p.sparse->weight.row_grad()[0].ids.to_vector<int64_t>();
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 4), 0);
  EXPECT_EQ(ids.size(), 14u);
  EXPECT_TRUE(equal_bits(p.sparse->weight.grad(), p.dense->weight.grad()));
}

// Gradients accumulate over backward passes as dense ones do: pass by pass.
TEST(NnSparseEmbedding, PassesAccumulateAsDenseOnes) {
  Pair p(kFloat32);
  const Tensor other = tensor(std::vector<int64_t>{4, 4, 7, 9, 4, 7}, {2, 3});
  for (auto* e : {&p.dense, &p.sparse}) {
    loss(**e, some_ids(), 3).backward();
    loss(**e, other, 4).backward();
  }
  EXPECT_EQ(p.sparse->weight.row_grad().size(), 2u);  // one chunk per pass
  EXPECT_TRUE(equal_bits(p.sparse->weight.grad(), p.dense->weight.grad()));
  // Once dense, later rows are added into it.
  for (auto* e : {&p.dense, &p.sparse}) loss(**e, other, 5).backward();
  EXPECT_TRUE(p.sparse->weight.row_grad().empty());
  EXPECT_TRUE(equal_bits(p.sparse->weight.grad(), p.dense->weight.grad()));
}

TEST(NnSparseEmbedding, ATableLookedUpTwiceGivesOneChunk) {
  Pair p(kFloat64);
  const Tensor other = tensor(std::vector<int64_t>{4, 4, 7, 9, 4, 7}, {2, 3});
  for (auto* e : {&p.dense, &p.sparse}) (loss(**e, some_ids(), 6) + loss(**e, other, 7)).backward();
  ASSERT_EQ(p.sparse->weight.row_grad().size(), 1u);
  EXPECT_TRUE(equal_bits(p.sparse->weight.grad(), p.dense->weight.grad()));
}

// Where the dense gradient is what the caller sees (grad(), hooks, recording,
// a dense gradient from a tied head), no rows are left.
TEST(NnSparseEmbedding, GradHooksRecordingAndTyingSeeTheDenseGradient) {
  Pair p(kFloat64);
  loss(*p.dense, some_ids(), 8).backward();
  const Tensor dense = p.dense->weight.grad();

  Tensor g = ember::grad({loss(*p.sparse, some_ids(), 8)}, {p.sparse->weight})[0];
  EXPECT_TRUE(equal_bits(g, dense));
  EXPECT_FALSE(p.sparse->weight.grad().defined());

  Shape seen;
  p.sparse->weight.register_hook([&](const Tensor& h) -> std::optional<Tensor> {
    seen = h.shape();
    return std::nullopt;
  });
  loss(*p.sparse, some_ids(), 8).backward();
  EXPECT_EQ(seen, (Shape{kV, kD}));
  EXPECT_TRUE(p.sparse->weight.row_grad().empty());
  EXPECT_TRUE(equal_bits(p.sparse->weight.grad(), dense));

  Pair q(kFloat64);
  loss(*q.sparse, some_ids(), 8).backward(Tensor(), /*retain_graph=*/false, /*create_graph=*/true);
  EXPECT_TRUE(q.sparse->weight.row_grad().empty());
  EXPECT_TRUE(equal_bits(q.sparse->weight.grad().detach(), dense));

  // Tied to a head, the table gets a dense gradient anyway.
  Pair t(kFloat64);
  nn::LMHead head(kD, kV, {.dtype = kFloat64, .generator = test::seeded(2)});
  nn::tie_weights(head, *t.sparse);
  head.forward(t.sparse->forward(some_ids())).sum().backward();
  EXPECT_TRUE(t.sparse->weight.row_grad().empty());
  EXPECT_EQ(t.sparse->weight.grad().shape(), (Shape{kV, kD}));
}

// A trace reads every gradient a rule sends, so it gets the dense one (and
// its parts add up to .grad); a profiler only times, so the rows stay.
TEST(NnSparseEmbedding, ATraceSeesTheDenseGradientAProfilerTheRows) {
  Pair p(kFloat64);
  loss(*p.dense, some_ids(), 8).backward();
  {
    inspect::BackwardTrace trace;
    loss(*p.sparse, some_ids(), 8).backward();
    EXPECT_TRUE(p.sparse->weight.row_grad().empty());
    ASSERT_EQ(trace.provenance(p.sparse->weight).size(), 1u);
    EXPECT_TRUE(equal_bits(trace.provenance(p.sparse->weight)[0].grad, p.dense->weight.grad()));
  }
  p.sparse->zero_grad();
  {
    inspect::Profiler prof;
    loss(*p.sparse, some_ids(), 8).backward();
    EXPECT_EQ(p.sparse->weight.row_grad().size(), 1u);
  }
  EXPECT_TRUE(equal_bits(p.sparse->weight.grad(), p.dense->weight.grad()));
}

TEST(NnSparseEmbedding, ZeroGradAndSetGradDropTheRows) {
  Pair p(kFloat32);
  loss(*p.sparse, some_ids(), 9).backward();
  p.sparse->zero_grad();
  EXPECT_TRUE(p.sparse->weight.row_grad().empty());
  EXPECT_FALSE(p.sparse->weight.grad().defined());
  loss(*p.sparse, some_ids(), 9).backward();
  p.sparse->weight.set_grad(Tensor());
  EXPECT_TRUE(p.sparse->weight.row_grad().empty());
  EXPECT_FALSE(p.sparse->weight.grad().defined());
  EXPECT_EQ(p.sparse->extra_repr(), "50, 8, sparse=True");
}

// A table destroyed while its rows are pending leaves them pending on the
// weight a user still holds: the module's destructor does not make the
// dense (V, D) gradient (which could fail there, with nowhere to report it).
TEST(NnSparseEmbedding, DestroyingTheModuleLeavesTheRowsPending) {
  Pair p(kFloat32);
  loss(*p.dense, some_ids(), 9).backward();
  loss(*p.sparse, some_ids(), 9).backward();
  Tensor w = p.sparse->weight;
  p.sparse.reset();
  ASSERT_EQ(w.row_grad().size(), 1u);
  EXPECT_FALSE(w.impl()->grad.defined());
  EXPECT_TRUE(equal_bits(w.grad(), p.dense->weight.grad()));
  EXPECT_TRUE(w.row_grad().empty());
}

// SGD without momentum or weight decay updates only the rows looked up, with
// the dense update's bits; the rows not looked up keep their bits.
TEST(NnSparseEmbedding, SgdUpdatesOnlyTheRowsWithTheDenseBits) {
  for (DType dt : {kFloat32, kFloat64}) {
    Pair p(dt);
    const Tensor before = p.sparse->weight.clone();
    optim::SGD dense({p.dense->weight}, 0.1), sparse({p.sparse->weight}, 0.1);
    const Tensor batches[] = {some_ids(), tensor(std::vector<int64_t>{4, 4, 7, 9, 4, 7}, {2, 3})};
    for (int step = 0; step < 3; ++step) {
      for (auto* e : {&p.dense, &p.sparse}) loss(**e, batches[step % 2], 10 + step).backward();
      EXPECT_FALSE(p.sparse->weight.row_grad().empty());
      dense.step();
      sparse.step();
      EXPECT_FALSE(p.sparse->weight.row_grad().empty());  // step reads the rows; .grad stays as it was
      EXPECT_TRUE(equal_bits(p.sparse->weight, p.dense->weight)) << dtype_name(dt) << " step " << step;
      dense.zero_grad();
      sparse.zero_grad();
    }
    std::set<int64_t> used;
    for (const Tensor& b : batches)
      for (int64_t id : b.to_vector<int64_t>()) used.insert(id);
    for (int64_t r = 0; r < kV; ++r) {
      if (!used.count(r)) {
        EXPECT_TRUE(equal_bits(kernel::select(p.sparse->weight, 0, r), kernel::select(before, 0, r)));
      }
    }
  }
}

// The optimizers that change a row whatever its gradient (momentum, weight
// decay, Adam's moments) read .grad() dense: the dense model's bits.
TEST(NnSparseEmbedding, OtherOptimizersReadTheDenseGradient) {
  Pair a(kFloat32), b(kFloat32);
  optim::SGD momentum_dense({a.dense->weight}, 0.1, 0.9), momentum_sparse({a.sparse->weight}, 0.1, 0.9);
  optim::AdamW adamw_dense({b.dense->weight}, 1e-2), adamw_sparse({b.sparse->weight}, 1e-2);
  for (int step = 0; step < 3; ++step) {
    for (auto* e : {&a.dense, &a.sparse, &b.dense, &b.sparse}) loss(**e, some_ids(), 20 + step).backward();
    for (optim::Optimizer* o : std::vector<optim::Optimizer*>{&momentum_dense, &momentum_sparse, &adamw_dense, &adamw_sparse}) {
      o->step();
      o->zero_grad();
    }
    EXPECT_TRUE(equal_bits(a.sparse->weight, a.dense->weight)) << "momentum, step " << step;
    EXPECT_TRUE(equal_bits(b.sparse->weight, b.dense->weight)) << "AdamW, step " << step;
  }
}

TEST(NnSparseEmbedding, CoalesceRowsChecksItsInput) {
  const Tensor rows = zeros({3, 2});
  expect_error([&] { kernel::coalesce_rows(tensor(std::vector<int64_t>{0, 5, 1}), rows, 5); }, "coalesce_rows",
               {"id 5 at [1]", "[0, 5)"});
  expect_error([&] { kernel::coalesce_rows(tensor(std::vector<int64_t>{0, 1}), rows, 5); }, "coalesce_rows",
               {"(2)", "(3, 2)"});
  // Empty ids: no rows.
  RowGrad none = kernel::coalesce_rows(tensor(std::vector<int64_t>{}), zeros({0, 2}), 5);
  EXPECT_EQ(none.rows.shape(), (Shape{0, 2}));
}

}  // namespace
