// Views: same storage, new (shape, strides, offset). Writes through a view
// are seen by the base; impossible views are refused; reshape copies instead.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::test;

std::vector<double> iota(int n, double start = 0) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + i;
  return v;
}
Tensor ar(int64_t n) { return arange(static_cast<double>(n), kFloat64); }
bool shares(const Tensor& a, const Tensor& b) { return a.storage().get() == b.storage().get(); }

// ---- reshape / view ----

TEST(TensorView, ReshapeAndViewShareStorageAndSeeWrites) {
  Tensor x = ar(6);
  Tensor r = x.reshape({2, 3});
  Tensor v = x.view({3, 2});
  EXPECT_TRUE(shares(x, r));
  EXPECT_TRUE(shares(x, v));
  EXPECT_EQ(r.stride(), (Shape{3, 1}));
  EXPECT_EQ(v.stride(), (Shape{2, 1}));
  EXPECT_EQ(vals(r), iota(6));
  r.select(0, 1).fill_(-1);  // x[3:6] = -1
  EXPECT_EQ(vals(x), (std::vector<double>{0, 1, 2, -1, -1, -1}));
  EXPECT_EQ(vals(v), (std::vector<double>{0, 1, 2, -1, -1, -1}));
  x.copy_(tensor(std::vector<double>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(vals(r), (std::vector<double>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(vals(v.t()), (std::vector<double>{5, 3, 1, 4, 2, 0}));
}

TEST(TensorView, ReshapeInfersMinusOne) {
  Tensor x = ar(12);
  EXPECT_EQ(x.reshape({-1, 4}).shape(), (Shape{3, 4}));
  EXPECT_EQ(x.reshape({2, -1, 2}).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(x.view({-1}).shape(), (Shape{12}));
  EXPECT_EQ(scalar_tensor(5).reshape({1, 1}).shape(), (Shape{1, 1}));
  EXPECT_EQ(ar(1).reshape({}).shape(), Shape{});
  EXPECT_EQ(ar(1).reshape({}).item<double>(), 0.0);
}

TEST(TensorView, ReshapeBadShapesThrow) {
  Tensor x = ar(6).reshape({2, 3});
  expect_error([&] { (void)x.reshape({4}); }, "reshape", {"(4)", "(2, 3)"});
  expect_error([&] { (void)x.reshape({-1, 4}); }, "reshape", {"(-1, 4)", "(2, 3)"});
  expect_error([&] { (void)x.reshape({-1, -1}); }, "reshape", {"-1"});
  expect_error([&] { (void)x.view({5}); }, "view", {"(5)", "(2, 3)"});
  expect_error([&] { (void)x.reshape({-2, -3}); }, "reshape", {"negative size"});
}

TEST(TensorView, ViewOfTransposedIsRefusedReshapeCopies) {
  Tensor x = ar(6).reshape({2, 3});
  Tensor xt = x.transpose(0, 1);  // (3, 2), strides (1, 3)
  expect_error([&] { (void)xt.view({6}); }, "view", {"(3, 2)", "(6)", "reshape"});
  Tensor r = xt.reshape({6});
  EXPECT_FALSE(shares(r, x));
  EXPECT_EQ(vals(r), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  x.fill_(0);  // the copy does not see later writes
  EXPECT_EQ(vals(r), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(TensorView, ViewSplittingAContiguousChunkOfAStridedTensor) {
  // Columns 0 and 1 of a (4, 4): each row is a contiguous chunk of 2 elements.
  Tensor x = ar(16).reshape({4, 4}).narrow(1, 0, 2);  // (4, 2) strides (4, 1)
  Tensor v = x.view({2, 2, 2});                        // splits dim 0: allowed
  EXPECT_TRUE(shares(v, x));
  EXPECT_EQ(v.stride(), (Shape{8, 4, 1}));
  EXPECT_EQ(vals(v), (std::vector<double>{0, 1, 4, 5, 8, 9, 12, 13}));
  expect_error([&] { (void)x.view({8}); }, "view", {"(4, 2)"});  // merging rows is not
  EXPECT_EQ(vals(x.reshape({8})), (std::vector<double>{0, 1, 4, 5, 8, 9, 12, 13}));
  // every other column of a (4, 4) is evenly spaced: it merges into one dim of stride 2
  Tensor e = ar(16).reshape({4, 4}).slice(1, 0, 4, 2);
  Tensor ev = e.view({8});
  EXPECT_EQ(ev.stride(), Shape{2});
  EXPECT_EQ(vals(ev), (std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14}));
}

// ---- transpose / permute ----

TEST(TensorView, TransposeValuesAndStrides) {
  Tensor x = ar(24).reshape({2, 3, 4});
  Tensor y = x.transpose(0, 2);  // (4, 3, 2)
  EXPECT_EQ(y.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(y.stride(), (Shape{1, 4, 12}));
  EXPECT_TRUE(shares(x, y));
  std::vector<double> v = vals(y);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(v[i * 6 + j * 2 + k], k * 12 + j * 4 + i);
  EXPECT_EQ(x.transpose(-1, -2).shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(x.transpose(1, 1).stride(), x.stride());
  Tensor m = ar(6).reshape({2, 3});
  EXPECT_EQ(m.t().shape(), (Shape{3, 2}));
  EXPECT_EQ(vals(m.t()), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(vals(m.t().t()), iota(6));
}

TEST(TensorView, TransposeBadDimThrows) {
  Tensor x = ar(6).reshape({2, 3});
  expect_error([&] { (void)transpose(x, 0, 5); }, "transpose", {"dim 5", "2 dims"});
  expect_error([&] { (void)x.transpose(-3, 0); }, "transpose", {"dim -3"});
}

TEST(TensorView, PermuteValuesAndStrides) {
  Tensor x = ar(24).reshape({2, 3, 4});
  Tensor y = x.permute({2, 0, 1});  // y[i,j,k] = x[j,k,i]
  EXPECT_EQ(y.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(y.stride(), (Shape{1, 12, 4}));
  std::vector<double> v = vals(y);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(v[i * 6 + j * 3 + k], j * 12 + k * 4 + i);
  EXPECT_EQ(x.permute({-1, 1, 0}).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(x.permute({0, 1, 2}).stride(), x.stride());
}

TEST(TensorView, PermuteErrors) {
  Tensor x = ar(24).reshape({2, 3, 4});
  expect_error([&] { (void)x.permute({0, 0, 1}); }, "permute", {"(0, 0, 1)"});
  expect_error([&] { (void)x.permute({0, 1}); }, "permute", {"(0, 1)", "(2, 3, 4)"});
  expect_error([&] { (void)x.permute({0, 1, 3}); }, "permute", {"dim 3"});
}

// ---- unsqueeze / squeeze ----

TEST(TensorView, UnsqueezeSqueeze) {
  Tensor x = ar(6).reshape({2, 3});
  EXPECT_EQ(x.unsqueeze(0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(x.unsqueeze(1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(x.unsqueeze(2).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(-3).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(vals(x.unsqueeze(1)), iota(6));
  EXPECT_TRUE(shares(x, x.unsqueeze(0)));
  EXPECT_EQ(scalar_tensor(1).unsqueeze(0).shape(), Shape{1});
  Tensor y = ar(6).reshape({1, 2, 1, 3, 1});
  EXPECT_EQ(y.squeeze().shape(), (Shape{2, 3}));
  EXPECT_EQ(y.squeeze(0).shape(), (Shape{2, 1, 3, 1}));
  EXPECT_EQ(y.squeeze(-1).shape(), (Shape{1, 2, 1, 3}));
  EXPECT_EQ(y.squeeze(2).stride(), (Shape{6, 3, 1, 1}));
  EXPECT_EQ(vals(y.squeeze()), iota(6));
  EXPECT_EQ(ones({1, 1}).squeeze().shape(), Shape{});
  EXPECT_EQ(x.squeeze(0).shape(), (Shape{2, 3}));  // a dim of size 2 is left alone (PyTorch)
  expect_error([&] { (void)x.unsqueeze(3); }, "unsqueeze", {"dim 3"});
  expect_error([&] { (void)y.squeeze(5); }, "squeeze", {"dim 5"});
}

// ---- expand ----

TEST(TensorView, ExpandUsesStrideZero) {
  Tensor c = tensor(std::vector<double>{1, 2, 3}, {3, 1});
  Tensor e = c.expand({3, 4});
  EXPECT_EQ(e.shape(), (Shape{3, 4}));
  EXPECT_EQ(e.stride(), (Shape{1, 0}));
  EXPECT_TRUE(shares(c, e));
  EXPECT_EQ(vals(e), (std::vector<double>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  Tensor e3 = c.expand({2, 3, 2});  // a new leading dim
  EXPECT_EQ(e3.stride(), (Shape{0, 1, 0}));
  EXPECT_EQ(vals(e3), (std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(c.expand({-1, 2}).shape(), (Shape{3, 2}));
  EXPECT_EQ(c.expand({3, 1}).stride(), c.stride());
  EXPECT_EQ(c.expand({3, 0}).numel(), 0);
  EXPECT_EQ(vals(scalar_tensor(7, kFloat64).expand({2, 2})), (std::vector<double>{7, 7, 7, 7}));
}

TEST(TensorView, ExpandErrors) {
  Tensor c = zeros({3, 1});
  expect_error([&] { (void)c.expand({4, 4}); }, "expand", {"(3, 1)", "(4, 4)"});
  expect_error([&] { (void)c.expand({4}); }, "expand", {"(3, 1)", "(4)"});
}

// ---- narrow / slice / select ----

TEST(TensorView, Narrow) {
  Tensor x = ar(10);
  Tensor n = x.narrow(0, 2, 3);
  EXPECT_EQ(vals(n), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(n.storage_offset(), 2);
  EXPECT_TRUE(shares(x, n));
  Tensor m = ar(12).reshape({3, 4}).narrow(1, 1, 2);
  EXPECT_EQ(m.shape(), (Shape{3, 2}));
  EXPECT_EQ(m.stride(), (Shape{4, 1}));
  EXPECT_EQ(vals(m), (std::vector<double>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(x.narrow(0, 10, 0).numel(), 0);
  expect_error([&] { (void)x.narrow(0, 8, 3); }, "narrow", {"8", "3", "10"});
  expect_error([&] { (void)x.narrow(0, -20, 1); }, "narrow", {"-20"});
}

TEST(TensorView, SliceWithStep) {
  Tensor s = ar(10).slice(0, 1, 8, 3);
  EXPECT_EQ(vals(s), (std::vector<double>{1, 4, 7}));
  EXPECT_EQ(s.stride(), Shape{3});
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_EQ(vals(ar(10).slice(0, 0, 10, 4)), (std::vector<double>{0, 4, 8}));
  EXPECT_EQ(vals(ar(10).slice(0, -3, 10)), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(vals(ar(10).slice(0, 7, 100)), (std::vector<double>{7, 8, 9}));  // end clamps
  EXPECT_EQ(ar(10).slice(0, 6, 2).numel(), 0);
  Tensor m = ar(12).reshape({3, 4}).slice(1, 1, 4, 2);  // columns 1, 3
  EXPECT_EQ(m.shape(), (Shape{3, 2}));
  EXPECT_EQ(m.stride(), (Shape{4, 2}));
  EXPECT_EQ(vals(m), (std::vector<double>{1, 3, 5, 7, 9, 11}));
  // slice of a slice composes strides and offsets
  Tensor ss = ar(20).slice(0, 2, 20, 2).slice(0, 1, 9, 3);  // {2, 4, ..., 18}[1::3] = {4, 10, 16}
  EXPECT_EQ(vals(ss), (std::vector<double>{4, 10, 16}));
  EXPECT_EQ(ss.stride(), Shape{6});
  expect_error([] { (void)ar(10).slice(0, 0, 5, 0); }, "slice", {"step", "0"});
  expect_error([] { (void)ar(10).slice(1, 0, 5); }, "slice", {"dim 1"});
}

TEST(TensorView, Select) {
  Tensor x = ar(24).reshape({2, 3, 4});
  Tensor s = x.select(1, 2);  // x[:, 2, :]
  EXPECT_EQ(s.shape(), (Shape{2, 4}));
  EXPECT_EQ(s.stride(), (Shape{12, 1}));
  EXPECT_EQ(s.storage_offset(), 8);
  EXPECT_EQ(vals(s), (std::vector<double>{8, 9, 10, 11, 20, 21, 22, 23}));
  EXPECT_EQ(vals(x.select(2, -1)), (std::vector<double>{3, 7, 11, 15, 19, 23}));
  EXPECT_EQ(ar(3).select(0, 1).shape(), Shape{});
  EXPECT_EQ(ar(3).select(0, 1).item<double>(), 1.0);
  expect_error([&] { (void)x.select(0, 2); }, "select", {"index 2", "(2, 3, 4)"});
  expect_error([&] { (void)x.select(1, -4); }, "select", {"-4"});
  expect_error([&] { (void)x.select(3, 0); }, "select", {"dim 3"});
}

TEST(TensorView, WritesThroughViews) {
  Tensor x = zeros({3, 4}, kFloat64);
  x.select(0, 1).fill_(5);                                    // row 1
  x.t().select(0, 3).fill_(7);                                // column 3
  x.slice(1, 0, 4, 2).select(0, 2).copy_(tensor(std::vector<double>{-1, -2}));  // x[2, 0], x[2, 2]
  x.narrow(0, 0, 1).add_(1.0);                                // row 0 += 1
  EXPECT_EQ(vals(x), (std::vector<double>{1, 1, 1, 8,  //
                                          5, 5, 5, 7,  //
                                          -1, 0, -2, 7}));
  // copy_ from an expanded source into a strided destination
  Tensor y = zeros({2, 3}, kFloat64);
  y.t().copy_(tensor(std::vector<double>{1, 2}));  // y.t() is (3, 2): every row gets {1, 2}
  EXPECT_EQ(vals(y), (std::vector<double>{1, 1, 1, 2, 2, 2}));
}

// ---- flatten ----

TEST(TensorView, Flatten) {
  Tensor x = ar(24).reshape({2, 3, 4});
  EXPECT_EQ(x.flatten().shape(), Shape{24});
  EXPECT_EQ(x.flatten(1).shape(), (Shape{2, 12}));
  EXPECT_EQ(x.flatten(0, 1).shape(), (Shape{6, 4}));
  EXPECT_EQ(x.flatten(-2, -1).shape(), (Shape{2, 12}));
  EXPECT_EQ(x.flatten(1, 1).shape(), x.shape());
  EXPECT_TRUE(shares(x, x.flatten()));
  EXPECT_EQ(vals(x.flatten()), iota(24));
  Tensor t = x.transpose(0, 2).flatten();  // needs a copy
  std::vector<double> v = vals(t);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(v[i * 6 + j * 2 + k], k * 12 + j * 4 + i);
  EXPECT_EQ(scalar_tensor(3).flatten().shape(), Shape{1});
  expect_error([&] { (void)x.flatten(2, 1); }, "flatten", {"2", "1"});
}

// ---- zero-size dims ----

TEST(TensorView, ZeroSizeDims) {
  Tensor z = zeros({0, 3});
  EXPECT_EQ(z.reshape({3, 0}).shape(), (Shape{3, 0}));
  EXPECT_EQ(z.reshape({-1}).shape(), Shape{0});
  EXPECT_EQ(z.reshape({-1, 3}).shape(), (Shape{0, 3}));
  EXPECT_EQ(z.view({0}).shape(), Shape{0});
  EXPECT_EQ(z.transpose(0, 1).shape(), (Shape{3, 0}));
  EXPECT_EQ(z.t().contiguous().shape(), (Shape{3, 0}));
  EXPECT_EQ(z.unsqueeze(1).shape(), (Shape{0, 1, 3}));
  EXPECT_EQ(z.expand({2, 0, 3}).shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(z.slice(1, 0, 3, 2).shape(), (Shape{0, 2}));
  EXPECT_EQ(z.flatten().shape(), Shape{0});
  EXPECT_EQ(z.sum().item<float>(), 0.0f);
  Tensor s = z.sum({0});
  EXPECT_EQ(s.shape(), Shape{3});
  EXPECT_EQ(vals(s), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(z.t().sum({1}).shape(), Shape{3});
  EXPECT_EQ(z.sum({1}).shape(), Shape{0});
}

TEST(TensorView, ViewsOfViewsKeepOffsets) {
  Tensor x = ar(60).reshape({3, 4, 5});
  Tensor v = x.select(0, 2).narrow(1, 1, 3).t();  // (3, 4): v[i, j] = x[2, j, 1 + i]
  EXPECT_EQ(v.shape(), (Shape{3, 4}));
  std::vector<double> got = vals(v);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(got[i * 4 + j], 40 + j * 5 + 1 + i);
  Tensor w = v.reshape({12});  // not viewable: copy, same values
  EXPECT_EQ(vals(w), got);
  Tensor u = v.contiguous().view({2, 6});
  EXPECT_EQ(vals(u), got);
}

}  // namespace

namespace {
// The no-copy rule of view(): merged or split dims must be contiguous with
// each other. Strides of the result checked by hand.
TEST(TensorViewStrides, MergesAndSplitsOnlyContiguousBlocks) {
  using ember::Shape;
  Shape out;
  // (3, 2) transposed from (2, 3): strides (1, 3)
  EXPECT_FALSE(ember::view_strides({3, 2}, {1, 3}, {6}, out));
  ASSERT_TRUE(ember::view_strides({3, 2}, {1, 3}, {3, 1, 2}, out));
  EXPECT_EQ(out[0], 1);  // (a size-1 dim may have any stride)
  EXPECT_EQ(out[2], 3);
  // columns 0..2 of a (4, 6) matrix: rows are not adjacent
  EXPECT_FALSE(ember::view_strides({4, 3}, {6, 1}, {12}, out));
  ASSERT_TRUE(ember::view_strides({4, 3}, {6, 1}, {2, 2, 3}, out));
  EXPECT_EQ(out, (Shape{12, 6, 1}));
  // an expanded (stride 0) dim can be split but not merged with a real one
  EXPECT_FALSE(ember::view_strides({3, 4}, {0, 1}, {12}, out));
  ASSERT_TRUE(ember::view_strides({3, 4}, {0, 1}, {3, 2, 2}, out));
  EXPECT_EQ(out, (Shape{0, 2, 1}));
  // contiguous (2, 3, 4) -> (4, 6) and (24)
  ASSERT_TRUE(ember::view_strides({2, 3, 4}, {12, 4, 1}, {4, 6}, out));
  EXPECT_EQ(out, (Shape{6, 1}));
  ASSERT_TRUE(ember::view_strides({2, 3, 4}, {12, 4, 1}, {24}, out));
  EXPECT_EQ(out, (Shape{1}));
}
}  // namespace
