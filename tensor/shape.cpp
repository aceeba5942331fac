#include "tensor/shape.h"

#include <sstream>

#include "base/error.h"

namespace ember {

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ")";
  return os.str();
}

std::string index_str(int64_t i, const Shape& s) {
  Shape idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  std::ostringstream os;
  os << "[";
  for (size_t d = 0; d < idx.size(); ++d) os << (d ? ", " : "") << idx[d];
  os << "]";
  return os.str();
}

int64_t checked_numel(const Shape& s, const char* op) {
  int64_t n = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    EMBER_CHECK(s[i] >= 0, op, "negative size " << s[i] << " at dim " << i << " in shape " << shape_str(s));
  }
  for (int64_t d : s) {
    if (d == 0) return 0;
  }
  for (int64_t d : s) {
    EMBER_CHECK(!__builtin_mul_overflow(n, d, &n), op,
                "shape " << shape_str(s) << " has more elements than int64 can count");
  }
  return n;
}

Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    // Only a tensor with no elements can overflow here (its sizes were
    // checked): its strides are never used to address memory.
    if (__builtin_mul_overflow(acc, std::max<int64_t>(s[i], 1), &acc)) acc = INT64_MAX;
  }
  return st;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  EMBER_CHECK(ndim > 0, op, "dim " << dim << " given, but a 0-d tensor (shape ()) has no dims");
  EMBER_CHECK(dim >= -ndim && dim < ndim, op,
              "dim " << dim << " is out of range for a tensor with " << ndim << " dims (expected [" << -ndim << ", "
                     << ndim - 1 << "])");
  return dim < 0 ? dim + ndim : dim;
}

int64_t wrap_dim_or_scalar(int64_t dim, int64_t ndim, const char* op) {
  if (ndim > 0) return wrap_dim(dim, ndim, op);
  EMBER_CHECK(dim == 0 || dim == -1, op,
              "dim " << dim << " is out of range for a 0-d tensor (shape ()): expected 0 or -1");
  return 0;
}

std::vector<bool> reduced_dims(int64_t ndim, const Shape& dims, const char* op) {
  std::vector<bool> mask(static_cast<size_t>(ndim), dims.empty());
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim_or_scalar(d, ndim, op);
    EMBER_CHECK(!seen[static_cast<size_t>(w)], op, "dim " << d << " appears twice in " << shape_str(dims));
    seen[static_cast<size_t>(w)] = true;
    if (ndim > 0) mask[static_cast<size_t>(w)] = true;
  }
  return mask;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(da == db || da == 1 || db == 1, op,
                "shapes " << shape_str(a) << " and " << shape_str(b) << " cannot be broadcast: size " << da
                          << " vs " << db << " at dim " << i << " of the broadcast shape");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Shape& shape, const Shape& strides, const Shape& target) {
  Shape out(target.size(), 0);
  size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) out[lead + i] = shape[i] == 1 ? 0 : strides[i];
  return out;
}

bool view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape, Shape& out) {
  if (numel_of(shape) == 0 || shape.empty() || new_shape.empty()) {
    out = contiguous_strides(new_shape);  // nothing (or one element) to address
    return true;
  }
  // 1. Merge the old dims into blocks that are contiguous among themselves:
  //    dim d joins the block of dim d-1 when stepping d-1 by one equals
  //    stepping d across its whole size. Size-1 dims take no part.
  struct Block {
    int64_t numel, stride;  // elements in the block, stride of its innermost dim
  };
  std::vector<Block> blocks;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!blocks.empty() && blocks.back().stride == strides[d] * shape[d]) {
      blocks.back().numel *= shape[d];
      blocks.back().stride = strides[d];
    } else {
      blocks.push_back({shape[d], strides[d]});
    }
  }
  // 2. Lay the new dims over the blocks from the innermost outwards. A new
  //    dim must fall inside one block; a block must be used up exactly
  //    before the next (outer) one starts.
  out.assign(new_shape.size(), 0);
  int64_t b = static_cast<int64_t>(blocks.size()) - 1, used = 1;
  for (int64_t d = static_cast<int64_t>(new_shape.size()) - 1; d >= 0; --d) {
    const int64_t n = new_shape[d];
    if (n == 1) {  // any stride works; keep it regular
      out[d] = b >= 0 ? blocks[b].stride * used : 1;
      continue;
    }
    if (b >= 0 && used == blocks[b].numel) {
      --b;
      used = 1;
    }
    if (b < 0) return false;
    out[d] = blocks[b].stride * used;
    used *= n;
    if (used > blocks[b].numel) return false;  // would straddle two blocks
  }
  return blocks.empty() || (b == 0 && used == blocks[0].numel);
}

Shape infer_shape(const Shape& target, int64_t numel, const Shape& from, const char* op) {
  Shape out = target;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      EMBER_CHECK(infer_at < 0, op, "only one dimension can be -1, got shape " << shape_str(target));
      infer_at = static_cast<int64_t>(i);
    } else {
      EMBER_CHECK(out[i] >= 0, op, "negative size " << out[i] << " in shape " << shape_str(target));
      known *= out[i];
    }
  }
  if (infer_at >= 0) {
    EMBER_CHECK(known != 0 && numel % known == 0, op,
                "shape " << shape_str(target) << " is invalid for input of shape " << shape_str(from) << " ("
                         << numel << " elements)");
    out[infer_at] = numel / known;
  }
  EMBER_CHECK(checked_numel(out, op) == numel, op,
              "shape " << shape_str(target) << " is invalid for input of shape " << shape_str(from) << " ("
                       << numel << " elements)");
  return out;
}

}  // namespace ember
