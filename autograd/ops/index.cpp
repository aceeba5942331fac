// Indexing: index_select, the embedding lookup built on it, and gather.
// They are linear (autograd/linear_rule.h): their backward is the transpose,
// a scatter-add (every selected row or element sends its gradient back to
// where it came from, and an id used twice receives the sum), and the
// transpose of that is the op again.
#include "autograd/batching.h"
#include "autograd/forward.h"
#include "autograd/grad_mode.h"
#include "autograd/linear_rule.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

namespace {
// L v for index_select and embedding: the rows of v at ids along dim (none at
// the padding id: that row gets no gradient, and the two rules describe one
// linear map), in the op's output shape.
Tensor rows_at(const Tensor& v, int64_t dim, const Tensor& ids, std::optional<int64_t> pad, const Shape& out_shape) {
  Tensor rows = index_select(v, dim, ids);
  if (pad) rows = masked_fill(rows, unsqueeze(eq(ids, static_cast<double>(*pad)), -1), 0.0);
  return reshape(rows, out_shape);
}
}  // namespace

// Lᵀ g: grad_x = zeros(x.shape); grad_x[ids[i]] += grad_out[i]. Entries
// never selected stay exactly 0; an embedding's padding row receives nothing.
// grad_out (*, D) is read as the (N, D) rows it selected.
struct IndexSelectBackward final : LinearBackward {
  EMBER_NODE_NAME(IndexSelectBackward)
  Shape in_shape, out_shape;
  int64_t dim;
  SavedTensor ids;
  std::optional<int64_t> padding_idx;  // embedding only: the row that gets no gradient
  bool sparse = false;                 // embedding only: give the table's gradient as rows
  IndexSelectBackward(Shape s, Shape o, int64_t d, const Tensor& i, std::optional<int64_t> pad = std::nullopt,
                      bool rows = false)
      : in_shape(std::move(s)), out_shape(std::move(o)), dim(d), ids(i), padding_idx(pad), sparse(rows) {}
  std::vector<SavedRef> saved() override { return {{"ids", &ids}}; }
  Tensor linear(const Tensor& v) const override { return rows_at(v, dim, ids.get(*this), padding_idx, out_shape); }
  Tensor transposed(const Tensor& g) const override {
    const Tensor i = ids.get(*this);
    Shape selected = in_shape;
    selected[dim] = i.numel();
    Tensor grad_x = zeros(in_shape, g.dtype());  // for an embedding, the dense (V, D) write is the cost floor
    kernel::index_add_(grad_x, dim, i, kernel::reshape(g, selected));
    if (padding_idx) kernel::fill_(kernel::select(grad_x, dim, *padding_idx), 0.0);
    return grad_x;
  }
  Tensor transposed_by_ops(const Tensor& g) const override {
    const Tensor i = ids.get(*this);
    Shape selected = in_shape, one_per_id(in_shape.size(), 1);
    selected[dim] = i.numel();
    Tensor rows = reshape(g, selected);
    if (padding_idx) {  // the rows of the padding id add nothing (an embedding's dim is 0)
      one_per_id[0] = i.numel();
      rows = masked_fill(rows, reshape(eq(reshape(i, {-1}), static_cast<double>(*padding_idx)), one_per_id), 0.0);
    }
    return index_add(zeros(in_shape, g.dtype()), dim, reshape(i, {-1}), rows);
  }
  // A sparse embedding's gradient as the rows it touched, summed per id
  // (what transposed() would add into those rows; the others stay 0).
  std::optional<RowGrad> apply_rows(const Tensor& g) override {
    if (!sparse) return std::nullopt;
    const Tensor i = ids.get(*this);
    Shape selected = in_shape;
    selected[0] = i.numel();
    return kernel::coalesce_rows(i, kernel::reshape(g, selected), in_shape[0], padding_idx);
  }
};
Tensor index_select(const Tensor& x, int64_t d, const Tensor& ids) {
  OpScope scope("index_select", x, d, ids);
  Tensor out = kernel::index_select(x, d, ids);
  if (needs_grad({x}))
    record(out, std::make_shared<IndexSelectBackward>(x.shape(), out.shape(), wrap_dim(d, x.dim(), "index_select"), ids),
           {x});
  forward_rule(out, [&] { return index_select(dx(x), d, ids); }, x);  // linear: the same rows of the tangent
  return scope.out(out);
}

// ---- embedding: row lookup in a (V, D) table ----
int64_t padding_index(int64_t padding_idx, const Shape& weight_shape, const char* op) {
  const int64_t V = weight_shape.at(0);
  EMBER_CHECK(padding_idx >= -V && padding_idx < V, op,
              "padding_idx " << padding_idx << " is outside the vocabulary [0, " << V << ") of weight "
                             << shape_str(weight_shape));
  return padding_idx < 0 ? padding_idx + V : padding_idx;
}

// weight:(V, D) ids:(*) -> (*, D): index_select of the flattened ids, seen
// in the ids' shape. One node: IndexSelectBackward (with the padding row).
Tensor embedding(const Tensor& weight, const Tensor& ids, std::optional<int64_t> padding_idx, bool sparse) {
  OpScope scope("embedding", weight, ids, padding_idx, sparse);
  EMBER_CHECK(weight.dim() == 2, "embedding", "weight must be (V, D), got shape " << shape_str(weight.shape()));
  kernel::check_ids(ids, weight.size(0), "embedding", "id", "the vocabulary");  // positions as in ids' shape
  std::optional<int64_t> pad;
  if (padding_idx) pad = padding_index(*padding_idx, weight.shape(), "embedding");
  Tensor flat_ids = kernel::reshape(ids, {-1});
  Shape out_shape = ids.shape();
  out_shape.push_back(weight.size(1));
  Tensor out = kernel::reshape(kernel::index_select(weight, 0, flat_ids), out_shape);  // (N, D) rows as (*, D)
  if (needs_grad({weight}))
    record(out, std::make_shared<IndexSelectBackward>(weight.shape(), out_shape, 0, flat_ids, pad, sparse), {weight});
  forward_rule(out, [&] { return rows_at(dx(weight), 0, flat_ids, pad, out_shape); }, weight);
  return scope.out(out);
}

// Lᵀ g: grad_x = scatter_add(zeros(x.shape), d, ids, grad_out)
struct GatherBackward final : LinearBackward {
  EMBER_NODE_NAME(GatherBackward)
  Shape in_shape;
  int64_t dim;
  SavedTensor ids;
  GatherBackward(Shape s, int64_t d, const Tensor& i) : in_shape(std::move(s)), dim(d), ids(i) {}
  std::vector<SavedRef> saved() override { return {{"ids", &ids}}; }
  Tensor linear(const Tensor& v) const override { return gather(v, dim, ids.get(*this)); }
  Tensor transposed(const Tensor& g) const override { return kernel::scatter_add(in_shape, dim, ids.get(*this), g); }
  Tensor transposed_by_ops(const Tensor& g) const override {
    return scatter_add(zeros(in_shape, g.dtype()), dim, ids.get(*this), g);
  }
};
Tensor gather(const Tensor& x, int64_t d, const Tensor& ids) {
  OpScope scope("gather", x, d, ids);
  Tensor out = kernel::gather(x, d, ids);
  if (needs_grad({x})) record(out, std::make_shared<GatherBackward>(x.shape(), wrap_dim(d, x.dim(), "gather"), ids), {x});
  forward_rule(out, [&] { return gather(dx(x), d, ids); }, x);
  return scope.out(out);
}

// ---- the scatters, out of place: the adjoints of index_select and gather ----
// d index_add(x, d, ids, src) = (g, index_select(g, d, ids))
struct IndexAddBackward final : Node {
  EMBER_NODE_NAME(IndexAddBackward)
  int64_t dim;
  SavedTensor ids;
  IndexAddBackward(int64_t d, const Tensor& i) : dim(d), ids(i) {}
  std::vector<SavedRef> saved() override { return {{"ids", &ids}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor i = ids.get(*this);
    Tensor gs = index_select(g, dim, i.dim() == 0 ? reshape(i, {1}) : i);
    return {g, i.dim() == 0 ? squeeze(gs, dim) : gs};
  }
};
Tensor index_add(const Tensor& x, int64_t d, const Tensor& ids, const Tensor& src) {
  OpScope scope("index_add", x, d, ids, src);
  EMBER_CHECK(x.dtype() == src.dtype(), "index_add",
              "dtype mismatch: destination " << dtype_name(x.dtype()) << " vs source " << dtype_name(src.dtype()));
  Tensor out = kernel::to(x, x.dtype());  // a copy of its own
  kernel::index_add_(out, d, ids, src);
  if (needs_grad({x, src})) record(out, std::make_shared<IndexAddBackward>(wrap_dim(d, x.dim(), "index_add"), ids), {x, src});
  forward_rule(out, [&] { return index_add(dx(x), d, ids, dx(src)); }, x, src);  // linear: the same op on the tangents
  return scope.out(out);
}

// d scatter_add(x, d, ids, src) = (g, gather(g, d, ids))
struct ScatterAddBackward final : Node {
  EMBER_NODE_NAME(ScatterAddBackward)
  int64_t dim;
  SavedTensor ids;
  ScatterAddBackward(int64_t d, const Tensor& i) : dim(d), ids(i) {}
  std::vector<SavedRef> saved() override { return {{"ids", &ids}}; }
  std::vector<Tensor> apply(const Tensor& g) override { return {g, gather(g, dim, ids.get(*this))}; }
};
Tensor scatter_add(const Tensor& x, int64_t d, const Tensor& ids, const Tensor& src) {
  OpScope scope("scatter_add", x, d, ids, src);
  EMBER_CHECK(x.dtype() == src.dtype(), "scatter_add",
              "dtype mismatch: destination " << dtype_name(x.dtype()) << " vs source " << dtype_name(src.dtype()));
  EMBER_CHECK(ids.shape() == src.shape(), "scatter_add",
              "ids of shape " << shape_str(ids.shape()) << " and source of shape " << shape_str(src.shape())
                              << " must match");
  Tensor out = kernel::binary(kernel::Binary::Add, x, kernel::scatter_add(x.shape(), d, ids, src));
  EMBER_CHECK(out.shape() == x.shape(), "scatter_add", "the source does not fit the destination's shape");
  if (needs_grad({x, src})) record(out, std::make_shared<ScatterAddBackward>(wrap_dim(d, x.dim(), "scatter_add"), ids), {x, src});
  forward_rule(out, [&] { return scatter_add(dx(x), d, ids, dx(src)); }, x, src);
  return scope.out(out);
}

Tensor one_hot(const Tensor& ids, int64_t num_classes) {
  OpScope scope("one_hot", ids, num_classes);
  return scope.out(kernel::one_hot(ids, num_classes));
}

Tensor& index_add_(Tensor& x, int64_t d, const Tensor& ids, const Tensor& src) {
  OpScope scope("index_add_", x, d, ids, src);
  EMBER_CHECK(!(is_grad_enabled() && (x.requires_grad() || src.requires_grad())), "index_add_",
              "in-place index_add_ on tensors that require grad (destination " << shape_str(x.shape()) << ", source "
                                                                               << shape_str(src.shape())
                                                                               << ") is only allowed under NoGradGuard");
  // In place, so its tangent too: t(x)[ids] += t(src).
  detail::no_forward_rule_needed();
  if (detail::tangents_propagate() && (detail::has_tangent(x) || detail::has_tangent(src))) {
    Tensor tx = detail::tangent_for_write(x), ts = dx(src);
    detail::ForwardRuleScope plain;
    kernel::index_add_(tx, d, ids, ts);
  }
  kernel::index_add_(x, d, ids, src);
  return x;
}

// ---- vmap (autograd/batching.h) ----
// The ids index a sample's own dim: shifted past the batch. Ids that differ
// per sample (one list of ids per sample) index one tall table instead: the
// batch's tables stacked, sample b's ids moved down by b rows of it. A
// weight that differs per sample under embedding has no rule here: vmap
// loops.
namespace {
using batching::with_batch;
// Sample b's ids (B, N), moved down by b * rows, flattened: ids into the stacked (B * rows) table.
Tensor stacked_ids(const Tensor& ids, int64_t rows) {
  const int64_t B = ids.size(0);
  return (ids + (arange(static_cast<double>(B), kInt64) * static_cast<double>(rows)).reshape({B, 1})).reshape({-1});
}
// x (B, ...) with dim d (a sample's dim d - 1) moved to 1 and merged with the batch: (B * x.size(d), rest).
Tensor stacked_rows(const Tensor& x, int64_t d) {
  const Tensor m = batching::movedim(x, d, 1);
  Shape rest(m.shape().begin() + 2, m.shape().end());
  rest.insert(rest.begin(), m.size(0) * m.size(1));
  return m.reshape(rest);
}
// The inverse: (B * n, rest) back to (B, ...) with those n rows at dim d.
Tensor unstacked_rows(const Tensor& flat, int64_t B, int64_t d) {
  Shape s(flat.shape().begin() + 1, flat.shape().end());
  s.insert(s.begin(), {B, B ? flat.size(0) / B : 0});
  return batching::movedim(flat.reshape(s), 1, d);
}
batching::Result index_select_batched(const batching::Call& c) {
  if (!c.batched[2]) return batching::shifted_dim(c);
  if (c.rank(2) != 1 || c.size == 0) return {};
  const Tensor ids = c.tensor(2);
  const int64_t d = batching::shift(std::get<int64_t>(c.args[1]), c.rank(0));
  const Tensor x = with_batch(c.tensor(0), c.batched[0], c.size);
  const Tensor rows = index_select(stacked_rows(x, d), 0, stacked_ids(ids, x.size(d)));
  return batching::batched({unstacked_rows(rows, c.size, d)});
}
// gather and scatter_add: ids of the shape of what they read, so every tensor carries the batch
batching::Result gather_batched(const batching::Call& c) {
  const int64_t d = batching::shift(std::get<int64_t>(c.args[1]), c.rank(0));
  std::vector<Tensor> t;
  for (size_t i : {size_t{0}, size_t{2}, size_t{3}})
    if (i < c.args.size()) t.push_back(with_batch(c.tensor(i), c.batched[i], c.size));
  return batching::batched({c.op == "gather" ? gather(t[0], d, t[1]) : scatter_add(t[0], d, t[1], t[2])});
}
// index_add(x, d, ids, src): with ids per sample, into the stacked table (the
// embedding's gradient: each sample's rows added into its own table)
batching::Result index_add_batched(const batching::Call& c) {
  const int64_t d = batching::shift(std::get<int64_t>(c.args[1]), c.rank(0));
  const Tensor x = with_batch(c.tensor(0), c.batched[0], c.size), src = with_batch(c.tensor(3), c.batched[3], c.size);
  if (!c.batched[2]) return batching::batched({index_add(x, d, c.tensor(2), src)});
  if (c.rank(2) != 1 || c.size == 0) return {};
  const Tensor sum = index_add(stacked_rows(x, d), 0, stacked_ids(c.tensor(2), x.size(d)), stacked_rows(src, d));
  return batching::batched({unstacked_rows(sum, c.size, d)});
}
batching::Result embedding_batched(const batching::Call& c) {
  if (c.batched[0]) return {};
  return batching::same(c);  // ids (B, *) give rows (B, *, D)
}
// one_hot's width is the sample's (num_classes -1 counts one sample's ids, not the batch's)
batching::Result one_hot_batched(const batching::Call& c) {
  return batching::batched({one_hot(c.tensor(0), c.sample_shapes.at(0).back())});
}
}  // namespace
void batching::detail::add_index_batching_rules(Rules& r) {
  r.add("index_select", &index_select_batched);
  r.add({"gather", "scatter_add"}, &gather_batched);
  r.add("index_add", &index_add_batched);
  r.add("embedding", &embedding_batched);
  r.add("one_hot", &one_hot_batched);
}

}  // namespace ember
