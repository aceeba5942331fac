#include "nn/gradcheck.h"

namespace ember::nn {

GradcheckResult gradcheck(const Module& module, const std::function<Tensor(const std::vector<Tensor>&)>& forward,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  std::vector<Tensor> all = inputs;
  for (const auto& [name, p] : module.named_parameters()) {
    EMBER_CHECK(p.dtype() == kFloat64, "gradcheck",
                module.type_name() << " parameter \"" << name << "\" is " << dtype_name(p.dtype())
                                   << "; call module.to(kFloat64) first");
    all.push_back(p);
  }
  const size_t n = inputs.size();
  // The parameters ride along as extra inputs: perturbing them is perturbing the module.
  return ember::gradcheck(
      [&](const std::vector<Tensor>& in) { return forward(std::vector<Tensor>(in.begin(), in.begin() + n)); }, all,
      options);
}

}  // namespace ember::nn
