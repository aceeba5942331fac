// Bad input, class by class: each case is an ember::Error naming the op and
// the offending value, or a PyTorch-defined result, never a crash, undefined
// behaviour or a silent wrong answer; and a refused in-place op leaves its
// tensor as it was. (The sanitizer build runs these too.)
//   1. 0-d tensors and the one dim rule (shape.h: wrap_dim, wrap_dim_or_scalar)
//   3. shape, stride and offset arithmetic that would overflow int64
//   4. answers that were silently wrong: overlapping in-place writes, NaN
//   7. files that are not regular files
//   8. sizes too large for this machine, from a config or a flag
// (2, undefined tensors: api_test.cpp; 5 and 6, checkpoints and optimizer
// state: train_checkpoint_test.cpp and train_optim_test.cpp; 9, plots:
// plot_test.cpp; 10, threads: tensor_threads_test.cpp.)
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/io.h"
#include "ember.h"
#include "tensor/kernels.h"
#include "test_util.h"

namespace {

using namespace ember;
using test::expect_error;
using test::vals;

const double kNaN = std::nan("");

// ---- 1. 0-d tensors ----

TEST(Robust0d, OpsThatIndexADimRefuseA0dTensor) {
  const Tensor s = scalar_tensor(3.0, kFloat64);
  const Tensor ids = tensor(std::vector<int64_t>{0});
  const std::initializer_list<std::string> why = {"dim 0 given", "0-d tensor (shape ())", "no dims"};
  expect_error([&] { (void)s.size(0); }, "size", why);
  expect_error([&] { (void)s.size(-1); }, "size", {"dim -1 given", "no dims"});
  expect_error([&] { (void)select(s, 0, 0); }, "select", why);
  expect_error([&] { (void)narrow(s, 0, 0, 1); }, "narrow", why);
  expect_error([&] { (void)slice(s, 0, 0, 1); }, "slice", why);
  expect_error([&] { (void)index_select(s, 0, ids); }, "index_select", why);
  expect_error([&] { (void)gather(s, 0, scalar_tensor(0, kInt64)); }, "gather", why);
  Tensor target = scalar_tensor(1.0, kFloat64);
  expect_error([&] { index_add_(target, 0, ids, scalar_tensor(2.0, kFloat64)); }, "index_add_", why);
  EXPECT_EQ(target.item<double>(), 1.0) << "refused: unchanged";
  expect_error([&] { (void)cat({s, s}); }, "cat", {"zero-dimensional"});
}

// PyTorch's rule: a reduction (and softmax, transpose, squeeze, flatten)
// accepts dim 0 or -1 on a 0-d tensor and treats it as the one element.
TEST(Robust0d, ReductionsAlongDim0OfA0dTensorAreTheElement) {
  const Tensor s = scalar_tensor(-3.0, kFloat64);
  EXPECT_EQ(sum(s, {0}).shape(), Shape{});
  EXPECT_EQ(sum(s, {0}).item<double>(), -3.0);
  EXPECT_EQ(sum(s, {-1}, /*keepdim=*/true).item<double>(), -3.0);
  EXPECT_EQ(mean(s, {0}).item<double>(), -3.0);
  EXPECT_EQ(var(s, {0}, /*correction=*/0).item<double>(), 0.0);
  EXPECT_EQ(norm(s, 2.0, {0}).item<double>(), 3.0);
  EXPECT_EQ(max(s, 0).first.item<double>(), -3.0);
  EXPECT_EQ(max(s, 0).second.item<int64_t>(), 0);
  EXPECT_EQ(argmax(s, -1).item<int64_t>(), 0);
  EXPECT_EQ(softmax(s, 0).item<double>(), 1.0);
  EXPECT_EQ(log_softmax(s, -1).item<double>(), 0.0);
  EXPECT_EQ(transpose(s, 0, -1).shape(), Shape{});
  EXPECT_EQ(squeeze(s, 0).shape(), Shape{});
  EXPECT_EQ(flatten(s).shape(), Shape{1});
  // ... and any other dim is out of range
  expect_error([&] { (void)sum(s, {1}); }, "sum", {"dim 1", "0-d tensor", "expected 0 or -1"});
  expect_error([&] { (void)sum(s, {0, -1}); }, "sum", {"appears twice"});
  expect_error([&] { (void)softmax(s, 2); }, "softmax", {"dim 2"});
  expect_error([&] { (void)max(s, -2); }, "max", {"dim -2"});
  expect_error([&] { (void)transpose(s, 0, 1); }, "transpose", {"dim 1"});
  expect_error([&] { (void)flatten(s, 1); }, "flatten", {"dim 1"});
}

TEST(Robust0d, GradientsFlowThroughA0dReduction) {
  Tensor s = scalar_tensor(2.0, kFloat64).requires_grad_();
  (mean(s, {0}) * 3.0).backward();
  EXPECT_EQ(s.grad().shape(), Shape{});
  EXPECT_EQ(s.grad().item<double>(), 3.0);
}

// ---- 3. overflow in shape, stride and offset arithmetic ----

TEST(RobustOverflow, ShapesWhoseElementCountOverflowsAreRefused) {
  expect_error([] { (void)expand(ones({1, 1}), {INT64_MAX, 4}); }, "expand", {"more elements than int64"});
  expect_error([] { (void)expand(ones({1, 1, 1}), {1LL << 32, 1LL << 32, 4}); }, "expand",
               {"(4294967296, 4294967296, 4)"});
  const Tensor half = expand(ones({1}), {INT64_MAX / 2 + 1});  // fine on its own: stride 0
  EXPECT_EQ(half.numel(), INT64_MAX / 2 + 1);
  expect_error([&] { (void)cat({half, half}); }, "cat", {"overflows int64", "4611686018427387904"});
  expect_error([] { (void)one_hot(tensor(std::vector<int64_t>{1}), INT64_MAX); }, "one_hot",
               {"9223372036854775807"});
  // The class count inferred from the largest id: INT64_MAX + 1 does not
  // exist (a wrapped sum would make the error speak of [0, -9223372036854775808)).
  expect_error([] { (void)one_hot(tensor(std::vector<int64_t>{0, INT64_MAX})); }, "one_hot",
               {"the class count (the largest id + 1) overflows int64", "9223372036854775807 + 1"});
  expect_error([] { (void)one_hot(tensor(std::vector<int64_t>{0, INT64_MAX - 1})); }, "one_hot",
               {"(2, 9223372036854775807)", "more elements than int64"});
  expect_error([] { (void)one_hot(tensor(std::vector<int64_t>{-3, -1})); }, "one_hot",
               {"the largest id is -1", "[0, num_classes)"});
  expect_error([] { (void)one_hot(tensor(std::vector<int64_t>{1}), -2); }, "one_hot", {"-1 to infer", "got -2"});
  expect_error([] { (void)one_hot(tensor(std::vector<int64_t>{1}), INT64_MIN); }, "one_hot",
               {"got -9223372036854775808"});
  expect_error([] { (void)zeros({INT64_MAX / 2}); }, "zeros", {"more bytes than fit in int64"});
  expect_error([] { (void)full({3, -1}, 0.0); }, "full", {"negative size -1"});
  // A zero-size tensor may have huge other dims: nothing is allocated or addressed.
  Tensor z = zeros({0, INT64_MAX, INT64_MAX});
  EXPECT_EQ(z.numel(), 0);
  EXPECT_EQ(sum(z, {1}).shape(), (Shape{0, INT64_MAX}));
}

TEST(RobustOverflow, SliceAndNarrowWithExtremeArgumentsAreRightOrRefused) {
  const Tensor x = arange(5, kFloat64);
  // start, end clamp like Python; a huge step takes the first element only
  EXPECT_EQ(vals(slice(x, 0, 0, 5, INT64_MAX)), (std::vector<double>{0}));
  EXPECT_EQ(vals(slice(x, 0, 1, INT64_MAX, INT64_MAX / 2)), (std::vector<double>{1}));
  EXPECT_EQ(vals(slice(x, 0, INT64_MIN, INT64_MAX)), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(vals(slice(x, 0, 1, 5, 3)), (std::vector<double>{1, 4}));
  EXPECT_EQ(slice(x, 0, 4, 2).numel(), 0);
  expect_error([&] { (void)narrow(x, 0, 1, INT64_MAX); }, "narrow", {"length 9223372036854775807", "size 5"});
  expect_error([&] { (void)narrow(x, 0, INT64_MAX, 1); }, "narrow", {"start 9223372036854775807"});
  expect_error([&] { (void)narrow(x, 0, INT64_MIN, 1); }, "narrow", {"start -9223372036854775808"});
  expect_error([&] { (void)select(x, 0, INT64_MIN); }, "select", {"index -9223372036854775808"});
  expect_error([&] { (void)transpose(ones({2, 2}), INT64_MIN, 0); }, "transpose", {"dim -9223372036854775808"});
}

TEST(RobustOverflow, EveryViewStaysInsideItsStorage) {
  const Tensor x = arange(4, kFloat64);
  EXPECT_EQ(vals(kernel::as_strided(x, {2, 2}, {1, 2}, 0)), (std::vector<double>{0, 2, 1, 3}));
  expect_error([&] { (void)kernel::as_strided(x, {5}, {1}, 0); }, "as_strided", {"outside its storage of 4"});
  expect_error([&] { (void)kernel::as_strided(x, {2}, {1}, 3); }, "as_strided", {"offset 3"});
  expect_error([&] { (void)kernel::as_strided(x, {2}, {INT64_MAX}, 0); }, "as_strided", {"outside"});
  expect_error([&] { (void)kernel::as_strided(x, {2}, {-1}, 1); }, "as_strided", {"strides (-1)"});
}

TEST(RobustOverflow, ArangeChecksItsLengthAndStep) {
  expect_error([] { (void)arange(0, 1e30, 1); }, "arange", {"1e+30 elements", "too many"});
  expect_error([] { (void)arange(0, 5, kNaN); }, "arange", {"step", "nan"});
  expect_error([] { (void)arange(0, 5, 0); }, "arange", {"step", "non-zero"});
  expect_error([] { (void)arange(0, INFINITY); }, "arange", {"inf", "finite"});
  expect_error([] { (void)arange(0, 1e19, 5e17, kInt64); }, "arange", {"9.5e+18", "int64"});
  EXPECT_EQ(arange(0, 9e18, 1e18, kInt64).to_vector<int64_t>().back(), 8000000000000000000);
}

TEST(RobustOverflow, AnAllocationTheMachineCannotMakeIsAnError) {
  // 2^62 bytes: past any address space, so the allocator must say no.
  expect_error([] { (void)zeros({int64_t{1} << 60}); }, "zeros", {"out of memory", "(1152921504606846976)"});
}

// ---- 4. silently wrong answers ----

TEST(RobustInPlace, IndexAddIntoOverlappingMemoryIsRefused) {
  const Tensor ids = tensor(std::vector<int64_t>{0, 1, 2});
  Tensor base = zeros({1, 2}, kFloat64);
  Tensor expanded = expand(base, {3, 2});  // three rows, one memory row
  expect_error([&] { index_add_(expanded, 0, ids, ones({3, 2}, kFloat64)); }, "index_add_",
               {"strides (0, 1)", "one memory location"});
  EXPECT_EQ(vals(base), (std::vector<double>{0, 0})) << "refused: nothing written";
  Tensor x = arange(3, kFloat64);
  expect_error([&] { index_add_(x, 0, tensor(std::vector<int64_t>{0, 1}), narrow(x, 0, 1, 2)); }, "index_add_",
               {"source", "shares memory"});
  EXPECT_EQ(vals(x), (std::vector<double>{0, 1, 2}));
  // repeated ids into distinct memory are fine: they accumulate
  Tensor y = zeros({3}, kFloat64);
  index_add_(y, 0, tensor(std::vector<int64_t>{0, 0, 2}), tensor({1.0, 2.0, 5.0}, kFloat64));
  EXPECT_EQ(vals(y), (std::vector<double>{3, 0, 5}));
}

TEST(RobustInPlace, CopyBetweenPartlyOverlappingViewsIsRefused) {
  Tensor x = arange(5, kFloat64);
  expect_error([&] { narrow(x, 0, 1, 4).copy_(narrow(x, 0, 0, 4)); }, "copy_", {"shares memory"});
  EXPECT_EQ(vals(x), (std::vector<double>{0, 1, 2, 3, 4}));
  x.copy_(x);  // the very same elements: fine
  Tensor windows = kernel::as_strided(x, {2, 3}, {1, 1}, 0);  // rows overlap
  expect_error([&] { windows.fill_(1.0); }, "fill_", {"one memory location"});
  expect_error([&] { windows.add_(1.0); }, "add_", {"one memory location"});
  EXPECT_EQ(vals(x), (std::vector<double>{0, 1, 2, 3, 4}));
}

TEST(RobustNaN, NaNComesThroughEveryElementwiseOpAndReduction) {
  const Tensor x = tensor({kNaN, -1.0, 2.0}, kFloat64);
  auto is_nan_first = [](const Tensor& t) { return std::isnan(vals(t)[0]); };
  EXPECT_TRUE(is_nan_first(relu(x)));
  EXPECT_EQ(vals(relu(x))[1], 0.0);
  EXPECT_TRUE(is_nan_first(clamp(x, 0.0, 1.0)));
  EXPECT_TRUE(is_nan_first(maximum(x, zeros({3}, kFloat64))));
  EXPECT_TRUE(is_nan_first(minimum(zeros({3}, kFloat64), x)));
  EXPECT_TRUE(is_nan_first(where(tensor(std::vector<bool>{true, true, true}), x, zeros({3}, kFloat64))));
  EXPECT_TRUE(is_nan_first(abs(x)));
  EXPECT_TRUE(is_nan_first(gelu(x)));
  EXPECT_TRUE(is_nan_first(sigmoid(x)));
  EXPECT_TRUE(std::isnan(max(x).item<double>()));
  EXPECT_TRUE(std::isnan(min(x).item<double>()));
  EXPECT_EQ(argmax(x).item<int64_t>(), 0);
  EXPECT_TRUE(std::isnan(norm(x, INFINITY).item<double>()));
  EXPECT_TRUE(std::isnan(norm(x).item<double>()));
}

TEST(RobustNaN, InfinityNormIsTheLargestMagnitude) {
  const Tensor x = tensor({1.0, -4.0, 3.0, 2.0, -0.5, 0.0}, {2, 3}, kFloat64);
  EXPECT_EQ(norm(x, INFINITY).item<double>(), 4.0);
  EXPECT_EQ(vals(norm(x, INFINITY, {1})), (std::vector<double>{4.0, 2.0}));
  Tensor w = x.clone().requires_grad_();
  norm(w, INFINITY).backward();
  EXPECT_EQ(vals(w.grad()), (std::vector<double>{0, -1, 0, 0, 0, 0}));  // sign(x) at the max
}

TEST(RobustNaN, ClampWithBoundsBeyondAnIntegerRange) {
  const Tensor i = tensor({-5, 0, 7}, kInt64);
  EXPECT_EQ(clamp(i, -1e30, 1e30).to_vector<int64_t>(), (std::vector<int64_t>{-5, 0, 7}));
  EXPECT_EQ(clamp(i, 1.0, std::nullopt).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 7}));
  expect_error([&] { (void)clamp(i, kNaN, 1.0); }, "clamp", {"NaN bound", "integer"});
}

// ---- 7. files that are not regular files ----

class RobustFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ember_robust_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(RobustFiles, LoadersRefuseDirectoriesFifosAndDevicesWithoutReading) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A FIFO with no writer would block a plain open forever; /dev/zero would
  // be read until memory runs out.
  expect_error([&] { (void)train::read_safetensors(dir_.string()); }, "load", {dir_.string(), "not a regular file", "directory"});
  expect_error([&] { (void)train::read_safetensors(fifo); }, "load", {fifo, "not a regular file", "FIFO"});
  expect_error([] { (void)train::read_safetensors("/dev/zero"); }, "load", {"/dev/zero", "device"});
  expect_error([&] { (void)train::read_text_file(fifo); }, "read_text_file", {fifo, "FIFO"});
  expect_error([] { (void)train::read_text_file("/dev/zero"); }, "read_text_file", {"/dev/zero", "device"});
  expect_error([&] { (void)train::read_text_file((dir_ / "missing.txt").string()); }, "read_text_file",
               {"missing.txt", "cannot open"});
}

TEST_F(RobustFiles, AHeaderLengthBeyondTheFileIsCheckedBeforeReadingIt) {
  const std::string path = (dir_ / "short.safetensors").string();
  std::ofstream(path, std::ios::binary) << std::string("\xff\xff\xff\x00\x00\x00\x00\x00{}", 10);
  expect_error([&] { (void)train::read_safetensors(path); }, "load", {"header length 16777215", "larger than the rest"});
  std::ofstream(path, std::ios::binary | std::ios::trunc) << std::string("\x02\x00", 2);
  expect_error([&] { (void)train::read_safetensors(path); }, "load", {"2 bytes", "8-byte header length"});
}

// ---- 8. sizes too large for this machine ----

TEST(RobustSizes, AModelThatCannotFitIsRefusedBeforeAnyAllocation) {
  nn::GPTConfig c;
  c.dim = 1000000000000;  // 1e12
  c.heads = 1;
  expect_error([&] { nn::GPT m(c); }, "GPTConfig", {"dim 1000000000000", "parameter"});
  expect_error([] { (void)nn::GPTConfig::from_string("vocab_size=65 dim=1000000000000 heads=1"); }, "GPTConfig",
               {"dim 1000000000000"});
  c.dim = 64;
  c.vocab_size = INT64_MAX / 8;
  expect_error([&] { nn::GPT m(c); }, "GPTConfig", {"vocab_size 1152921504606846975"});
  c.vocab_size = 65;
  c.heads = 3;
  expect_error([&] { nn::GPT m(c); }, "GPTConfig", {"heads 3", "divide dim 64"});
  c.heads = 4;
  c.dropout = 1.0;
  expect_error([&] { nn::GPT m(c); }, "GPTConfig", {"dropout", "[0, 1)"});
}

TEST(RobustSizes, ParameterCountIsExact) {
  for (bool tied : {true, false})
    for (auto pos : {nn::Positional::Learned, nn::Positional::Sinusoidal}) {
      nn::GPTConfig c;
      c.vocab_size = 11;
      c.context_length = 8;
      c.dim = 16;
      c.heads = 2;
      c.layers = 2;
      c.tie_weights = tied;
      c.positional = pos;
      EXPECT_EQ(c.parameter_count(), nn::GPT(c).num_parameters()) << c.to_string();
    }
}

TEST(RobustSizes, ATrainingRunThatCannotFitIsRefused) {
  nn::GPTConfig c;
  c.vocab_size = 4;
  c.context_length = 8;
  c.dim = 8;
  c.heads = 2;
  c.layers = 1;
  nn::GPT m(c);
  train::TrainOptions o;
  o.batch = int64_t{1} << 40;
  std::vector<int64_t> tokens(200);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int64_t>(i % 4);
  expect_error([&] { train::Trainer t(m, tokens, o); }, "Trainer", {"batch 1099511627776", "GB"});
}

}  // namespace
