// What the compile/ tests share: bit-for-bit equality of two tensors, and a
// registry entry's name as a GoogleTest name.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cctype>
#include <string>

#include "compile/graph.h"
#include "registry.h"

namespace ember::samples {
void PrintTo(const OpInfo& op, std::ostream* os);  // its name (tests/autograd_registry_test.cpp)
}  // namespace ember::samples

namespace ember::compile_checks {

// Equal shapes, dtypes and bits (a NaN equals a NaN with the same bits; -0 is not 0).
inline ::testing::AssertionResult same_bits(const Tensor& a, const Tensor& b) {
  using compiler::type_str;
  using compiler::Value;
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    return ::testing::AssertionFailure() << type_str(Value{a.shape(), a.dtype()}) << " vs "
                                         << type_str(Value{b.shape(), b.dtype()});
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (std::bit_cast<uint64_t>(x[i]) != std::bit_cast<uint64_t>(y[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << x[i] << " vs " << y[i];
  return ::testing::AssertionSuccess();
}

inline std::string test_name(const ::testing::TestParamInfo<samples::OpInfo>& info) {
  std::string n;
  for (char c : info.param.name) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

}  // namespace ember::compile_checks
