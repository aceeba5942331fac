// Exercise 4.4: A sparse table's gradient as rows (chapter 4, docs/book/04_embeddings.md)
// A reference solution.
#include <unordered_map>
#include <vector>

#include "exercises/exercise.h"

using namespace ember;

namespace ex4_4 {

RowGrad rows_of(const Tensor& ids, const Tensor& grad_out, std::optional<int64_t> padding_idx) {
  const std::vector<int64_t> id = ids.to_vector<int64_t>();
  const std::vector<double> g = grad_out.to_vector<double>();
  const int64_t D = grad_out.size(1);
  std::unordered_map<int64_t, size_t> slot;  // id -> its place in `distinct`
  std::vector<int64_t> distinct;
  std::vector<double> sums;
  for (size_t i = 0; i < id.size(); ++i) {
    if (padding_idx && id[i] == *padding_idx) continue;  // the padding row gets no gradient
    auto [it, is_new] = slot.try_emplace(id[i], distinct.size());
    if (is_new) {
      distinct.push_back(id[i]);
      sums.resize(sums.size() + static_cast<size_t>(D), 0.0);
    }
    for (int64_t k = 0; k < D; ++k) sums[it->second * D + k] += g[i * D + k];
  }
  return {tensor(distinct), tensor(sums, {static_cast<int64_t>(distinct.size()), D})};
}

void sgd_rows(Tensor& table, const RowGrad& rows, double lr) {
  const std::vector<int64_t> id = rows.ids.to_vector<int64_t>();
  const Tensor g = rows.rows.contiguous();
  const int64_t D = table.size(1);
  double* w = table.data_ptr<double>();
  const double* r = g.data_ptr<double>();
  for (size_t i = 0; i < id.size(); ++i)
    for (int64_t k = 0; k < D; ++k) w[id[i] * D + k] -= lr * r[i * D + k];
}

}  // namespace ex4_4
