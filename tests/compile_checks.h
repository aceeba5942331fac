// What the compile/ and vmap/ tests share: bit-for-bit equality of two
// tensors, a registry entry's name as a GoogleTest name, an environment
// variable set for a scope, and an entry's gradients as a function.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>

#include "autograd/engine.h"
#include "compile/graph.h"
#include "registry.h"
#include "tensor/factory.h"

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

// An environment variable set for a scope, and put back as it was.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(const char* n, const std::string& value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    ::setenv(n, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

// fn(inputs..., seed) = the gradients of <op(inputs), seed> for the n inputs
// that require grad; one the op does not reach gets a (1) placeholder of
// zeros, which both sides of a comparison share.
inline std::function<std::vector<Tensor>(const std::vector<Tensor>&)> gradients_of(const samples::OpInfo& op,
                                                                                 size_t n) {
  return [&op, n](const std::vector<Tensor>& in) {
    const std::vector<Tensor> xs(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<Tensor> wrt;
    for (const Tensor& x : xs)
      if (x.requires_grad()) wrt.push_back(x);
    std::vector<Tensor> gs = grad({op.fn(xs)}, wrt, {in[n]}, {.allow_unused = true});
    for (Tensor& gi : gs)
      if (!gi.defined()) gi = zeros({1});
    return gs;
  };
}

inline std::string test_name(const ::testing::TestParamInfo<samples::OpInfo>& info) {
  std::string n;
  for (char c : info.param.name) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

}  // namespace ember::compile_checks
