// Copies: the functions that move numbers into new or existing memory —
// copy_ (with broadcasting and dtype conversion), fill_, contiguous, to, and
// cat, which copies each piece into its slice of the result.
#include <cstring>

#include "tensor/elementwise.h"
#include "tensor/kernels.h"

namespace ember::kernel {

namespace {
// memmove, in threads when the two ranges are apart and large enough to pay.
void copy_bytes(void* dst, const void* src, size_t n) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (d == s) return;
  const bool apart = d + n <= s || s + n <= d;
  const int64_t pieces = static_cast<int64_t>(n / (4 * detail::kGrain));  // a piece: at least 128 KiB
  if (!apart || pieces < 2) {
    std::memmove(d, s, n);
    return;
  }
  detail::parallel_for(pieces, 1, [&](int64_t p0, int64_t p1) {
    const size_t b = n * static_cast<size_t>(p0) / static_cast<size_t>(pieces),
                 e = n * static_cast<size_t>(p1) / static_cast<size_t>(pieces);
    std::memcpy(d + b, s + b, e - b);
  });
}

// int8 holds [-128, 127]: a value outside (or a NaN) is refused before
// anything is written, where a cast would wrap it (or be undefined).
template <typename S>
void check_fits_int8(const Tensor& src, const char* op) {
  if constexpr (!std::is_same_v<S, int8_t> && !std::is_same_v<S, bool>) {
    const Tensor c = contiguous(src);
    const S* p = c.data_ptr<S>();
    for (int64_t i = 0; i < c.numel(); ++i) {
      const double v = static_cast<double>(p[i]);
      EMBER_CHECK(v >= -128.0 && v <= 127.0, op,
                  "the value " << v << " at element " << i << " of a " << dtype_name(src.dtype()) << " tensor of shape "
                               << shape_str(src.shape()) << " does not fit int8 [-128, 127]");
    }
  }
}
}  // namespace

void copy_(const Tensor& dst, const Tensor& src, const char* op) {
  // Error before writing: src must broadcast to dst exactly.
  Shape b = broadcast_shapes(dst.shape(), src.shape(), op);
  EMBER_CHECK(b == dst.shape(), op,
              "source of shape " << shape_str(src.shape()) << " cannot be broadcast to destination "
                                 << shape_str(dst.shape()));
  if (dst.dtype() == kInt8) EMBER_DISPATCH_STORAGE(src.dtype(), op, [&]<typename S>() { check_fits_int8<S>(src, op); });
  EMBER_DISPATCH_STORAGE(dst.dtype(), op, [&]<typename D>() {
    EMBER_DISPATCH_STORAGE(src.dtype(), op, [&]<typename S>() {
      if (std::is_same_v<D, S> && dst.is_contiguous() && src.is_contiguous() && src.shape() == dst.shape()) {
        copy_bytes(dst.raw_data(), src.raw_data(), static_cast<size_t>(dst.numel()) * sizeof(D));
        detail::note_elementwise(dst, {&src}, /*computes=*/false);
      } else {
        detail::assign<D, S>(dst, src, [](S s) { return static_cast<D>(s); });
      }
    });
  });
  dst.storage()->bump_version();
}

void fill_(const Tensor& dst, double value) {
  EMBER_CHECK(dst.dtype() != kInt8 || (value >= -128.0 && value <= 127.0), "fill_",
              "the value " << value << " does not fit int8 [-128, 127] (tensor of shape " << shape_str(dst.shape()) << ")");
  EMBER_DISPATCH_STORAGE(dst.dtype(), "fill_", [&]<typename T>() {
    T v = static_cast<T>(value);
    if (dst.is_contiguous()) {
      T* p = dst.data_ptr<T>();
      detail::parallel_for(dst.numel(), 4 * detail::kGrain, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, v); });
      detail::note_elementwise(dst, {}, /*computes=*/false);
    } else {
      Tensor src = empty({}, dst.dtype());  // the value as a 0-d tensor, broadcast
      *src.data_ptr<T>() = v;
      detail::assign<T, T>(dst, src, [](T s) { return s; });
    }
  });
  dst.storage()->bump_version();
}

Tensor contiguous(const Tensor& x) {
  if (x.is_contiguous()) return x;
  Tensor out = empty(x.shape(), x.dtype());
  copy_(out, x);
  return out;
}

Tensor to(const Tensor& x, DType dt) {
  Tensor out = empty(x.shape(), dt);
  copy_(out, x, "to");
  return out;
}

// ---- joining ----

Tensor cat(const std::vector<Tensor>& xs, int64_t d) {
  EMBER_CHECK(!xs.empty(), "cat", "expected a non-empty list of tensors");
  const Tensor& ref = xs[0];
  EMBER_CHECK(ref.dim() > 0, "cat", "zero-dimensional tensor cannot be concatenated");
  d = wrap_dim(d, ref.dim(), "cat");
  Shape shape = ref.shape();
  shape[d] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    EMBER_CHECK(x.dtype() == ref.dtype(), "cat",
                "tensor " << i << " is " << dtype_name(x.dtype()) << " but tensor 0 is " << dtype_name(ref.dtype()));
    bool ok = x.dim() == ref.dim();
    for (int64_t k = 0; ok && k < ref.dim(); ++k) ok = k == d || x.shape()[k] == ref.shape()[k];
    EMBER_CHECK(ok, "cat",
                "tensor " << i << " has shape " << shape_str(x.shape()) << " but tensor 0 has shape "
                          << shape_str(ref.shape()) << "; all dims except dim " << d << " must match");
    shape[d] = checked_add(shape[d], x.shape()[d], "cat", "the size of the joined dim");
  }
  Tensor out = empty(shape, ref.dtype());
  int64_t at = 0;
  for (const Tensor& x : xs) {
    copy_(slice(out, d, at, at + x.shape()[d], 1), x, "cat");
    at += x.shape()[d];
  }
  return out;
}

}  // namespace ember::kernel

namespace ember {

bool equal_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor ca = kernel::contiguous(a), cb = kernel::contiguous(b);
  return std::memcmp(ca.raw_data(), cb.raw_data(), static_cast<size_t>(a.numel()) * dtype_size(a.dtype())) == 0;
}

}  // namespace ember
