// What the vmap tests compare against: the loop vmap replaces. f run once
// per sample (index b of each mapped input along its in_dim), each output
// stacked along its out_dim.
#pragma once

#include <optional>
#include <vector>

#include "autograd/ops.h"
#include "tensor/factory.h"
#include "vmap/vmap.h"

namespace ember::vmap_checks {

inline std::vector<Tensor> loop_over_batch(const BatchFn& f, const std::vector<Tensor>& inputs,
                                           const std::vector<std::optional<int64_t>>& in_dims,
                                           const std::vector<int64_t>& out_dims = {}) {
  int64_t size = -1;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (in_dims[i]) size = inputs[i].size(*in_dims[i]);
  std::vector<std::vector<Tensor>> columns;
  for (int64_t b = 0; b < size; ++b) {
    std::vector<Tensor> in = inputs;
    for (size_t i = 0; i < in.size(); ++i)
      if (in_dims[i]) in[i] = in[i].select(*in_dims[i], b);
    std::vector<Tensor> out = f(in);
    columns.resize(out.size());
    for (size_t k = 0; k < out.size(); ++k) columns[k].push_back(out[k]);
  }
  std::vector<Tensor> result;
  for (size_t k = 0; k < columns.size(); ++k) result.push_back(stack(columns[k], out_dims.empty() ? 0 : out_dims[k]));
  return result;
}

}  // namespace ember::vmap_checks
