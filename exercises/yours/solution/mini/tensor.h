// Stage 2 of your framework: a strided tensor
// (docs/book/build_your_own/02_strided.md).
//
// A Tensor is a view of a flat storage of numbers: its shape says how many
// indices it has and their ranges; its strides say how far in the storage one
// step along each dim moves (in elements); its offset where element
// [0, 0, ...] lives. Element [i, j, k] is storage[offset + i*s0 + j*s1 + k*s2].
// Transposing, permuting, slicing, expanding and viewing change only
// (shape, strides, offset): they copy nothing and share the storage, so a
// write through one is seen through the other.
//
//   mini::Tensor x({0, 1, 2, 3, 4, 5}, {2, 3});  // [[0, 1, 2], [3, 4, 5]]
//   mini::Tensor t = x.transpose(0, 1);          // shape (3, 2), strides (1, 3)
//   t.at({2, 1}) = 50;                           // x.at({1, 2}) is 50 now
//
// Dims are counted from 0 (no negative dims in mini). What a caller gets
// wrong (a dim or an index out of range, a shape that does not fit) is
// refused with a mini::Error (MINI_CHECK, mini/error.h) that names the op and
// the values it was given, a shape written as (2, 3).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace mini {

using Shape = std::vector<int64_t>;  // a size per dim, outermost first; () is a single number
using Index = std::vector<int64_t>;  // a position per dim

/// The number of elements of a tensor of this shape (1 for the shape ()).
int64_t numel(const Shape& shape);
/// The strides of a tensor of this shape laid out row-major: the last dim
/// steps by 1, each dim before it by the number of elements after it.
Shape contiguous_strides(const Shape& shape);
/// The k-th index of `shape` in row-major order (the last dim counts
/// fastest): unravel(4, (2, 3)) is [1, 1]. k must be in [0, numel(shape)).
Index unravel(int64_t k, const Shape& shape);

class Tensor {
 public:
  /// A new tensor of `shape`, holding `values` in row-major order, in a
  /// storage of its own (values.size() must be numel(shape)).
  Tensor(std::vector<double> values, Shape shape);
  /// A view: `storage` seen with this shape, these strides and this offset.
  Tensor(std::shared_ptr<std::vector<double>> storage, Shape shape, Shape strides, int64_t offset)
      : storage_(std::move(storage)), shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset) {}

  const std::shared_ptr<std::vector<double>>& storage() const { return storage_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }  // in elements
  int64_t offset() const { return offset_; }         // in elements
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return mini::numel(shape_); }

  /// Where element `index` lives in the storage. Refuses an index that does
  /// not fit the shape (a wrong number of positions, one out of range).
  int64_t position(const Index& index) const;
  /// The element at `index`, to read or to write. (A Tensor is a handle, like
  /// a shared_ptr: a const one still reaches numbers you may write.)
  double& at(const Index& index) const;
  /// Every element, in row-major order of its index.
  std::vector<double> values() const;
  /// Whether the elements, in row-major order of their index, lie one after
  /// another in the storage. A dim of size 1 never steps, so its stride does
  /// not matter; a tensor with no elements is contiguous.
  bool is_contiguous() const;

  // ---- views: a new (shape, strides, offset) on the same storage ----
  /// Dims d0 and d1 swapped.
  Tensor transpose(int64_t d0, int64_t d1) const;
  /// Dim i of the result is dim dims[i] of this tensor (dims: a permutation of 0 ... dim()-1).
  Tensor permute(const Shape& dims) const;
  /// Along `d`, the positions start, start + step, ... before stop
  /// (0 <= start <= stop <= size, step >= 1).
  Tensor slice(int64_t d, int64_t start, int64_t stop, int64_t step = 1) const;
  /// This tensor repeated along dims of size 1 (and along new leading dims)
  /// to `shape`, with no copy: every other size must stay what it is.
  Tensor expand(const Shape& shape) const;
  /// The same elements, in the same row-major order, with another shape of
  /// as many elements. Only a contiguous tensor can be viewed so; any other
  /// is refused (call contiguous() first).
  Tensor view(const Shape& shape) const;

  // ---- a copy ----
  /// A contiguous tensor with these elements: this one if it is contiguous,
  /// else a copy into a new storage, in row-major order of the index.
  Tensor contiguous() const;

 private:
  std::shared_ptr<std::vector<double>> storage_;
  Shape shape_, strides_;
  int64_t offset_ = 0;
};

}  // namespace mini
