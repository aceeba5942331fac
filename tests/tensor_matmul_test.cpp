// matmul with PyTorch semantics, against a naive triple loop in float64:
// 1-D/2-D/batched operands, broadcast batch dims, transposed and strided
// views (BLAS trans flags and leading dims), zero sizes and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::test;


// Reference matmul, written from the PyTorch rules with plain loops in
// float64. Also returns, per output element, sum_k |a_ik| |b_kj|: the scale
// that bounds the rounding error of any summation order.
struct Ref {
  Shape shape;
  std::vector<double> value, scale;
};

Ref ref_matmul(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  const bool va = sa.size() == 1, vb = sb.size() == 1;
  if (va) sa.insert(sa.begin(), 1);  // (K) -> (1, K)
  if (vb) sb.push_back(1);           // (K) -> (K, 1)
  const int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  size_t nb = std::max(ba.size(), bb.size());
  ba.insert(ba.begin(), nb - ba.size(), 1);
  bb.insert(bb.begin(), nb - bb.size(), 1);
  Shape batch(nb);
  for (size_t d = 0; d < nb; ++d) batch[d] = ba[d] == 1 ? bb[d] : ba[d];
  const std::vector<double> av = vals(a), bv = vals(b);
  Ref r;
  r.shape = batch;
  if (!va) r.shape.push_back(M);
  if (!vb) r.shape.push_back(N);
  const int64_t total = numel_of(batch);
  Shape idx(nb, 0);
  for (int64_t t = 0; t < total; ++t) {
    int64_t oa = 0, ob = 0;  // flat batch offsets into a and b (size-1 dims repeat)
    for (size_t d = 0; d < nb; ++d) {
      oa = oa * ba[d] + (ba[d] == 1 ? 0 : idx[d]);
      ob = ob * bb[d] + (bb[d] == 1 ? 0 : idx[d]);
    }
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0, sc = 0;
        for (int64_t k = 0; k < K; ++k) {
          double x = av[(oa * M + i) * K + k], y = bv[(ob * K + k) * N + j];
          s += x * y;
          sc += std::fabs(x) * std::fabs(y);
        }
        r.value.push_back(s);
        r.scale.push_back(sc);
      }
    for (int64_t d = static_cast<int64_t>(nb) - 1; d >= 0; --d) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

void expect_matmul(const Tensor& a, const Tensor& b, int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(__FILE__, line, shape_str(a.shape()) + " @ " + shape_str(b.shape()));
  Tensor c = matmul(a, b);
  Ref r = ref_matmul(a, b);
  ASSERT_EQ(c.shape(), r.shape);
  ASSERT_EQ(c.dtype(), a.dtype());
  std::vector<double> got = vals(c);
  ASSERT_EQ(got.size(), r.value.size());
  // float64: a few ulps of the scale; float32: 1e-5 of the scale (K <= 65).
  const double tol = a.dtype() == kFloat64 ? 1e-14 : 1e-5;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], r.value[i], tol * r.scale[i] + 1e-300) << "at flat " << i;
  }
}

class TensorMatmul : public ::testing::TestWithParam<DType> {
 protected:
  Tensor rnd(const Shape& s) { return randn(s, gen_, GetParam()); }
  Generator gen_{1234};
};

TEST_P(TensorMatmul, VectorAndMatrixShapes) {
  expect_matmul(rnd({5}), rnd({5}));           // dot -> ()
  expect_matmul(rnd({3, 5}), rnd({5}));        // -> (3)
  expect_matmul(rnd({5}), rnd({5, 4}));        // -> (4)
  expect_matmul(rnd({3, 5}), rnd({5, 4}));     // -> (3, 4)
  expect_matmul(rnd({1, 1}), rnd({1, 1}));
  expect_matmul(rnd({33, 65}), rnd({65, 17}));
  expect_matmul(rnd({1, 7}), rnd({7, 9}));     // single row
  expect_matmul(rnd({9, 7}), rnd({7, 1}));     // single column
  EXPECT_EQ(matmul(rnd({5}), rnd({5})).shape(), Shape{});
  EXPECT_EQ(rnd({3, 5}).matmul(rnd({5})).shape(), Shape{3});
}

TEST_P(TensorMatmul, BatchedAndBroadcastBatchDims) {
  expect_matmul(rnd({2, 3, 5}), rnd({2, 5, 4}));
  expect_matmul(rnd({2, 1, 3, 4}), rnd({5, 4, 2}));  // -> (2, 5, 3, 2)
  EXPECT_EQ(matmul(rnd({2, 1, 3, 4}), rnd({5, 4, 2})).shape(), (Shape{2, 5, 3, 2}));
  expect_matmul(rnd({2, 3, 5}), rnd({5, 4}));        // matrix broadcast over the batch
  expect_matmul(rnd({3, 5}), rnd({2, 5, 4}));
  expect_matmul(rnd({1, 3, 5}), rnd({4, 5, 2}));
  expect_matmul(rnd({5}), rnd({2, 5, 4}));           // -> (2, 4)
  expect_matmul(rnd({2, 3, 5}), rnd({5}));           // -> (2, 3)
  expect_matmul(rnd({3, 1, 2, 2}), rnd({1, 4, 2, 3}));
}

TEST_P(TensorMatmul, TransposedViews) {
  Tensor a = rnd({5, 3}), b = rnd({5, 4}), c = rnd({4, 5}), d = rnd({3, 5});
  expect_matmul(a.t(), b);      // (3, 5) @ (5, 4), a through the trans flag
  expect_matmul(d, c.t());      // (3, 5) @ (5, 4)
  expect_matmul(a.t(), c.t());  // both transposed
  expect_matmul(b.t(), a);      // (4, 5) @ (5, 3)
  Tensor ba = rnd({2, 5, 3}), bb = rnd({2, 4, 5});
  expect_matmul(ba.transpose(1, 2), bb.transpose(-1, -2));
  expect_matmul(rnd({3, 2, 5}).transpose(0, 1), rnd({5, 2, 4}).permute({1, 0, 2}));  // (2, 3, 5) @ (2, 5, 4)
  // transposed views give exactly what their contiguous copies give
  EXPECT_EQ(vals(matmul(a.t(), b)), vals(matmul(a.t().contiguous(), b)));
}

TEST_P(TensorMatmul, StridedViews) {
  Tensor big = rnd({12, 10});
  expect_matmul(big.slice(0, 0, 12, 2).narrow(1, 0, 5), rnd({5, 3}));  // row stride 20: leading dim > cols
  expect_matmul(big.narrow(1, 3, 4), rnd({4, 6}));                     // offset + leading dim 10
  expect_matmul(big.slice(1, 0, 10, 2), rnd({5, 2}));                  // column stride 2: copied
  expect_matmul(rnd({3, 6}), big.slice(0, 1, 12, 2).slice(1, 0, 10, 3));
  expect_matmul(big.select(1, 4), big.narrow(0, 0, 12));               // strided vector (12) @ (12, 10)
  expect_matmul(big.t().select(0, 2).narrow(0, 0, 10), big.t());       // column 2 of big (stride 10) @ (10, 12)
  Tensor batch = rnd({4, 3, 5});
  expect_matmul(batch.slice(0, 0, 4, 2), rnd({2, 5, 2}));              // batch stride doubled
  expect_matmul(rnd({3, 5}).expand({4, 3, 5}), rnd({4, 5, 2}));        // expanded batch (stride 0)
  expect_matmul(rnd({4, 3, 5}), rnd({5, 1}).expand({5, 3}));           // expanded columns (stride 0)
}

TEST_P(TensorMatmul, ZeroSizes) {
  Tensor k0 = matmul(rnd({3, 0}), rnd({0, 2}));  // empty sum: zeros
  EXPECT_EQ(k0.shape(), (Shape{3, 2}));
  EXPECT_EQ(vals(k0), std::vector<double>(6, 0.0));
  EXPECT_EQ(matmul(rnd({0}), rnd({0})).item<double>(), 0.0);
  EXPECT_EQ(vals(matmul(rnd({2, 4, 0}), rnd({0, 3}))), std::vector<double>(24, 0.0));
  EXPECT_EQ(matmul(rnd({0, 3}), rnd({3, 2})).shape(), (Shape{0, 2}));
  EXPECT_EQ(matmul(rnd({4, 3}), rnd({3, 0})).shape(), (Shape{4, 0}));
  EXPECT_EQ(matmul(rnd({0, 2, 3}), rnd({3, 4})).shape(), (Shape{0, 2, 4}));
}

// The "Tensor" prefix keeps these under --gtest_filter=Tensor*.
INSTANTIATE_TEST_SUITE_P(TensorDTypes, TensorMatmul, ::testing::Values(kFloat32, kFloat64),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

TEST(TensorMatmulValues, HandComputed) {
  Tensor a = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  Tensor b = tensor({7.f, 8.f, 9.f, 10.f, 11.f, 12.f}, {3, 2});
  EXPECT_EQ(vals(matmul(a, b)), (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ(vals(matmul(b, a)), (std::vector<double>{39, 54, 69, 49, 68, 87, 59, 82, 105}));
  EXPECT_EQ(matmul(tensor({1.f, 2.f, 3.f}), tensor({4.f, 5.f, 6.f})).item<float>(), 32.f);
  EXPECT_EQ(vals(matmul(eye(3), b)), vals(b));
  // lesson B: one_hot(ids) @ E picks rows of E
  Tensor E = tensor({-0.4f, 0.8f, 0.1f, 0.5f, 0.2f, -0.1f, -0.2f, 0.6f, 0.7f, 0.3f}, {5, 2});
  Tensor sel = tensor({0.f, 0.f, 1.f, 0.f, 0.f}, {1, 5});
  EXPECT_EQ(matmul(sel, E).to_vector<float>(), (std::vector<float>{0.2f, -0.1f}));
}

TEST(TensorMatmulErrors, InnerDimMismatch) {
  expect_error([] { (void)matmul(zeros({2, 3}), zeros({4, 5})); }, "matmul", {"(2, 3)", "(4, 5)"});
  expect_error([] { (void)matmul(zeros({3}), zeros({4})); }, "matmul", {"(3)", "(4)"});
  expect_error([] { (void)matmul(zeros({2, 3}), zeros({2})); }, "matmul", {"(2, 3)", "(2)"});
  expect_error([] { (void)matmul(zeros({4}), zeros({2, 3, 4})); }, "matmul", {"(4)", "(2, 3, 4)"});
  expect_error([] { (void)zeros({2, 3}).matmul(zeros({2, 3})); }, "matmul", {"(2, 3)"});
}

TEST(TensorMatmulErrors, BatchMismatchNamesBothFullShapes) {
  // The user passed (2, 3, 4) and (3, 4, 5): the message must show those,
  // not only the batch parts (2) and (3).
  expect_error([] { (void)matmul(zeros({2, 3, 4}), zeros({3, 4, 5})); }, "matmul", {"(2, 3, 4)", "(3, 4, 5)"});
}

TEST(TensorMatmulErrors, ZeroDimAndDTypes) {
  expect_error([] { (void)matmul(scalar_tensor(2), zeros({3})); }, "matmul", {"()", "(3)"});
  expect_error([] { (void)matmul(zeros({3}), scalar_tensor(2)); }, "matmul", {"()"});
  expect_error([] { (void)matmul(zeros({2, 2}), zeros({2, 2}, kFloat64)); }, "matmul", {"float32", "float64"});
  expect_error([] { (void)matmul(zeros({2, 2}, kInt64), zeros({2, 2}, kInt64)); }, "matmul", {"int64"});
}

}  // namespace
