/// @file
/// Shapes and strides: the arithmetic behind views and broadcasting.
///
/// A tensor's element (i0, i1, ..., in) lives at
///   storage[offset + i0*stride[0] + i1*stride[1] + ... + in*stride[n]].
/// Everything about views (transpose, expand, narrow, ...) is a change of
/// shape/strides/offset with the same storage.
#pragma once

#include "base/checked.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember {

using Shape = std::vector<int64_t>;

/// "(2, 3, 4)"; "()" for a scalar.
std::string shape_str(const Shape& s);

/// "[3, 17]": the multi-index of row-major flat position i in shape s.
std::string index_str(int64_t i, const Shape& s);

/// Product of sizes; throws ember::Error naming `op` if a size is negative or
/// the product overflows int64 (checked before anything is allocated).
int64_t checked_numel(const Shape& s, const char* op);
/// Product of sizes of an already validated shape (0 if any size is 0, even
/// when the other sizes multiply past int64).
inline int64_t numel_of(const Shape& s) {
  for (int64_t d : s)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// checked_add and checked_mul (base/checked.h): all shape, stride and offset
// arithmetic on values that come from a caller goes through them (or
// checked_numel).

/// Row-major (C-contiguous) strides for a shape.
Shape contiguous_strides(const Shape& s);

/// Wraps a possibly negative dim into [0, ndim); error naming op otherwise.
/// A 0-d tensor has no dims: every dim is an error here (the rule of every
/// op that indexes a dim: size, select, narrow, slice, index_select, ...).
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
/// The same for ops that are defined on a 0-d tensor along "its" dim (the
/// reductions, softmax, transpose, squeeze, flatten, as in PyTorch): for
/// ndim 0 it accepts 0 and -1 and returns 0, which the caller must not use
/// to index a shape.
int64_t wrap_dim_or_scalar(int64_t dim, int64_t ndim, const char* op);
/// The dims a reduction over `dims` reduces, as a mask over ndim dims (all of
/// them when dims is empty); error naming op for a dim out of range or given
/// twice. For a 0-d tensor, dims may be {0} or {-1}: the mask is empty.
std::vector<bool> reduced_dims(int64_t ndim, const Shape& dims, const char* op);

/// NumPy/PyTorch broadcasting: align from the right, sizes must match or be 1.
/// Error names op, both shapes and the offending dim.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

/// Strides that view a tensor of (shape, strides) as `target` (broadcast):
/// missing leading dims and size-1 dims get stride 0.
Shape broadcast_strides(const Shape& shape, const Shape& strides, const Shape& target);

/// Strides for viewing (shape, strides) as new_shape without copying; false
/// when the memory layout does not allow it (dims that are merged or split
/// must be contiguous with each other).
bool view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape, Shape& out);

/// Resolves a single -1 in a reshape target; error naming op and both shapes.
Shape infer_shape(const Shape& target, int64_t numel, const Shape& from, const char* op);

}  // namespace ember
