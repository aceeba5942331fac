/// @file
/// functional_call: evaluate a module with given parameters, so that the
/// function transforms (autograd/functional.h) can differentiate a model
/// with respect to its weights as a function of them, as torch.func does:
///
///   nn::Linear fc(3, 2);
///   TensorFn loss_of_weight = [&](const std::vector<Tensor>& w) {
///     return nn::functional_call(fc, {{"weight", w[0]}}, [&] { return sum(fc.forward(x)); });
///   };
///   Tensor H = hessian(loss_of_weight)({fc.weight});
///
/// While fn runs, each named parameter holds the given tensor's values and
/// its place in the graph (a gradient or a tangent flows to that tensor, not
/// into the parameter), and afterwards holds its own again, also when fn
/// throws. Names are checked before anything changes.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace ember::nn {

/// Errors (nothing changed): a name the module does not have, a shape or
/// dtype that differs from the parameter's, a name given twice.
Tensor functional_call(Module& module, const std::vector<std::pair<std::string, Tensor>>& parameters,
                       const std::function<Tensor()>& fn);

}  // namespace ember::nn
