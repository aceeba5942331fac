// Views and copies. A view's backward puts the gradient back where the view
// came from: reshape back, transpose back, pad a narrow with zeros, …
// A view's forward rule is the same view of the tangent. For a true view
// (memory shared with x) that tangent is already there, since a tangent
// belongs to memory (autograd/forward.h); the rule matters when the op
// copies (a reshape that cannot be a view, contiguous, clone, to).
#include <algorithm>
#include <cstring>

#include "autograd/batching.h"
#include "autograd/composed_rule.h"
#include "autograd/forward.h"
#include "autograd/linear_rule.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

// ---- reshape / view / flatten / squeeze / unsqueeze: all "same numbers, new shape" ----
struct ReshapeBackward final : Node {
  EMBER_NODE_NAME(ReshapeBackward)
  Shape in_shape;
  explicit ReshapeBackward(Shape s) : in_shape(std::move(s)) {}
  std::vector<Tensor> apply(const Tensor& g) override { return {reshape(g, in_shape)}; }
};
Tensor reshape(const Tensor& x, const Shape& shape) {
  OpScope scope("reshape", x, shape);
  Tensor out = kernel::reshape(x, shape);
  if (needs_grad({x})) record(out, std::make_shared<ReshapeBackward>(x.shape()), {x});
  forward_rule(out, [&] { return reshape(dx(x), shape); }, x);
  return scope.out(out);
}
Tensor view(const Tensor& x, const Shape& shape) {
  OpScope scope("view", x, shape);
  Tensor out = kernel::view(x, shape);
  if (needs_grad({x})) record(out, std::make_shared<ReshapeBackward>(x.shape()), {x});
  forward_rule(out, [&] { return view(dx(x), shape); }, x);
  return scope.out(out);
}
Tensor flatten(const Tensor& x, int64_t start, int64_t end) {
  OpScope scope("flatten", x, start, end);
  Tensor out = kernel::flatten(x, start, end);
  if (needs_grad({x})) record(out, std::make_shared<ReshapeBackward>(x.shape()), {x});
  forward_rule(out, [&] { return flatten(dx(x), start, end); }, x);
  return scope.out(out);
}
Tensor squeeze(const Tensor& x) {
  OpScope scope("squeeze", x);
  Tensor out = kernel::squeeze(x, std::nullopt);
  if (needs_grad({x})) record(out, std::make_shared<ReshapeBackward>(x.shape()), {x});
  forward_rule(out, [&] { return squeeze(dx(x)); }, x);
  return scope.out(out);
}
Tensor squeeze(const Tensor& x, int64_t d) {
  OpScope scope("squeeze", x, d);
  Tensor out = kernel::squeeze(x, d);
  if (needs_grad({x})) record(out, std::make_shared<ReshapeBackward>(x.shape()), {x});
  forward_rule(out, [&] { return squeeze(dx(x), d); }, x);
  return scope.out(out);
}
Tensor unsqueeze(const Tensor& x, int64_t d) {
  OpScope scope("unsqueeze", x, d);
  Tensor out = kernel::unsqueeze(x, d);
  if (needs_grad({x})) record(out, std::make_shared<ReshapeBackward>(x.shape()), {x});
  forward_rule(out, [&] { return unsqueeze(dx(x), d); }, x);
  return scope.out(out);
}

// ---- transpose / permute ----
struct PermuteBackward final : Node {
  EMBER_NODE_NAME(PermuteBackward)
  Shape dims;
  explicit PermuteBackward(Shape d) : dims(std::move(d)) {}
  std::vector<Tensor> apply(const Tensor& g) override {
    Shape inverse(dims.size());  // out dim i came from input dim dims[i]
    for (size_t i = 0; i < dims.size(); ++i) inverse[wrap_dim(dims[i], g.dim(), "permute")] = static_cast<int64_t>(i);
    return {permute(g, inverse)};
  }
};
Tensor permute(const Tensor& x, const Shape& dims) {
  OpScope scope("permute", x, dims);
  Tensor out = kernel::permute(x, dims);
  if (needs_grad({x})) record(out, std::make_shared<PermuteBackward>(dims), {x});
  forward_rule(out, [&] { return permute(dx(x), dims); }, x);
  return scope.out(out);
}
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  OpScope scope("transpose", x, d0, d1);
  Tensor out = kernel::transpose(x, d0, d1);
  Shape dims(x.dim());
  for (int64_t i = 0; i < x.dim(); ++i) dims[i] = i;
  if (x.dim() > 0) std::swap(dims[wrap_dim(d0, x.dim(), "transpose")], dims[wrap_dim(d1, x.dim(), "transpose")]);
  if (needs_grad({x})) record(out, std::make_shared<PermuteBackward>(dims), {x});
  forward_rule(out, [&] { return transpose(dx(x), d0, d1); }, x);
  return scope.out(out);
}

// ---- expand: the gradient of a broadcast is a sum (the engine's sum_to does it) ----
struct ExpandBackward final : Node {
  EMBER_NODE_NAME(ExpandBackward)
  std::vector<Tensor> apply(const Tensor& g) override { return {g}; }  // summed to the input shape by the engine
};
Tensor expand(const Tensor& x, const Shape& shape) {
  OpScope scope("expand", x, shape);
  Tensor out = kernel::expand(x, shape);
  if (needs_grad({x})) record(out, std::make_shared<ExpandBackward>(), {x});
  forward_rule(out, [&] { return expand(dx(x), shape); }, x);
  return scope.out(out);
}

// ---- slice / narrow / select: linear (autograd/linear_rule.h) ----
// Lᵀ g: zeros(x.shape) with grad_out written into the same slice (elements
// start, start+step, ... of dim `dim`; select drops that dim).
struct SliceBackward final : LinearBackward {
  EMBER_NODE_NAME(SliceBackward)
  Shape in_shape;
  int64_t dim, start, step, length;
  bool dropped_dim;  // select
  SliceBackward(Shape s, int64_t d, int64_t st, int64_t sp, int64_t len, bool drop)
      : in_shape(std::move(s)), dim(d), start(st), step(sp), length(len), dropped_dim(drop) {}
  Tensor linear(const Tensor& v) const override {
    return dropped_dim ? select(v, dim, start) : slice(v, dim, start, last(), step);
  }
  Tensor transposed(const Tensor& g) const override {
    Tensor grad_x = zeros(in_shape, g.dtype());
    Tensor part = dropped_dim ? kernel::select(grad_x, dim, start) : kernel::slice(grad_x, dim, start, last(), step);
    kernel::copy_(part, g, "slice backward");
    return grad_x;
  }
  Tensor transposed_by_ops(const Tensor& g) const override {  // g added at the slice's indices
    std::vector<int64_t> at;
    for (int64_t k = 0; k < length; ++k) at.push_back(start + k * step);
    return index_add(zeros(in_shape, g.dtype()), dim, tensor(at, Shape{length}), dropped_dim ? unsqueeze(g, dim) : g);
  }
  int64_t last() const { return length == 0 ? start : start + (length - 1) * step + 1; }  // the slice's end
};
Tensor slice(const Tensor& x, int64_t d, int64_t start, int64_t end, int64_t step) {
  OpScope scope("slice", x, d, start, end, step);
  Tensor out = kernel::slice(x, d, start, end, step);
  int64_t w = wrap_dim(d, x.dim(), "slice"), n = x.shape()[w];
  int64_t first = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);  // as kernel::slice clamps it
  if (needs_grad({x})) record(out, std::make_shared<SliceBackward>(x.shape(), w, first, step, out.shape()[w], false), {x});
  forward_rule(out, [&] { return slice(dx(x), d, start, end, step); }, x);
  return scope.out(out);
}
Tensor narrow(const Tensor& x, int64_t d, int64_t start, int64_t length) {
  OpScope scope("narrow", x, d, start, length);
  int64_t w = wrap_dim(d, x.dim(), "narrow");
  int64_t n = x.shape()[w];
  EMBER_CHECK(start >= -n && start <= n, "narrow",
              "start " << start << " is out of range for dim " << d << " of size " << n << " (shape "
                       << shape_str(x.shape()) << ")");
  if (start < 0) start += n;
  EMBER_CHECK(length >= 0 && length <= n - start, "narrow",
              "start " << start << " + length " << length << " exceeds size " << n << " of dim " << d << " (shape "
                       << shape_str(x.shape()) << ")");
  return scope.out(slice(x, w, start, start + length, 1));
}
Tensor select(const Tensor& x, int64_t d, int64_t index) {
  OpScope scope("select", x, d, index);
  Tensor out = kernel::select(x, d, index);
  int64_t w = wrap_dim(d, x.dim(), "select");
  if (needs_grad({x})) {
    const int64_t at = index < 0 ? index + x.shape()[w] : index;
    record(out, std::make_shared<SliceBackward>(x.shape(), w, at, 1, 1, true), {x});
  }
  forward_rule(out, [&] { return select(dx(x), d, index); }, x);
  return scope.out(out);
}

// ---- contiguous / clone / to ----
struct IdentityBackward final : Node {
  EMBER_NODE_NAME(IdentityBackward)
  std::vector<Tensor> apply(const Tensor& g) override { return {g}; }
};
Tensor contiguous(const Tensor& x) {
  OpScope scope("contiguous", x);
  if (x.is_contiguous()) {
    detail::no_forward_rule_needed();  // x itself, with its tangent
    return scope.out(x);
  }
  Tensor out = kernel::contiguous(x);
  if (needs_grad({x})) record(out, std::make_shared<IdentityBackward>(), {x});
  forward_rule(out, [&] { return contiguous(dx(x)); }, x);
  return scope.out(out);
}
Tensor clone(const Tensor& x) {
  OpScope scope("clone", x);
  Tensor out = empty(x.shape(), x.dtype());
  kernel::copy_(out, x, "clone");
  if (needs_grad({x})) record(out, std::make_shared<IdentityBackward>(), {x});
  forward_rule(out, [&] { return clone(dx(x)); }, x);
  return scope.out(out);
}

// A composed fallback's handle on one input (autograd/composed_rule.h): the
// same memory and layout, and so the same tangent, with a node of its own.
Tensor detail::stand_in(const Tensor& x) {
  OpScope scope("stand_in", x);
  detail::no_forward_rule_needed();  // x's memory, so x's tangent
  Tensor out = kernel::as_strided(x, x.shape(), x.stride(), x.storage_offset(), "stand_in");
  if (needs_grad({x})) record(out, std::make_shared<IdentityBackward>(), {x});
  return scope.out(out);
}

// make_dual's copy (autograd/forward.h): the elements x's view spans, from
// its first to its last, copied and viewed with x's strides, so that the dual
// of a non-contiguous view is one too (and a slice of a big tensor copies
// only what it spans). A tangent belongs to memory, so a layout with several
// elements in one location (an expand view) has room for one tangent value
// where the primal shows several: its dual is a dense copy instead.
Tensor detail::copy_with_layout(const Tensor& x) {
  OpScope scope("make_dual", x);
  if (kernel::may_overlap_itself(x)) {
    Tensor out = empty(x.shape(), x.dtype());
    kernel::copy_(out, x, "make_dual");
    if (needs_grad({x})) record(out, std::make_shared<IdentityBackward>(), {x});
    return scope.out(out);
  }
  int64_t span = x.numel() == 0 ? 0 : 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (x.numel() > 0) span += (x.shape()[d] - 1) * x.stride()[d];
  const size_t bytes = static_cast<size_t>(span) * dtype_size(x.dtype());
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(bytes);
  if (bytes > 0)
    std::memcpy(impl->storage->data(),
                static_cast<const char*>(x.storage()->data()) + x.storage_offset() * dtype_size(x.dtype()), bytes);
  impl->offset = 0;
  impl->shape = x.shape();
  impl->strides = x.stride();
  impl->dtype = x.dtype();
  Tensor out(std::move(impl));
  if (needs_grad({x})) record(out, std::make_shared<IdentityBackward>(), {x});
  return scope.out(out);
}

struct ToBackward final : Node {
  EMBER_NODE_NAME(ToBackward)
  DType in_dtype;
  explicit ToBackward(DType d) : in_dtype(d) {}
  std::vector<Tensor> apply(const Tensor& g) override { return {to(g, in_dtype)}; }
};
Tensor to(const Tensor& x, DType dt) {
  OpScope scope("to", x, dt);
  // x itself; or an integer, bool or bfloat16 copy, which has no tangent
  if (x.dtype() == dt || !is_floating(dt)) detail::no_forward_rule_needed();
  if (x.dtype() == dt) return scope.out(x);
  // bfloat16 tensors do not take part in autograd (a storage type): a
  // silent cut from the graph would leave the weights without gradients.
  EMBER_CHECK(dt != kBFloat16 || !needs_grad({x}), "to",
              "a " << dtype_name(x.dtype()) << " tensor of shape " << shape_str(x.shape())
                   << " that requires grad cannot become bfloat16 (it would leave the graph); for training "
                      "in bfloat16 use an AutocastGuard, or detach() first");
  Tensor out = kernel::to(x, dt);
  if (is_floating(dt) && is_floating(x.dtype()) && needs_grad({x}))
    record(out, std::make_shared<ToBackward>(x.dtype()), {x});
  if (is_floating(dt)) forward_rule(out, [&] { return to(dx(x), dt); }, x);
  return scope.out(out);
}

// ---- vmap (autograd/batching.h): a dim shifts past the batch, a shape gets it in front ----
namespace {
batching::Result permute_batched(const batching::Call& c) {
  Shape dims{0};
  for (int64_t d : std::get<Shape>(c.args[1])) dims.push_back(batching::shift(d, c.rank(0)));
  return batching::batched({permute(c.tensor(0), dims)});
}
batching::Result transpose_batched(const batching::Call& c) {
  const int64_t r = c.rank(0);
  if (r == 0) return batching::same(c);  // transpose(x, 0, 0) of a 0-d x: x
  return batching::batched({transpose(c.tensor(0), batching::shift(std::get<int64_t>(c.args[1]), r),
                                      batching::shift(std::get<int64_t>(c.args[2]), r))});
}
// expand(x, shape): the sample padded to the result's rank, then the batch kept
batching::Result expand_batched(const batching::Call& c) {
  const Shape& out = c.sample_shapes.at(0);
  const Tensor x = batching::pad(c.tensor(0), true, static_cast<int64_t>(out.size()));
  return batching::batched({expand(x, batching::with_batch(out, c.size))});
}
}  // namespace
void batching::detail::add_view_batching_rules(Rules& r) {
  // the result's shape is named: reshape to it (a view where the batch allows, as reshape is)
  r.add({"reshape", "view", "flatten", "squeeze", "unsqueeze"}, &reshaped);
  r.add({"narrow", "slice", "select"}, &shifted_dim);
  r.add("permute", &permute_batched);
  r.add("transpose", &transpose_batched);
  r.add("expand", &expand_batched);
  // a graph's detach (compile/op_table.h) changes no value either
  r.add({"contiguous", "clone", "to", "stand_in", "detach"}, &same);
}

}  // namespace ember
