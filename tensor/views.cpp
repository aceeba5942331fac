// Views: every function here returns a tensor that shares x's storage and
// differs only in (shape, strides, offset). Nothing is copied, except by
// reshape when the strides make a view impossible.
#include <algorithm>

#include "tensor/kernels.h"

namespace ember::kernel {

Tensor as_strided(const Tensor& x, const Shape& shape, const Shape& strides, int64_t offset, const char* op) {
  EMBER_CHECK(shape.size() == strides.size(), op,
              "shape " << shape_str(shape) << " and strides " << shape_str(strides) << " differ in length");
  const int64_t n = checked_numel(shape, op);
  if (n > 0) {
    // The furthest element: offset + sum (size - 1) * stride, inside the storage.
    int64_t last = offset;
    bool ok = offset >= 0;
    for (size_t i = 0; ok && i < shape.size(); ++i) {
      int64_t step = 0;
      ok = strides[i] >= 0 && !__builtin_mul_overflow(shape[i] - 1, strides[i], &step) &&
           !__builtin_add_overflow(last, step, &last);
    }
    const int64_t capacity = static_cast<int64_t>(x.storage()->nbytes() / dtype_size(x.dtype()));
    EMBER_CHECK(ok && last < capacity, op,
                "a view of shape " << shape_str(shape) << ", strides " << shape_str(strides) << " and offset " << offset
                                   << " reaches outside its storage of " << capacity << " elements");
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.storage();
  impl->offset = offset;
  impl->shape = shape;
  impl->strides = strides;
  impl->dtype = x.dtype();
  return Tensor(std::move(impl));
}

namespace {
// The first and one-past-the-last element a non-empty tensor can address.
std::pair<int64_t, int64_t> element_range(const Tensor& t) {
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.shape()[d] - 1) * t.stride()[d];  // bounded by as_strided
  return {t.storage_offset(), last + 1};
}
}  // namespace

bool may_overlap_itself(const Tensor& x) {
  if (x.numel() == 0) return false;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (int64_t d = 0; d < x.dim(); ++d)
    if (x.shape()[d] > 1) dims.emplace_back(x.stride()[d], x.shape()[d]);
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;  // the largest offset the smaller dims span
  for (const auto& [stride, size] : dims) {
    if (stride <= reach) return true;
    reach += (size - 1) * stride;
  }
  return false;
}

void check_no_internal_overlap(const Tensor& dst, const char* op) {
  EMBER_CHECK(!may_overlap_itself(dst), op,
              "the tensor of shape " << shape_str(dst.shape()) << " and strides " << shape_str(dst.stride())
                                     << " has several elements in one memory location (an expand view or an "
                                        "overlapping as_strided): writing into it in place would depend on the "
                                        "order of the writes; clone() it first");
}

void check_no_overlap(const Tensor& dst, const Tensor& src, const char* op, const char* what, bool allow_same) {
  if (dst.numel() == 0 || src.numel() == 0 || dst.storage() != src.storage()) return;
  if (allow_same && dst.storage_offset() == src.storage_offset() && dst.shape() == src.shape() &&
      dst.stride() == src.stride())
    return;
  const auto [a0, a1] = element_range(dst);
  const auto [b0, b1] = element_range(src);
  EMBER_CHECK(a1 <= b0 || b1 <= a0, op,
              "the " << what << " of shape " << shape_str(src.shape()) << " shares memory with the destination of shape "
                     << shape_str(dst.shape()) << ": an in-place write would change what it reads; clone() it first");
}

Tensor view(const Tensor& x, const Shape& shape_in) {
  Shape shape = infer_shape(shape_in, x.numel(), x.shape(), "view");
  Shape strides;
  EMBER_CHECK(view_strides(x.shape(), x.stride(), shape, strides), "view",
              "cannot view a tensor of shape " << shape_str(x.shape()) << " and strides " << shape_str(x.stride())
                                               << " as " << shape_str(shape)
                                               << ": the memory is not contiguous enough; use reshape() (copies)");
  return as_strided(x, shape, strides, x.storage_offset(), "view");
}

Tensor reshape(const Tensor& x, const Shape& shape_in) {
  Shape shape = infer_shape(shape_in, x.numel(), x.shape(), "reshape");
  Shape strides;
  if (view_strides(x.shape(), x.stride(), shape, strides)) return as_strided(x, shape, strides, x.storage_offset(), "reshape");
  Tensor c = contiguous(x);
  return as_strided(c, shape, contiguous_strides(shape), c.storage_offset(), "reshape");
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  d0 = wrap_dim_or_scalar(d0, x.dim(), "transpose");
  d1 = wrap_dim_or_scalar(d1, x.dim(), "transpose");
  Shape shape = x.shape(), strides = x.stride();
  if (x.dim() == 0) return as_strided(x, shape, strides, x.storage_offset(), "transpose");
  std::swap(shape[d0], shape[d1]);
  std::swap(strides[d0], strides[d1]);
  return as_strided(x, shape, strides, x.storage_offset(), "transpose");
}

Tensor permute(const Tensor& x, const Shape& dims) {
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == x.dim(), "permute",
              "got " << dims.size() << " dims " << shape_str(dims) << " for a tensor of shape " << shape_str(x.shape()));
  Shape shape(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], x.dim(), "permute");
    EMBER_CHECK(!seen[d], "permute", "dim " << dims[i] << " repeats in " << shape_str(dims));
    seen[d] = true;
    shape[i] = x.shape()[d];
    strides[i] = x.stride()[d];
  }
  return as_strided(x, shape, strides, x.storage_offset(), "permute");
}

Tensor unsqueeze(const Tensor& x, int64_t d) {
  d = wrap_dim(d, x.dim() + 1, "unsqueeze");
  Shape shape = x.shape(), strides = x.stride();
  int64_t st = d < x.dim() ? shape[d] * strides[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  return as_strided(x, shape, strides, x.storage_offset(), "unsqueeze");
}

Tensor squeeze(const Tensor& x, std::optional<int64_t> d) {
  Shape shape, strides;
  int64_t only = d ? wrap_dim_or_scalar(*d, x.dim(), "squeeze") : -1;
  for (int64_t i = 0; i < x.dim(); ++i) {
    bool drop = x.shape()[i] == 1 && (only < 0 || i == only);
    if (!drop) {
      shape.push_back(x.shape()[i]);
      strides.push_back(x.stride()[i]);
    }
  }
  return as_strided(x, shape, strides, x.storage_offset(), "squeeze");
}

Tensor expand(const Tensor& x, const Shape& target) {
  EMBER_CHECK(static_cast<int64_t>(target.size()) >= x.dim(), "expand",
              "target " << shape_str(target) << " has fewer dims than the tensor's shape " << shape_str(x.shape()));
  Shape shape(target.size()), strides(target.size());
  size_t lead = target.size() - x.shape().size();
  for (size_t i = 0; i < target.size(); ++i) {
    if (i < lead) {
      EMBER_CHECK(target[i] >= 0, "expand", "size " << target[i] << " is not allowed for a new leading dim in "
                                                    << shape_str(target));
      shape[i] = target[i];
      strides[i] = 0;
      continue;
    }
    int64_t have = x.shape()[i - lead];
    int64_t want = target[i] == -1 ? have : target[i];
    EMBER_CHECK(want == have || have == 1, "expand",
                "cannot expand shape " << shape_str(x.shape()) << " to " << shape_str(target) << ": size " << have
                                       << " at dim " << (i - lead) << " must be 1 or equal " << want);
    EMBER_CHECK(want >= 0, "expand", "negative size " << want << " in " << shape_str(target));
    shape[i] = want;
    strides[i] = (have == 1 && want != 1) ? 0 : x.stride()[i - lead];
  }
  return as_strided(x, shape, strides, x.storage_offset(), "expand");
}

Tensor slice(const Tensor& x, int64_t d, int64_t start, int64_t end, int64_t step) {
  d = wrap_dim(d, x.dim(), "slice");
  EMBER_CHECK(step > 0, "slice", "step must be positive, got " << step);
  int64_t n = x.shape()[d];
  // Python-style clamping of start/end, negative values count from the end
  // (start + n cannot overflow: start < 0 <= n).
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape shape = x.shape(), strides = x.stride();
  const int64_t len = end == start ? 0 : 1 + (end - start - 1) / step;  // no end - start + step overflow
  shape[d] = len;
  if (len > 1) strides[d] = checked_mul(strides[d], step, "slice", "the stride");  // else never stepped
  return as_strided(x, shape, strides, x.storage_offset() + start * x.stride()[d], "slice");
}

Tensor select(const Tensor& x, int64_t d, int64_t index) {
  d = wrap_dim(d, x.dim(), "select");
  int64_t n = x.shape()[d];
  EMBER_CHECK(index >= -n && index < n, "select",
              "index " << index << " is out of range for dim " << d << " of size " << n << " (shape "
                       << shape_str(x.shape()) << ")");
  if (index < 0) index += n;
  Shape shape = x.shape(), strides = x.stride();
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return as_strided(x, shape, strides, x.storage_offset() + index * x.stride()[d], "select");
}

Tensor flatten(const Tensor& x, int64_t start, int64_t end) {
  start = wrap_dim_or_scalar(start, x.dim(), "flatten");
  end = wrap_dim_or_scalar(end, x.dim(), "flatten");
  if (x.dim() == 0) return reshape(x, {1});
  EMBER_CHECK(start <= end, "flatten", "start dim " << start << " must be <= end dim " << end);
  Shape shape(x.shape().begin(), x.shape().begin() + start);
  int64_t n = 1;
  for (int64_t i = start; i <= end; ++i) n *= x.shape()[i];
  shape.push_back(n);
  shape.insert(shape.end(), x.shape().begin() + end + 1, x.shape().end());
  return reshape(x, shape);
}

}  // namespace ember::kernel

namespace ember {

// A view of the same numbers, outside the graph.
Tensor Tensor::detach() const { return kernel::as_strided(*this, shape(), stride(), storage_offset()); }

}  // namespace ember
