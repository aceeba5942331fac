/// @file
/// Factories: every way to make a new tensor. Random ones take a Generator
/// (the default global one when omitted) and fill in row-major order, so a
/// seed fully determines the values.
#pragma once

#include <initializer_list>
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember {

/// From values: a 1-D tensor of them, or exactly `shape` (whose element count
/// must match; {} is a 0-d tensor of one value). The dtype is the values'.
Tensor tensor(const std::vector<float>& values);
Tensor tensor(const std::vector<double>& values);
Tensor tensor(const std::vector<int64_t>& values);
Tensor tensor(const std::vector<bool>& values);
Tensor tensor(const std::vector<float>& values, const Shape& shape);
Tensor tensor(const std::vector<double>& values, const Shape& shape);
Tensor tensor(const std::vector<int64_t>& values, const Shape& shape);
Tensor tensor(const std::vector<bool>& values, const Shape& shape);
/// From a list of numbers, as PyTorch's torch.tensor([...], dtype=...):
/// float32 unless told otherwise (any floating or integer dtype).
///   tensor({0.2, -0.1})   tensor({1, 2, 3, 4}, {2, 2}, kFloat64)
Tensor tensor(std::initializer_list<double> values, DType dtype = kFloat32);
Tensor tensor(std::initializer_list<double> values, const Shape& shape, DType dtype = kFloat32);
Tensor scalar_tensor(double value, DType dtype = kFloat32);  // 0-d

Tensor zeros(const Shape& shape, DType dtype = kFloat32);
Tensor ones(const Shape& shape, DType dtype = kFloat32);
Tensor full(const Shape& shape, double value, DType dtype = kFloat32);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
/// [start, end) with step; float32 unless told otherwise.
Tensor arange(double end, DType dtype = kFloat32);
Tensor arange(double start, double end, double step = 1.0, DType dtype = kFloat32);
Tensor eye(int64_t n, int64_t m = -1, DType dtype = kFloat32);

Tensor rand(const Shape& shape, Generator& gen, DType dtype = kFloat32);   // U[0, 1)
Tensor randn(const Shape& shape, Generator& gen, DType dtype = kFloat32);  // N(0, 1)
Tensor uniform(const Shape& shape, double lo, double hi, Generator& gen, DType dtype = kFloat32);
Tensor normal(const Shape& shape, double mean, double std, Generator& gen, DType dtype = kFloat32);
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen);  // int64 in [low, high)
/// The same with the default generator.
Tensor rand(const Shape& shape, DType dtype = kFloat32);
Tensor randn(const Shape& shape, DType dtype = kFloat32);
Tensor uniform(const Shape& shape, double lo, double hi, DType dtype = kFloat32);
Tensor normal(const Shape& shape, double mean, double std, DType dtype = kFloat32);
Tensor randint(int64_t low, int64_t high, const Shape& shape);

/// In-place random fills (used by nn::init); bump the version.
void uniform_(const Tensor& t, double lo, double hi, Generator& gen);
void normal_(const Tensor& t, double mean, double std, Generator& gen);

}  // namespace ember
