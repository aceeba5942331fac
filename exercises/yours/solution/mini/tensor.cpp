// Stage 2, the reference solution: one formula (position), and views that
// only compute a new (shape, strides, offset).
#include "mini/tensor.h"

#include <algorithm>
#include <string>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)"
std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t size : shape) n *= size;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t step = 1;  // the elements of the dims after this one
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= shape[d];
  }
  return strides;
}

Index unravel(int64_t k, const Shape& shape) {
  MINI_CHECK(k >= 0 && k < numel(shape), "unravel", "element " << k << " of shape " << str(shape));
  Index index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {  // the last dim counts fastest
    index[d] = k % shape[d];
    k /= shape[d];
  }
  return index;
}

Tensor::Tensor(std::vector<double> values, Shape shape)
    : storage_(std::make_shared<std::vector<double>>(std::move(values))),
      shape_(std::move(shape)),
      strides_(contiguous_strides(shape_)) {
  MINI_CHECK(static_cast<int64_t>(storage_->size()) == mini::numel(shape_), "tensor",
             storage_->size() << " values for shape " << str(shape_) << ", which has " << mini::numel(shape_));
}

int64_t Tensor::position(const Index& index) const {
  MINI_CHECK(index.size() == shape_.size(), "position",
             "an index of " << index.size() << " positions for a tensor of shape " << str(shape_));
  int64_t p = offset_;
  for (size_t d = 0; d < index.size(); ++d) {
    MINI_CHECK(index[d] >= 0 && index[d] < shape_[d], "position",
               "index " << str(index) << " is outside shape " << str(shape_) << " at dim " << d);
    p += index[d] * strides_[d];
  }
  return p;
}

double& Tensor::at(const Index& index) const { return (*storage_)[static_cast<size_t>(position(index))]; }

std::vector<double> Tensor::values() const {
  std::vector<double> out;
  for (int64_t k = 0; k < numel(); ++k) out.push_back(at(unravel(k, shape_)));
  return out;
}

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t step = 1;
  for (size_t d = shape_.size(); d-- > 0;) {
    if (shape_[d] == 1) continue;
    if (strides_[d] != step) return false;
    step *= shape_[d];
  }
  return true;
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  MINI_CHECK(d0 >= 0 && d0 < dim() && d1 >= 0 && d1 < dim(), "transpose",
             "dims " << d0 << " and " << d1 << " of a tensor of shape " << str(shape_));
  Shape shape = shape_, strides = strides_;
  std::swap(shape[d0], shape[d1]);
  std::swap(strides[d0], strides[d1]);
  return Tensor(storage_, shape, strides, offset_);
}

Tensor Tensor::permute(const Shape& dims) const {
  Shape sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int64_t>(dims.size()) == dim();
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
  MINI_CHECK(ok, "permute", str(dims) << " is not a permutation of the dims of a tensor of shape " << str(shape_));
  Shape shape, strides;
  for (int64_t d : dims) {
    shape.push_back(shape_[d]);
    strides.push_back(strides_[d]);
  }
  return Tensor(storage_, shape, strides, offset_);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t stop, int64_t step) const {
  MINI_CHECK(d >= 0 && d < dim(), "slice", "dim " << d << " of a tensor of shape " << str(shape_));
  MINI_CHECK(0 <= start && start <= stop && stop <= shape_[d] && step >= 1, "slice",
             "start " << start << ", stop " << stop << ", step " << step << " along dim " << d << " of size "
                      << shape_[d] << " (shape " << str(shape_) << ")");
  Shape shape = shape_, strides = strides_;
  shape[d] = (stop - start + step - 1) / step;  // start, start + step, ... < stop
  strides[d] *= step;
  return Tensor(storage_, shape, strides, offset_ + start * strides_[d]);
}

Tensor Tensor::expand(const Shape& shape) const {
  MINI_CHECK(shape.size() >= shape_.size(), "expand",
             "shape " << str(shape_) << " to " << str(shape) << ", which has fewer dims");
  const size_t lead = shape.size() - shape_.size();  // new dims, in front
  Shape strides(shape.size(), 0);                    // a new dim repeats: stride 0
  for (size_t d = lead; d < shape.size(); ++d) {
    const int64_t have = shape_[d - lead];
    MINI_CHECK(shape[d] == have || (have == 1 && shape[d] >= 0), "expand",
               "shape " << str(shape_) << " to " << str(shape) << ": dim " << d - lead << " of size " << have
                        << " cannot become " << shape[d] << " (only a size 1 can)");
    strides[d] = shape[d] == have ? strides_[d - lead] : 0;
  }
  for (size_t d = 0; d < lead; ++d)
    MINI_CHECK(shape[d] >= 0, "expand", "shape " << str(shape_) << " to " << str(shape) << ": negative size");
  return Tensor(storage_, shape, strides, offset_);
}

Tensor Tensor::view(const Shape& shape) const {
  MINI_CHECK(mini::numel(shape) == numel(), "view",
             "shape " << str(shape_) << " as " << str(shape) << ": " << numel() << " elements, not "
                      << mini::numel(shape));
  MINI_CHECK(is_contiguous(), "view",
             "a tensor of shape " << str(shape_) << " and strides " << str(strides_) << " as " << str(shape)
                                  << ": it is not contiguous; call contiguous() first");
  return Tensor(storage_, shape, contiguous_strides(shape), offset_);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return Tensor(values(), shape_);
}

}  // namespace mini
