// The Tensor data structure: dtypes, metadata, conversions, factories,
// errors on bad sizes, reading values, printing, the caching allocator and
// the version counter.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::test;


// ---- dtype ----

TEST(TensorDType, SizesAndNames) {
  EXPECT_EQ(dtype_size(kFloat32), 4u);
  EXPECT_EQ(dtype_size(kFloat64), 8u);
  EXPECT_EQ(dtype_size(kInt64), 8u);
  EXPECT_EQ(dtype_size(kBool), 1u);
  EXPECT_STREQ(dtype_name(kFloat32), "float32");
  EXPECT_STREQ(dtype_name(kFloat64), "float64");
  EXPECT_STREQ(dtype_name(kInt64), "int64");
  EXPECT_STREQ(dtype_name(kBool), "bool");
  EXPECT_TRUE(is_floating(kFloat32));
  EXPECT_TRUE(is_floating(kFloat64));
  EXPECT_FALSE(is_floating(kInt64));
  EXPECT_FALSE(is_floating(kBool));
}

TEST(TensorDType, FactoriesKeepTheirDType) {
  EXPECT_EQ(zeros({2}).dtype(), kFloat32);
  EXPECT_EQ(zeros({2}, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(ones({2}, kInt64).dtype(), kInt64);
  EXPECT_EQ(full({2}, 1, kBool).dtype(), kBool);
  EXPECT_EQ(tensor({1.f, 2.f}).dtype(), kFloat32);
  EXPECT_EQ(f64({1.0}).dtype(), kFloat64);
  EXPECT_EQ(i64({1}).dtype(), kInt64);
  EXPECT_EQ(tensor(std::vector<bool>{true}).dtype(), kBool);
  EXPECT_EQ(arange(3).dtype(), kFloat32);
  EXPECT_TRUE(zeros({1}).is_floating_point());
  EXPECT_FALSE(zeros({1}, kInt64).is_floating_point());
}

// ---- metadata ----

TEST(TensorMeta, ShapeStridesNumelDim) {
  Tensor x = zeros({2, 3, 4});
  EXPECT_EQ(x.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(x.stride(), (Shape{12, 4, 1}));
  EXPECT_EQ(x.numel(), 24);
  EXPECT_EQ(x.dim(), 3);
  EXPECT_EQ(x.size(0), 2);
  EXPECT_EQ(x.size(-1), 4);
  EXPECT_EQ(x.size(-3), 2);
  EXPECT_EQ(x.storage_offset(), 0);
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_TRUE(x.defined());
  EXPECT_FALSE(Tensor().defined());
}

TEST(TensorMeta, ScalarAndZeroSize) {
  Tensor s = scalar_tensor(3.0);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_TRUE(s.is_contiguous());
  Tensor z = zeros({0, 3});
  EXPECT_EQ(z.numel(), 0);
  EXPECT_EQ(z.dim(), 2);
  EXPECT_TRUE(z.is_contiguous());
  EXPECT_TRUE(z.to_vector<double>().empty());
}

TEST(TensorMeta, SizeOfBadDimThrows) {
  Tensor x = zeros({2, 3});
  expect_error([&] { (void)x.size(2); }, "size", {"dim 2"});
  expect_error([&] { (void)x.size(-3); }, "size", {"dim -3"});
}

TEST(TensorMeta, ContiguityOfViews) {
  Tensor x = arange(6).reshape({2, 3});
  EXPECT_FALSE(x.t().is_contiguous());
  EXPECT_TRUE(x.t().contiguous().is_contiguous());
  EXPECT_FALSE(x.slice(1, 0, 3, 2).is_contiguous());
  EXPECT_TRUE(x.select(0, 1).is_contiguous());
  EXPECT_EQ(x.select(0, 1).storage_offset(), 3);
  EXPECT_FALSE(tensor({1.f, 2.f, 3.f}).expand({2, 3}).is_contiguous());
  // size-1 dims do not matter for contiguity
  EXPECT_TRUE(x.narrow(0, 1, 1).is_contiguous());
  EXPECT_TRUE(x.unsqueeze(1).is_contiguous());
}

// ---- conversions ----

TEST(TensorConvert, FloatToInt64TruncatesTowardZero) {
  Tensor x = f64({-2.7, -1.0, -0.5, 0.0, 0.5, 1.9, 2.9, 1e10});
  Tensor y = x.to(kInt64);
  EXPECT_EQ(y.dtype(), kInt64);
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{-2, -1, 0, 0, 0, 1, 2, 10000000000}));
  Tensor z = tensor({-3.99f, 3.99f}).to(kInt64);
  EXPECT_EQ(z.to_vector<int64_t>(), (std::vector<int64_t>{-3, 3}));
}

TEST(TensorConvert, ToBoolAndBack) {
  Tensor b = f64({0.0, 0.5, -1.0, -0.0, 2.0}).to(kBool);
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true, true, false, true}));
  Tensor back = b.to(kFloat32);
  EXPECT_EQ(back.dtype(), kFloat32);
  EXPECT_EQ(vals(back), (std::vector<double>{0, 1, 1, 0, 1}));
  EXPECT_EQ(i64({0, 7, -2}).to(kBool).to_vector<bool>(), (std::vector<bool>{false, true, true}));
}

TEST(TensorConvert, FloatPrecision) {
  Tensor x = f64({0.1, 1.0 / 3.0, 1e40});
  Tensor y = x.to(kFloat32);
  EXPECT_EQ(y.dtype(), kFloat32);
  std::vector<float> v = y.to_vector<float>();
  EXPECT_EQ(v[0], 0.1f);
  EXPECT_EQ(v[1], static_cast<float>(1.0 / 3.0));
  EXPECT_TRUE(std::isinf(v[2]));
  // float32 -> float64 is exact
  Tensor z = tensor({0.1f}).to(kFloat64);
  EXPECT_EQ(z.item<double>(), static_cast<double>(0.1f));
  EXPECT_EQ(i64({-5, 1LL << 40}).to(kFloat64).to_vector<double>(), (std::vector<double>{-5.0, 1099511627776.0}));
}

TEST(TensorConvert, ToOfNonContiguousView) {
  Tensor x = arange(6, kFloat64).reshape({2, 3}).t();  // (3, 2)
  Tensor y = x.to(kFloat32);
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(vals(y), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(TensorConvert, ContiguousCopiesOnlyWhenNeeded) {
  Tensor x = arange(6).reshape({2, 3});
  Tensor same = x.contiguous();
  EXPECT_EQ(same.storage().get(), x.storage().get());
  Tensor xt = x.t();
  Tensor c = xt.contiguous();
  EXPECT_NE(c.storage().get(), x.storage().get());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.stride(), (Shape{2, 1}));
  EXPECT_EQ(vals(c), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(TensorConvert, ContiguousMaterializesExpandedViews) {
  Tensor e = f64({1, 2}, {2, 1}).expand({2, 3});
  Tensor c = e.contiguous();
  EXPECT_EQ(c.stride(), (Shape{3, 1}));
  EXPECT_EQ(vals(c), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  c.fill_(0);  // its own memory: the 2 source values are untouched
  EXPECT_EQ(vals(e), (std::vector<double>{1, 1, 1, 2, 2, 2}));
}

TEST(TensorConvert, CloneIsADeepCopy) {
  Tensor x = f64({1, 2, 3, 4}, {2, 2});
  Tensor c = x.clone();
  EXPECT_NE(c.storage().get(), x.storage().get());
  x.fill_(9);
  EXPECT_EQ(vals(c), (std::vector<double>{1, 2, 3, 4}));
  c.fill_(-1);
  EXPECT_EQ(vals(x), (std::vector<double>{9, 9, 9, 9}));
  Tensor v = f64({1, 2, 3, 4, 5, 6}, {2, 3}).t().clone();
  EXPECT_EQ(v.shape(), (Shape{3, 2}));
  EXPECT_EQ(vals(v), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(TensorConvert, HandleCopyAliases) {
  Tensor a = zeros({3});
  Tensor b = a;  // same tensor
  EXPECT_TRUE(b.is_same(a));
  b.fill_(2);
  EXPECT_EQ(vals(a), (std::vector<double>{2, 2, 2}));
}

// ---- factories ----

TEST(TensorFactory, ZerosOnesFull) {
  EXPECT_EQ(vals(zeros({2, 2})), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(vals(ones({3}, kFloat64)), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(full({2, 1}, -2.5).to_vector<float>(), (std::vector<float>{-2.5f, -2.5f}));
  EXPECT_EQ(full({2}, 7, kInt64).to_vector<int64_t>(), (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(full({2}, 1, kBool).to_vector<bool>(), (std::vector<bool>{true, true}));
  Tensor s = scalar_tensor(4.25, kFloat64);
  EXPECT_EQ(s.item<double>(), 4.25);
  EXPECT_EQ(scalar_tensor(3, kInt64).item<int64_t>(), 3);
  Tensor x = f64({1, 2, 3}, {3, 1});
  EXPECT_EQ(zeros_like(x).shape(), (Shape{3, 1}));
  EXPECT_EQ(zeros_like(x).dtype(), kFloat64);
  EXPECT_EQ(vals(ones_like(x)), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(vals(full_like(x, 0.5)), (std::vector<double>{0.5, 0.5, 0.5}));
  EXPECT_EQ(full_like(i64({1, 2}), 3).dtype(), kInt64);
}

TEST(TensorFactory, Arange) {
  EXPECT_EQ(vals(arange(5)), (std::vector<double>{0, 1, 2, 3, 4}));
  Tensor q = arange(0, 1, 0.25);
  EXPECT_EQ(q.shape(), Shape{4});
  EXPECT_EQ(vals(q), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  Tensor neg = arange(5, 0, -1.5, kFloat64);  // ceil(5/1.5) = 4 elements
  EXPECT_EQ(vals(neg), (std::vector<double>{5, 3.5, 2, 0.5}));
  EXPECT_EQ(vals(arange(3, -3, -2, kInt64)), (std::vector<double>{3, 1, -1}));
  EXPECT_EQ(arange(2, 7, 2, kInt64).to_vector<int64_t>(), (std::vector<int64_t>{2, 4, 6}));
  EXPECT_EQ(arange(0).numel(), 0);
  EXPECT_EQ(arange(0, 5, -1).numel(), 0);  // a step pointing away from end: empty (NumPy's rule)
  EXPECT_EQ(arange(3, 3).numel(), 0);
  // ceil((1 - 0) / 0.3) = 4: 0, 0.3, 0.6, 0.9
  EXPECT_EQ(arange(0, 1, 0.3, kFloat64).numel(), 4);
}

TEST(TensorFactory, ArangeZeroStepThrows) {
  expect_error([] { (void)arange(0, 1, 0); }, "arange", {"step"});
}

TEST(TensorFactory, Eye) {
  EXPECT_EQ(vals(eye(3)), (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  Tensor r = eye(2, 3);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(vals(r), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  Tensor c = eye(3, 2, kInt64);
  EXPECT_EQ(c.dtype(), kInt64);
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(eye(0).shape(), (Shape{0, 0}));
}

TEST(TensorFactory, TensorFromValues) {
  Tensor x = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  EXPECT_EQ(x.shape(), (Shape{2, 3}));
  EXPECT_EQ(vals(x), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(tensor({1.f, 2.f}).shape(), Shape{2});  // 1-D by default
  Tensor e = f64({}, {0, 3});
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
}

TEST(TensorFactory, TensorCountMismatchThrows) {
  expect_error([] { (void)tensor({1.f, 2.f, 3.f}, {2, 2}); }, "tensor", {"3", "(2, 2)"});
  expect_error([] { (void)i64({1, 2, 3, 4, 5}, {2, 3}); }, "tensor", {"5", "(2, 3)"});
}

TEST(TensorFactory, NegativeSizeThrows) {
  expect_error([] { (void)empty({2, -1}); }, "empty", {"negative size", "-1", "(2, -1)"});
}

TEST(TensorFactory, NegativeSizeErrorsNameTheFactoryTheUserCalled) {
  expect_error([] { (void)zeros({-3}); }, "zeros", {"negative size", "-3", "(-3)"});
  expect_error([] { (void)ones({2, -1}); }, "ones", {"negative size", "(2, -1)"});
  expect_error([] { (void)full({4, -2}, 1.0); }, "full", {"negative size", "(4, -2)"});
  expect_error([] { (void)eye(-1); }, "eye", {"-1"});
}

TEST(TensorFactory, ElementCountOverflowThrowsBeforeAllocating) {
  // 2^80 elements: must be refused by the size check, not by the allocator
  // (which would throw std::bad_alloc or crash).
  const int64_t big = int64_t{1} << 40;
  expect_error([&] { (void)empty({big, big}); }, "empty", {"int64", "(1099511627776, 1099511627776)"});
  expect_error([&] { (void)zeros({big, big}, kFloat64); }, "", {"int64"});
  // 2^61 float64 elements fit in int64 as a count, but not as bytes (2^64).
  expect_error([] { (void)empty({int64_t{1} << 61}, kFloat64); }, "empty", {"int64", "float64"});
}

TEST(TensorFactory, ZeroDimWithHugeOtherDims) {
  // A zero dim makes the product 0, even with huge other dims; nothing in the
  // metadata (numel, strides) may overflow on the way.
  const int64_t big = int64_t{1} << 40;
  Tensor a = empty({0, big, big});
  EXPECT_EQ(a.numel(), 0);
  EXPECT_EQ(a.stride()[2], 1);
  EXPECT_EQ(a.stride()[1], big);
  Tensor b = empty({big, big, 0});
  EXPECT_EQ(b.numel(), 0);
}

// ---- reading values ----

TEST(TensorRead, Item) {
  EXPECT_EQ(scalar_tensor(3.5, kFloat64).item<double>(), 3.5);
  EXPECT_EQ(tensor({7.25f}).item<float>(), 7.25f);                  // shape (1)
  EXPECT_EQ(f64({-2.0}, {1, 1}).item<double>(), -2.0);              // shape (1, 1)
  EXPECT_EQ(scalar_tensor(2.9, kFloat64).item<int64_t>(), 2);        // static_cast
  EXPECT_EQ(i64({41}).item<int64_t>(), 41);
  EXPECT_EQ(arange(6, kFloat64).reshape({2, 3}).select(0, 1).select(0, 2).item<double>(), 5.0);
}

TEST(TensorRead, ItemOnNonScalarThrowsWithShape) {
  expect_error([] { (void)zeros({2, 2}).item<float>(); }, "item", {"(2, 2)"});
  expect_error([] { (void)zeros({0}).item<float>(); }, "item", {"(0)"});
}

TEST(TensorRead, ToVectorOfNonContiguousViews) {
  Tensor x = arange(12, kFloat64).reshape({3, 4});
  EXPECT_EQ(vals(x.t()), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(vals(x.slice(1, 1, 4, 2)), (std::vector<double>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(vals(x.select(1, 2)), (std::vector<double>{2, 6, 10}));
  EXPECT_EQ(vals(f64({1, 2}, {2, 1}).expand({2, 3})), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(x.t().to_vector<int64_t>()[1], 4);
  EXPECT_EQ(x.select(0, 2).to_vector<float>(), (std::vector<float>{8, 9, 10, 11}));
}

// ---- printing ----

TEST(TensorPrint, Matrix) {
  EXPECT_EQ(tensor({0.2f, -0.1f, 0.7f, 0.3f}, {2, 2}).to_string(),
            "tensor([[ 0.2000, -0.1000],\n"
            "        [ 0.7000,  0.3000]], shape=(2, 2))");
}

TEST(TensorPrint, VectorScalarAndDTypes) {
  EXPECT_EQ(tensor({1.f, 2.5f, -3.f}).to_string(), "tensor([ 1.0000,  2.5000, -3.0000], shape=(3))");
  EXPECT_EQ(scalar_tensor(2.5).to_string(), "tensor(2.5000, shape=())");
  EXPECT_EQ(f64({1, 2}).to_string(), "tensor([1., 2.], shape=(2), dtype=float64)");
  EXPECT_EQ(i64({1, -20, 300}).to_string(), "tensor([  1, -20, 300], shape=(3), dtype=int64)");
  EXPECT_EQ(tensor(std::vector<bool>{true, false}).to_string(), "tensor([ True, False], shape=(2), dtype=bool)");
  EXPECT_EQ(zeros({0}).to_string(), "tensor([], shape=(0))");
  EXPECT_EQ(Tensor().to_string(), "tensor(undefined)");
}

TEST(TensorPrint, ThreeDims) {
  EXPECT_EQ(arange(8).reshape({2, 2, 2}).to_string(),
            "tensor([[[0., 1.],\n"
            "         [2., 3.]],\n"
            "\n"
            "        [[4., 5.],\n"
            "         [6., 7.]]], shape=(2, 2, 2))");
}

TEST(TensorPrint, ScientificWhenMagnitudesSpanTooMuch) {
  EXPECT_EQ(tensor({1e-5f, 1.f}).to_string(), "tensor([1.0000e-05, 1.0000e+00], shape=(2))");
}

TEST(TensorPrint, NonContiguousPrintsLogicalOrder) {
  EXPECT_EQ(arange(4).reshape({2, 2}).t().to_string(),
            "tensor([[0., 2.],\n"
            "        [1., 3.]], shape=(2, 2))");
}

TEST(TensorPrint, SummarizesLargeTensors) {
  std::string s = arange(2000).to_string();
  EXPECT_NE(s.find("..."), std::string::npos);
  EXPECT_NE(s.find("   0.,    1.,    2., ..., 1997., 1998., 1999.]"), std::string::npos) << s;
  EXPECT_EQ(s.find("1000."), std::string::npos);
  EXPECT_LT(s.size(), 200u);
  // 1000 elements are printed in full
  std::string full = arange(1000).to_string();
  EXPECT_EQ(full.find("..."), std::string::npos);
  EXPECT_NE(full.find(" 500.,"), std::string::npos);
  // summarizing rows of a matrix
  std::string m = zeros({100, 100}).to_string();
  EXPECT_NE(m.find("...,\n"), std::string::npos);
  EXPECT_LT(m.size(), 600u);
}

TEST(TensorPrint, RequiresGradLeafIsMarked) {
  Tensor x = ones({2});
  x.requires_grad_();
  EXPECT_EQ(x.to_string(), "tensor([1., 1.], shape=(2), requires_grad=True)");
}

// The stream operator prints each dtype in its own way: integers and bools
// exactly, whole floats as "3." (PyTorch's habit), other floats with four
// decimals; one column width for all the values.
TEST(TensorPrint, StreamOperatorPrintsEachDTypeInItsOwnWay) {
  auto printed = [](const Tensor& t) {
    std::ostringstream os;
    os << t;
    return os.str();
  };
  EXPECT_EQ(printed(arange(0, 6, 1, kInt64).reshape({2, 3})), "tensor([[0, 1, 2],\n        [3, 4, 5]], shape=(2, 3), dtype=int64)");
  EXPECT_EQ(printed(tensor(std::vector<int64_t>{-7, 123456789012LL})),
            "tensor([          -7, 123456789012], shape=(2), dtype=int64)");
  EXPECT_EQ(printed(tensor(std::vector<bool>{false, true, true})), "tensor([False,  True,  True], shape=(3), dtype=bool)");
  EXPECT_EQ(printed(arange(6).reshape({2, 3})), "tensor([[0., 1., 2.],\n        [3., 4., 5.]], shape=(2, 3))");
  EXPECT_EQ(printed(tensor({-2.f, 0.f, 30.f})), "tensor([-2.,  0., 30.], shape=(3))");
  EXPECT_EQ(printed(scalar_tensor(4.0)), "tensor(4., shape=())");
  EXPECT_EQ(printed(tensor({1.f, NAN, -INFINITY})), "tensor([  1.,  nan, -inf], shape=(3))");
  EXPECT_EQ(printed(tensor({0.5f, 2.f})), "tensor([0.5000, 2.0000], shape=(2))");  // one value not whole: all get decimals
  EXPECT_EQ(printed(tensor({1e9f, 2.f})), "tensor([1.0000e+09, 2.0000e+00], shape=(2))");  // too large to show whole
}

TEST(TensorPrint, StreamOperatorMatchesToString) {
  std::ostringstream os;
  Tensor x = tensor({1.f, 2.f});
  os << x;
  EXPECT_EQ(os.str(), x.to_string());
}

// ---- caching allocator ----

#if !defined(__SANITIZE_ADDRESS__)
TEST(TensorAllocator, ReusesFreedBlocksOfTheSameSize) {
  { Tensor warm = empty({1000}); }  // leaves one block of this size class cached
  const allocator::Stats before = allocator::stats();
  for (int i = 0; i < 10; ++i) {
    Tensor t = empty({1000});
    t.fill_(i);
  }
  const allocator::Stats after = allocator::stats();
  EXPECT_GE(after.allocations - before.allocations, 10u);
  EXPECT_GE(after.cache_hits - before.cache_hits, 10u);
}

TEST(TensorAllocator, EmptyCacheReleasesIdleBytes) {
  { Tensor t = empty({4096}); }
  EXPECT_GT(allocator::stats().cached_bytes, 0u);
  allocator::empty_cache();
  EXPECT_EQ(allocator::stats().cached_bytes, 0u);
  const uint64_t hits = allocator::stats().cache_hits;
  { Tensor t = empty({4096}); }  // nothing cached: a miss
  EXPECT_EQ(allocator::stats().cache_hits, hits);
}
#endif

TEST(TensorAllocator, DataIs64ByteAligned) {
  for (int64_t n : {1, 3, 17, 1000}) {
    Tensor t = empty({n}, kFloat64);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.storage()->data()) % 64, 0u) << n;
  }
}

// Memory that belongs to someone else (what ember.from_numpy wraps): ops
// read and write it in place, the storage keeps its owner alive while any
// tensor or view of it lives, and the owner goes when the last one does.
TEST(TensorStorage, BorrowedMemoryKeepsItsOwnerAliveUntilTheLastView) {
  auto values = std::make_shared<std::vector<double>>(std::vector<double>{1, 2, 3, 4, 5, 6});
  std::weak_ptr<std::vector<double>> alive = values;
  Tensor view;
  {
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = std::make_shared<Storage>(values->data(), values->size() * sizeof(double), values);
    impl->shape = {2, 3};
    impl->strides = {3, 1};
    impl->dtype = kFloat64;
    Tensor t(impl);
    EXPECT_TRUE(t.storage()->borrowed());
    EXPECT_EQ(t.data_ptr<double>(), values->data());
    t.mul_(2.0);  // in place, into the owner's memory
    view = t.select(1, 2);
  }
  values.reset();
  ASSERT_FALSE(alive.expired());  // the view holds the storage, which holds the owner
  EXPECT_EQ(view.to_vector<double>(), (std::vector<double>{6, 12}));
  EXPECT_EQ((*alive.lock())[0], 2.0);
  view = Tensor();
  EXPECT_TRUE(alive.expired());
}

TEST(TensorStorage, BorrowedMemoryWithoutAnOwnerIsRefused) {
  double x = 0;
  expect_error([&] { Storage s(&x, sizeof x, nullptr); }, "Storage", {"needs an owner"});
}

// ---- version counter and in-place writes ----

TEST(TensorVersion, InPlaceOpsBumpAndViewsShareIt) {
  Tensor x = zeros({2, 3});
  Tensor v = x.reshape({6});
  Tensor row = x.select(0, 1);
  uint64_t ver = x.version();
  auto bumped = [&](const char* what) {
    EXPECT_GT(x.version(), ver) << what;
    EXPECT_EQ(v.version(), x.version()) << what;
    EXPECT_EQ(row.version(), x.version()) << what;
    ver = x.version();
  };
  x.fill_(1);
  bumped("fill_");
  x.zero_();
  bumped("zero_");
  x.copy_(ones({2, 3}));
  bumped("copy_");
  x.add_(ones({3}));
  bumped("add_(tensor)");
  x.add_(1.0);
  bumped("add_(scalar)");
  x.mul_(full({2, 1}, 2.0));
  bumped("mul_(tensor)");
  x.mul_(0.5);
  bumped("mul_(scalar)");
  row.fill_(7);  // through a view
  bumped("fill_ on a view");
  // Out-of-place ops do not write: no bump.
  Tensor y = x + 1.0;
  Tensor z = x.sum();
  EXPECT_EQ(x.version(), ver);
  // clone has its own counter
  Tensor c = x.clone();
  uint64_t cver = c.version();
  x.fill_(0);
  EXPECT_EQ(c.version(), cver);
}

TEST(TensorInPlace, Values) {
  Tensor x = f64({1, 2, 3, 4}, {2, 2});
  x.add_(f64({10, 20, 30, 40}, {2, 2}), 0.5);
  EXPECT_EQ(vals(x), (std::vector<double>{6, 12, 18, 24}));
  x.add_(-6.0);
  EXPECT_EQ(vals(x), (std::vector<double>{0, 6, 12, 18}));
  x.mul_(f64({1, -1, 2, 0.5}, {2, 2}));
  EXPECT_EQ(vals(x), (std::vector<double>{0, -6, 24, 9}));
  x.mul_(2.0);
  EXPECT_EQ(vals(x), (std::vector<double>{0, -12, 48, 18}));
  x.zero_();
  EXPECT_EQ(vals(x), (std::vector<double>{0, 0, 0, 0}));
  x.fill_(-0.25);
  EXPECT_EQ(vals(x), (std::vector<double>{-0.25, -0.25, -0.25, -0.25}));
  // copy_ converts dtypes
  Tensor f = zeros({3});
  f.copy_(f64({0.1, 1e-3, 3}));
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0.1f, 1e-3f, 3.f}));
  Tensor n = zeros({2}, kInt64);
  n.copy_(f64({-1.5, 2.5}));
  EXPECT_EQ(n.to_vector<int64_t>(), (std::vector<int64_t>{-1, 2}));
}

TEST(TensorInPlace, CopyWithWrongShapeThrowsAndLeavesDestination) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  uint64_t ver = x.version();
  expect_error([&] { x.copy_(zeros({4}, kFloat64)); }, "copy_", {"(4)", "(2, 3)"});
  expect_error([&] { x.copy_(zeros({3, 3}, kFloat64)); }, "copy_", {"(3, 3)", "(2, 3)"});
  EXPECT_EQ(vals(x), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(x.version(), ver);
}

TEST(TensorAutogradFields, RequiresGradOnlyForFloats) {
  Tensor x = zeros({2});
  EXPECT_FALSE(x.requires_grad());
  x.requires_grad_();
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(x.grad().defined());
  Tensor ids = zeros({2, 3}, kInt64);
  expect_error([&] { ids.requires_grad_(); }, "requires_grad_", {"int64", "(2, 3)"});
  EXPECT_FALSE(ids.requires_grad());
}

}  // namespace

namespace {
// Integers print exactly, even beyond 2^53 (they never pass through double).
TEST(TensorPrint, Int64PrintsExactlyAtTheExtremes) {
  using namespace ember;
  Tensor t = tensor(std::vector<int64_t>{INT64_MAX, -5, INT64_MIN}, {3});
  EXPECT_EQ(t.to_string(), "tensor([ 9223372036854775807,                   -5, -9223372036854775808], shape=(3), dtype=int64)");
}
}  // namespace
