#include "nn/checkpoint.h"

namespace ember::nn {

Tensor checkpoint(UnaryModule& module, const Tensor& x) {
  UnaryModule* m = &module;
  return ember::checkpoint([m](const std::vector<Tensor>& in) { return m->forward(in[0]); }, {x});
}

}  // namespace ember::nn
