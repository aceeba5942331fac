#include "autograd/batching.h"

#include <algorithm>
#include <map>

#include "autograd/ops.h"
#include "base/error.h"

namespace ember::batching {

namespace {
std::map<std::string, Rule> make_table() {
  detail::Rules r;
  detail::add_unary_batching_rules(r);
  detail::add_binary_batching_rules(r);
  detail::add_select_batching_rules(r);
  detail::add_reduce_batching_rules(r);
  detail::add_view_batching_rules(r);
  detail::add_join_batching_rules(r);
  detail::add_matmul_batching_rules(r);
  detail::add_index_batching_rules(r);
  detail::add_layer_norm_batching_rules(r);
  detail::add_cross_entropy_batching_rules(r);
  detail::add_attention_batching_rules(r);
  std::map<std::string, Rule> table;
  for (const auto& [op, rule] : r.entries)
    EMBER_CHECK(table.emplace(op, rule).second, "vmap", "two batching rules for op " << op);
  return table;
}
const std::map<std::string, Rule>& table() {
  static const std::map<std::string, Rule> t = make_table();
  return t;
}
}  // namespace

Rule find_rule(const std::string& op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> ops_with_rules() {
  std::vector<std::string> names;
  for (const auto& entry : table()) names.push_back(entry.first);
  return names;
}

Result batched(std::vector<Tensor> values) {
  Result r;
  r.batched.assign(values.size(), true);
  r.values = std::move(values);
  return r;
}

Tensor pad(const Tensor& x, bool is_batched, int64_t rank) {
  if (!is_batched || x.dim() - 1 >= rank) return x;
  Shape s = x.shape();
  s.insert(s.begin() + 1, static_cast<size_t>(rank - (x.dim() - 1)), 1);
  return x.reshape(s);
}

Tensor with_batch(const Tensor& x, bool is_batched, int64_t size) {
  if (is_batched) return x;
  return x.unsqueeze(0).expand(with_batch(x.shape(), size));
}

int64_t shift(int64_t d, int64_t rank) { return (d < 0 ? d + rank : d) + 1; }

Shape shift_all(const Shape& dims, int64_t rank) {
  Shape out;
  if (dims.empty())
    for (int64_t d = 1; d <= rank; ++d) out.push_back(d);
  for (int64_t d : dims) out.push_back(shift(d, rank));
  return out;
}

Shape with_batch(const Shape& shape, int64_t size) {
  Shape s{size};
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

Tensor movedim(const Tensor& x, int64_t from, int64_t to) {
  if (from == to) return x;
  Shape order;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != from) order.push_back(d);
  order.insert(order.begin() + to, from);
  return permute(x, order);
}

Result same(const Call& c) { return batched(c.run(c.args)); }

Result broadcast(const Call& c) {
  int64_t rank = 0;
  for (size_t i = 0; i < c.args.size(); ++i)
    if (std::holds_alternative<Tensor>(c.args[i])) rank = std::max(rank, c.rank(i));
  std::vector<OpArg> args = c.args;
  for (size_t i = 0; i < args.size(); ++i)
    if (c.batched[i]) args[i] = pad(c.tensor(i), true, rank);
  return batched(c.run(args));
}

Result shifted_dim(const Call& c) {
  if (c.args.size() < 2 || !std::holds_alternative<int64_t>(c.args[1])) return {};  // max(x): no dim
  if (c.rank(0) == 0) return of_one_element(c, 1);  // softmax(x, 0) of a 0-d x: dim 0 is the one element
  std::vector<OpArg> args = c.args;
  args[1] = shift(std::get<int64_t>(c.args[1]), c.rank(0));
  return batched(c.run(args));
}

Result of_one_element(const Call& c, size_t dims_at) {
  std::vector<OpArg> args = c.args;
  args[0] = c.tensor(0).unsqueeze(1);  // (B) -> (B, 1): each sample a row of one element
  if (std::holds_alternative<Shape>(args[dims_at])) args[dims_at] = Shape{1};
  else args[dims_at] = int64_t{1};
  std::vector<Tensor> out = c.run(args);
  for (size_t k = 0; k < out.size(); ++k) out[k] = out[k].reshape(with_batch(c.sample_shapes.at(k), c.size));
  return batched(std::move(out));
}

Result reshaped(const Call& c) {
  return batched({reshape(c.tensor(0), with_batch(c.sample_shapes.at(0), c.size))});
}

}  // namespace ember::batching
