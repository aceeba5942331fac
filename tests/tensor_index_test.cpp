// Indexing and joining: index_select (the embedding lookup of lesson B),
// index_add_, gather, one_hot, cat and stack, with bounds-checked ids.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::test;


// Lesson B's embedding table: 0 sleeps, 1 dog, 2 The, 3 runs, 4 cat.
Tensor lesson_table() {
  return tensor({-0.4f, 0.8f,   //
                 0.1f, 0.5f,    //
                 0.2f, -0.1f,   //
                 -0.2f, 0.6f,   //
                 0.7f, 0.3f},
                {5, 2});
}

// ---- index_select ----

TEST(TensorIndex, LessonBLookup) {
  Tensor E = lesson_table();
  Tensor ids = i64({2, 4, 0});  // "The cat sleeps"
  Tensor rows = index_select(E, 0, ids);
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(rows.dtype(), kFloat32);
  EXPECT_EQ(rows.to_vector<float>(), (std::vector<float>{0.2f, -0.1f, 0.7f, 0.3f, -0.4f, 0.8f}));
  // as a batch: ids (B=1, T=3) -> (1, 3, 2)
  Tensor batch = index_select(E, 0, i64({2, 4, 0}, {1, 3}).reshape({-1})).reshape({1, 3, 2});
  EXPECT_EQ(batch.shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(batch.to_vector<float>(), rows.to_vector<float>());
  // the same id selects the same row wherever it stands ("cat" at position 7)
  Tensor far = index_select(E, 0, i64({1, 1, 1, 1, 1, 1, 1, 4}));
  EXPECT_EQ(far.select(0, 7).to_vector<float>(), (std::vector<float>{0.7f, 0.3f}));
}

TEST(TensorIndex, IndexSelectShapesAndRepeats) {
  Tensor x = arange(12, kFloat64).reshape({3, 4});
  EXPECT_EQ(vals(index_select(x, 0, i64({2, 2, 0, 2}))), (std::vector<double>{8, 9, 10, 11, 8, 9, 10, 11, 0, 1, 2, 3, 8,
                                                                                9, 10, 11}));
  Tensor cols = index_select(x, 1, i64({3, 0, 3}));
  EXPECT_EQ(cols.shape(), (Shape{3, 3}));
  EXPECT_EQ(vals(cols), (std::vector<double>{3, 0, 3, 7, 4, 7, 11, 8, 11}));
  EXPECT_EQ(vals(index_select(x, -1, i64({1}))), (std::vector<double>{1, 5, 9}));
  Tensor none = index_select(x, 0, i64({}, {0}));
  EXPECT_EQ(none.shape(), (Shape{0, 4}));
  EXPECT_EQ(index_select(zeros({0, 3}), 0, i64({}, {0})).shape(), (Shape{0, 3}));
  Tensor one = index_select(x, 0, scalar_tensor(1, kInt64));  // 0-d id drops the dim
  EXPECT_EQ(one.shape(), Shape{4});
  EXPECT_EQ(vals(one), (std::vector<double>{4, 5, 6, 7}));
  // strided input and strided ids
  EXPECT_EQ(vals(index_select(x.t(), 1, i64({2, 0}))), vals(index_select(x, 0, i64({2, 0})).t()));
  Tensor ids = i64({0, 9, 2, 9, 1, 9}).slice(0, 0, 6, 2);  // {0, 2, 1}
  EXPECT_EQ(vals(index_select(x, 0, ids).select(1, 0)), (std::vector<double>{0, 8, 4}));
  // 3-D, middle dim
  Tensor y = arange(24, kFloat64).reshape({2, 3, 4});
  Tensor m = index_select(y, 1, i64({2, 0}));
  EXPECT_EQ(m.shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(vals(m), (std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 12, 13, 14, 15}));
  Tensor n = index_select(i64({10, 20, 30}), 0, i64({2, 1}));
  EXPECT_EQ(n.to_vector<int64_t>(), (std::vector<int64_t>{30, 20}));
}

TEST(TensorIndex, IndexSelectBadIdsThrow) {
  Tensor E = lesson_table();
  expect_error([&] { (void)index_select(E, 0, i64({0, 1, 5})); }, "index_select", {"id 5", "[2]", "[0, 5)"});
  expect_error([&] { (void)index_select(E, 0, i64({3, -1})); }, "index_select", {"id -1", "[1]", "[0, 5)"});
  expect_error([&] { (void)index_select(E, 1, i64({2})); }, "index_select", {"id 2", "[0]", "[0, 2)"});
  expect_error([&] { (void)index_select(E, 0, tensor({1.f, 2.f})); }, "index_select", {"int64", "float32"});
  expect_error([&] { (void)index_select(E, 0, i64({1, 2}, {1, 2})); }, "index_select", {"(1, 2)"});
  expect_error([&] { (void)index_select(E, 2, i64({0})); }, "index_select", {"dim 2"});
}

// ---- index_add_ ----

TEST(TensorIndex, IndexAddAccumulatesRepeatedIds) {
  Tensor x = zeros({4, 2}, kFloat64);
  Tensor src = f64({1, 2, 3, 4, 5, 6}, {3, 2});
  uint64_t v = x.version();
  index_add_(x, 0, i64({0, 2, 0}), src);
  EXPECT_GT(x.version(), v);
  EXPECT_EQ(vals(x), (std::vector<double>{6, 8, 0, 0, 3, 4, 0, 0}));  // row 0 = src[0] + src[2]
  index_add_(x, 0, i64({3, 3, 3}), src);
  EXPECT_EQ(vals(x.select(0, 3)), (std::vector<double>{9, 12}));
  // along dim 1
  Tensor y = ones({2, 3}, kFloat64);
  index_add_(y, 1, i64({2, 2}), f64({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(vals(y), (std::vector<double>{1, 1, 4, 1, 1, 8}));
  // into a strided destination
  Tensor z = zeros({3, 4}, kFloat64);
  Tensor zt = z.t();  // (4, 3)
  index_add_(zt, 0, i64({1, 1}), f64({1, 2, 3, 10, 20, 30}, {2, 3}));
  EXPECT_EQ(vals(z), (std::vector<double>{0, 11, 0, 0, 0, 22, 0, 0, 0, 33, 0, 0}));
  // int64 destination
  Tensor n = zeros({2}, kInt64);
  index_add_(n, 0, i64({1, 1, 0}), i64({5, 6, 7}));
  EXPECT_EQ(n.to_vector<int64_t>(), (std::vector<int64_t>{7, 11}));
}

// A source whose rows are each one value repeated (stride 0 inside a row,
// as a sum's gradient is) is read in place: the same result as its copy.
TEST(TensorIndex, IndexAddOfRepeatedRowsIsThatOfTheirCopy) {
  const Tensor per_row = f64({1.5, -2, 7}, {3, 1});
  const Tensor src = per_row.expand({3, 4});  // (3, 4), strides (1, 0)
  const Tensor scalar = f64({0.25}, {}).expand({3, 4});  // strides (0, 0)
  for (const Tensor& s : {src, scalar}) {
    Tensor a = zeros({5, 4}, kFloat64), b = zeros({5, 4}, kFloat64);
    index_add_(a, 0, i64({4, 0, 4}), s);
    index_add_(b, 0, i64({4, 0, 4}), s.contiguous());
    EXPECT_TRUE(equal_bits(a, b));
  }
  Tensor a = zeros({5, 4}, kFloat64);
  index_add_(a, 0, i64({4, 0, 4}), src);
  EXPECT_EQ(vals(a.select(0, 4)), (std::vector<double>{8.5, 8.5, 8.5, 8.5}));  // 1.5 + 7
  EXPECT_EQ(vals(a.select(0, 0)), (std::vector<double>{-2, -2, -2, -2}));
  // One-dimensional: each row is one value.
  Tensor v = zeros({3}, kFloat64);
  index_add_(v, 0, i64({2, 2}), f64({0.5}, {}).expand({2}));
  EXPECT_EQ(vals(v), (std::vector<double>{0, 0, 1}));
}

TEST(TensorIndex, IndexAddErrorsLeaveDestinationUnchanged) {
  Tensor x = f64({1, 2, 3, 4}, {2, 2});
  uint64_t v = x.version();
  // the bad id is the last one: nothing may have been added for the first
  expect_error([&] { index_add_(x, 0, i64({0, 7}), ones({2, 2}, kFloat64)); }, "index_add_", {"id 7", "[1]", "[0, 2)"});
  expect_error([&] { index_add_(x, 0, i64({0, 1}), ones({3, 2}, kFloat64)); }, "index_add_", {"(3, 2)", "(2, 2)"});
  expect_error([&] { index_add_(x, 0, i64({0}), ones({1, 2})); }, "index_add_", {"float64", "float32"});
  expect_error([&] { index_add_(x, 0, f64({0}), ones({1, 2}, kFloat64)); }, "index_add_", {"int64"});
  EXPECT_EQ(vals(x), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(x.version(), v);
}

// ---- gather ----

TEST(TensorIndex, Gather) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor g1 = gather(x, 1, i64({2, 0, 1, 1}, {2, 2}));  // out[i][j] = x[i][ids[i][j]]
  EXPECT_EQ(g1.shape(), (Shape{2, 2}));
  EXPECT_EQ(vals(g1), (std::vector<double>{3, 1, 5, 5}));
  Tensor g0 = gather(x, 0, i64({1, 0, 1, 0, 0, 1}, {2, 3}));  // out[i][j] = x[ids[i][j]][j]
  EXPECT_EQ(vals(g0), (std::vector<double>{4, 2, 6, 1, 2, 6}));
  // picking each row's target: the log-likelihood pattern of a cross-entropy
  Tensor targets = i64({2, 0}, {2, 1});
  EXPECT_EQ(vals(gather(x, -1, targets)), (std::vector<double>{3, 4}));
  EXPECT_EQ(vals(gather(x.t(), 0, i64({2, 1}, {1, 2}))), (std::vector<double>{3, 5}));
}

TEST(TensorIndex, GatherErrors) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error([&] { (void)gather(x, 1, i64({0, 1, 3, 0}, {2, 2})); }, "gather", {"id 3", "[1, 0]", "[0, 3)"});
  expect_error([&] { (void)gather(x, 1, i64({0, 1})); }, "gather", {"(2)", "(2, 3)"});
  expect_error([&] { (void)gather(x, 1, i64({0, 0, 0, 0, 0, 0}, {3, 2})); }, "gather", {"(3, 2)", "(2, 3)"});
}

// ---- one_hot ----

TEST(TensorIndex, OneHot) {
  Tensor ids = i64({2, 4, 0});
  Tensor oh = one_hot(ids, 5);
  EXPECT_EQ(oh.dtype(), kInt64);
  EXPECT_EQ(oh.shape(), (Shape{3, 5}));
  EXPECT_EQ(oh.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(one_hot(ids).shape(), (Shape{3, 5}));  // num_classes = max + 1
  Tensor two = one_hot(i64({1, 0, 2, 1}, {2, 2}), 3);
  EXPECT_EQ(two.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(two.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0}));
  EXPECT_EQ(one_hot(i64({}, {0}), 4).shape(), (Shape{0, 4}));
}

TEST(TensorIndex, OneHotTimesTableEqualsLookup) {
  // lesson B: one_hot(i) x E = row i of E, but the lookup needs no one-hot vector
  Tensor E = lesson_table();
  Tensor ids = i64({2, 4, 0});
  Tensor via_matmul = matmul(one_hot(ids, 5).to(kFloat32), E);
  Tensor via_lookup = index_select(E, 0, ids);
  EXPECT_EQ(via_matmul.to_vector<float>(), via_lookup.to_vector<float>());
  EXPECT_EQ(via_matmul.to_vector<float>(), (std::vector<float>{0.2f, -0.1f, 0.7f, 0.3f, -0.4f, 0.8f}));
}

TEST(TensorIndex, OneHotErrors) {
  expect_error([] { (void)one_hot(i64({1, 9, 0, 2}, {2, 2}), 4); }, "one_hot", {"id 9", "[0, 1]", "[0, 4)"});
  expect_error([] { (void)one_hot(i64({0, -2}), 3); }, "one_hot", {"id -2", "[1]"});
  expect_error([] { (void)one_hot(tensor({1.f}), 3); }, "one_hot", {"int64", "float32"});
  expect_error([] { (void)one_hot(i64({}, {0})); }, "one_hot", {"num_classes"});
}

// ---- cat / stack ----

TEST(TensorJoin, Cat) {
  Tensor a = f64({1, 2, 3, 4, 5, 6}, {2, 3}), b = f64({7, 8, 9}, {1, 3}), c = f64({-1, -2}, {2, 1});
  Tensor r = cat({a, b});
  EXPECT_EQ(r.shape(), (Shape{3, 3}));
  EXPECT_EQ(vals(r), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  Tensor k = cat({a, c, a}, 1);
  EXPECT_EQ(k.shape(), (Shape{2, 7}));
  EXPECT_EQ(vals(k), (std::vector<double>{1, 2, 3, -1, 1, 2, 3, 4, 5, 6, -2, 4, 5, 6}));
  EXPECT_EQ(vals(cat({a, c}, -1)), vals(cat({a, c}, 1)));
  EXPECT_EQ(vals(cat({a, zeros({0, 3}, kFloat64), b})), vals(r));  // empty pieces are fine
  EXPECT_EQ(vals(cat({a})), vals(a));
  EXPECT_FALSE(cat({a}).storage().get() == a.storage().get());  // always a new tensor
  // strided inputs
  EXPECT_EQ(vals(cat({a.t(), b.t()}, 1)), vals(r.t()));
  EXPECT_EQ(cat({i64({1}), i64({2, 3})}).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
}

TEST(TensorJoin, CatErrors) {
  Tensor a = zeros({2, 3}), b = zeros({2, 4});
  expect_error([&] { (void)cat({a, b}, 0); }, "cat", {"(2, 4)", "(2, 3)", "dim 0"});
  expect_error([&] { (void)cat({a, zeros({2, 3, 1})}, 0); }, "cat", {"(2, 3, 1)", "(2, 3)"});
  expect_error([] { (void)cat({}); }, "cat", {"non-empty"});
  expect_error([&] { (void)cat({a, zeros({2, 3}, kFloat64)}); }, "cat", {"float64", "float32"});
  expect_error([] { (void)cat({scalar_tensor(1), scalar_tensor(2)}); }, "cat", {"zero-dim"});
  expect_error([&] { (void)cat({a, a}, 2); }, "cat", {"dim 2"});
}

TEST(TensorJoin, Stack) {
  Tensor a = f64({1, 2, 3, 4, 5, 6}, {2, 3}), b = f64({7, 8, 9, 10, 11, 12}, {2, 3});
  Tensor s0 = stack({a, b});
  EXPECT_EQ(s0.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(vals(s0), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  Tensor s1 = stack({a, b}, 1);
  EXPECT_EQ(s1.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(vals(s1), (std::vector<double>{1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12}));
  Tensor s2 = stack({a, b}, -1);
  EXPECT_EQ(s2.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(vals(s2), (std::vector<double>{1, 7, 2, 8, 3, 9, 4, 10, 5, 11, 6, 12}));
  Tensor sc = stack({scalar_tensor(1, kFloat64), scalar_tensor(2, kFloat64), scalar_tensor(3, kFloat64)});
  EXPECT_EQ(sc.shape(), Shape{3});
  EXPECT_EQ(vals(sc), (std::vector<double>{1, 2, 3}));
}

TEST(TensorJoin, StackErrors) {
  expect_error([] { (void)stack({zeros({2, 3}), zeros({3, 2})}); }, "stack", {"(3, 2)", "(2, 3)"});
  expect_error([] { (void)stack({}); }, "stack", {"non-empty"});
  expect_error([] { (void)stack({zeros({2}), zeros({2})}, 2); }, "stack", {"dim 2"});
}

}  // namespace
