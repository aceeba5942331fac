/// @file
/// gradcheck for a whole module: the analytic gradients of forward() with
/// respect to every parameter of the module (and every input that requires
/// grad) against central differences, as autograd/gradcheck.h does for an op.
///
///   nn::Linear fc(3, 2);
///   fc.to(kFloat64);                                    // gradcheck needs float64
///   Tensor x = randn({4, 3}, kFloat64).requires_grad_();
///   auto r = nn::gradcheck(fc, [&](const std::vector<Tensor>& in) { return fc.forward(in[0]); }, {x});
///   // r.ok, r.report
#pragma once

#include <functional>
#include <vector>

#include "autograd/gradcheck.h"
#include "nn/module.h"

namespace ember::nn {

/// forward receives `inputs` and must read the module's own parameters; the
/// parameters are perturbed in place while the check runs (and restored).
/// Error if a parameter is not float64.
GradcheckResult gradcheck(const Module& module, const std::function<Tensor(const std::vector<Tensor>&)>& forward,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace ember::nn
