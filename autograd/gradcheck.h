/// @file
/// gradcheck: compares the gradients that backward() computes with numerical
/// derivatives (central differences), element by element.
///
/// For every floating input that requires grad, the full Jacobian d out / d in
/// is built twice: numerically, J[i][j] = (f(x + eps e_j) - f(x - eps e_j))_i / 2eps,
/// and analytically, one backward() per output element i with a one-hot
/// grad_output. They must agree within atol + rtol * |numeric|.
/// Inputs must be float64 (float32 central differences are too noisy).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

struct GradcheckOptions {
  double eps = 1e-6;  // PyTorch's defaults
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_err = 0;   // over all Jacobian entries
  double max_rel_err = 0;
  /// The largest error as a fraction of what its entry was allowed,
  /// |analytic - numeric| / (atol + rtol |numeric|): <= 1 passes. This is the
  /// number that decides; a large relative error on a tiny entry can pass on atol.
  double max_err_over_tol = 0;
  int64_t checked = 0;      // Jacobian entries compared
  std::string report;       // on failure: input, element, analytic, numeric
  explicit operator bool() const { return ok; }
};

using GradFn = std::function<Tensor(const std::vector<Tensor>&)>;

/// Throws ember::Error for unusable inputs (float32 requiring grad, overlapping
/// memory such as expand views, a non-floating output).
GradcheckResult gradcheck(const GradFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

/// Second derivatives, checked the same way: with v a random float64 tensor
/// of fn's output shape (from `seed`), the function
///   (inputs, v) -> grad(<fn(inputs), v>, inputs, create_graph=true)
/// (every input's gradient, flattened and joined) is gradchecked against its
/// own central differences, both in the inputs (the Hessian times v) and in
/// v. It needs every backward rule on the way to be differentiable; one that
/// is not throws the error naming it.
GradcheckResult gradgradcheck(const GradFn& fn, const std::vector<Tensor>& inputs,
                              const GradcheckOptions& options = {}, uint64_t seed = 0);

/// Forward mode, checked the same way: for every floating input that
/// requires grad and every element j, the JVP with tangent e_j (one forward
/// pass carrying it, autograd/forward.h) is the Jacobian's column j, and it
/// must match the central differences within atol + rtol |numeric|. Then the
/// two modes are checked against each other: with u and v random (from
/// `seed`), <u, J v> by the forward rules and <uᵀ J, v> by the backward rules
/// must agree to float64 round-off (1e-10 relative to the sum of the
/// absolute values of the products, the scale of its rounding).
GradcheckResult forward_gradcheck(const GradFn& fn, const std::vector<Tensor>& inputs,
                                  const GradcheckOptions& options = {}, uint64_t seed = 0);

}  // namespace ember

// In GoogleTest: EXPECT_GRADCHECK(fn, inputs) prints the report on failure.
#define EXPECT_GRADCHECK(fn, ...)                            \
  do {                                                       \
    ::ember::GradcheckResult r_ = ::ember::gradcheck(fn, __VA_ARGS__); \
    EXPECT_TRUE(r_.ok) << r_.report;                         \
  } while (0)
