// Views: every function here returns a tensor that shares x's storage and
// differs only in (shape, strides, offset). Nothing is copied, except by
// reshape when the strides make a view impossible.
#include <algorithm>

#include "tensor/kernels.h"

namespace ember::kernel {

Tensor as_strided(const Tensor& x, const Shape& shape, const Shape& strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.storage();
  impl->offset = offset;
  impl->shape = shape;
  impl->strides = strides;
  impl->dtype = x.dtype();
  return Tensor(std::move(impl));
}

Tensor view(const Tensor& x, const Shape& shape_in) {
  Shape shape = infer_shape(shape_in, x.numel(), x.shape(), "view");
  Shape strides;
  EMBER_CHECK(view_strides(x.shape(), x.stride(), shape, strides), "view",
              "cannot view a tensor of shape " << shape_str(x.shape()) << " and strides " << shape_str(x.stride())
                                               << " as " << shape_str(shape)
                                               << ": the memory is not contiguous enough; use reshape() (copies)");
  return as_strided(x, shape, strides, x.storage_offset());
}

Tensor reshape(const Tensor& x, const Shape& shape_in) {
  Shape shape = infer_shape(shape_in, x.numel(), x.shape(), "reshape");
  Shape strides;
  if (view_strides(x.shape(), x.stride(), shape, strides)) return as_strided(x, shape, strides, x.storage_offset());
  Tensor c = contiguous(x);
  return as_strided(c, shape, contiguous_strides(shape), c.storage_offset());
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  d0 = wrap_dim(d0, x.dim(), "transpose");
  d1 = wrap_dim(d1, x.dim(), "transpose");
  Shape shape = x.shape(), strides = x.stride();
  if (x.dim() == 0) return as_strided(x, shape, strides, x.storage_offset());
  std::swap(shape[d0], shape[d1]);
  std::swap(strides[d0], strides[d1]);
  return as_strided(x, shape, strides, x.storage_offset());
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
  return as_strided(x, shape, strides, x.storage_offset());
}

Tensor unsqueeze(const Tensor& x, int64_t d) {
  d = wrap_dim(d, x.dim() + 1, "unsqueeze");
  Shape shape = x.shape(), strides = x.stride();
  int64_t st = d < x.dim() ? shape[d] * strides[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  return as_strided(x, shape, strides, x.storage_offset());
}

Tensor squeeze(const Tensor& x, std::optional<int64_t> d) {
  Shape shape, strides;
  int64_t only = d ? wrap_dim(*d, x.dim(), "squeeze") : -1;
  for (int64_t i = 0; i < x.dim(); ++i) {
    bool drop = x.shape()[i] == 1 && (only < 0 || i == only);
    if (!drop) {
      shape.push_back(x.shape()[i]);
      strides.push_back(x.stride()[i]);
    }
  }
  return as_strided(x, shape, strides, x.storage_offset());
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
  return as_strided(x, shape, strides, x.storage_offset());
}

Tensor slice(const Tensor& x, int64_t d, int64_t start, int64_t end, int64_t step) {
  d = wrap_dim(d, x.dim(), "slice");
  EMBER_CHECK(step > 0, "slice", "step must be positive, got " << step);
  int64_t n = x.shape()[d];
  // Python-style clamping of start/end, negative values count from the end.
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape shape = x.shape(), strides = x.stride();
  shape[d] = (end - start + step - 1) / step;
  strides[d] *= step;
  return as_strided(x, shape, strides, x.storage_offset() + start * x.stride()[d]);
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
  return as_strided(x, shape, strides, x.storage_offset() + index * x.stride()[d]);
}

Tensor flatten(const Tensor& x, int64_t start, int64_t end) {
  if (x.dim() == 0) return reshape(x, {1});
  start = wrap_dim(start, x.dim(), "flatten");
  end = wrap_dim(end, x.dim(), "flatten");
  EMBER_CHECK(start <= end, "flatten", "start dim " << start << " must be <= end dim " << end);
  Shape shape(x.shape().begin(), x.shape().begin() + start);
  int64_t n = 1;
  for (int64_t i = start; i <= end; ++i) n *= x.shape()[i];
  shape.push_back(n);
  shape.insert(shape.end(), x.shape().begin() + end + 1, x.shape().end());
  return reshape(x, shape);
}

}  // namespace ember::kernel
