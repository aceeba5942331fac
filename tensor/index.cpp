// Indexing kernels: the embedding lookup (index_select), its adjoint
// (index_add_), gather / scatter_add and one_hot. Ids are int64 and every id
// is bounds-checked before anything is written.
#include <cstring>

#include "base/hooks.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember::kernel {


void check_ids(const Tensor& ids, int64_t n, const char* op, const char* what, const char* range) {
  EMBER_CHECK(ids.dtype() == kInt64, op,
              what << "s must be int64, got " << dtype_name(ids.dtype()) << " of shape " << shape_str(ids.shape()));
  std::vector<int64_t> v = ids.to_vector<int64_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    EMBER_CHECK(v[i] >= 0 && v[i] < n, op,
                what << " " << v[i] << " at " << index_str(static_cast<int64_t>(i), ids.shape())
                     << " is outside " << range << " [0, " << n << ") (" << what << "s of shape "
                     << shape_str(ids.shape()) << ")");
  }
}

// x:(A, N, C) viewed around dim d, ids:(I) -> (A, I, C)
Tensor index_select(const Tensor& x, int64_t d, const Tensor& ids) {
  d = wrap_dim(d, x.dim(), "index_select");
  EMBER_CHECK(ids.dim() <= 1, "index_select", "ids must be 0-D or 1-D, got shape " << shape_str(ids.shape()));
  check_ids(ids, x.shape()[d], "index_select", "id");
  Tensor xc = contiguous(x);
  Tensor idc = contiguous(ids);
  const int64_t I = ids.numel();
  Shape out_shape = x.shape();
  out_shape[d] = I;
  Tensor out = empty(out_shape, x.dtype());
  int64_t A = 1, C = 1;
  for (int64_t k = 0; k < d; ++k) A *= x.shape()[k];
  for (int64_t k = d + 1; k < x.dim(); ++k) C *= x.shape()[k];
  const int64_t N = x.shape()[d];
  const size_t row_bytes = static_cast<size_t>(C) * dtype_size(x.dtype());
  const char* src = static_cast<const char*>(xc.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  const int64_t* id = idc.data_ptr<int64_t>();
  detail::parallel_for(A * I, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(C, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t a = r / I, i = r % I;
      std::memcpy(dst + r * row_bytes, src + (a * N + id[i]) * row_bytes, row_bytes);
    }
  });
  // a row copy per id: no arithmetic; the selected rows read, the result written
  const double bytes = static_cast<double>(out.numel()) * static_cast<double>(dtype_size(x.dtype()));
  note_work(0, bytes + 8.0 * static_cast<double>(I), bytes);
  if (ids.dim() == 0) return squeeze(out, d);
  return out;
}

// x.narrow(d, ids[i], 1) += src.narrow(d, i, 1). Runs serially over i so that
// repeated ids accumulate in a fixed order (deterministic).
void index_add_(const Tensor& x, int64_t d, const Tensor& ids, const Tensor& src) {
  d = wrap_dim(d, x.dim(), "index_add_");
  EMBER_CHECK(ids.dim() <= 1, "index_add_", "ids must be 0-D or 1-D, got shape " << shape_str(ids.shape()));
  EMBER_CHECK(x.dtype() == src.dtype(), "index_add_",
              "dtype mismatch: destination " << dtype_name(x.dtype()) << " vs source " << dtype_name(src.dtype()));
  Shape expect = x.shape();
  expect[d] = ids.numel();
  Tensor s = ids.dim() == 0 ? unsqueeze(src, d) : src;
  EMBER_CHECK(s.shape() == expect, "index_add_",
              "source has shape " << shape_str(src.shape()) << " but expected " << shape_str(expect)
                                  << " for destination " << shape_str(x.shape()) << " and " << ids.numel() << " ids");
  check_ids(ids, x.shape()[d], "index_add_", "id");
  check_no_internal_overlap(x, "index_add_");
  check_no_overlap(x, src, "index_add_", "source", /*allow_same=*/false);
  check_no_overlap(x, ids, "index_add_", "ids", /*allow_same=*/false);
  // Rows along dim 0 whose inner elements are each one value repeated
  // (stride 0, as a sum's gradient is) are read in place; other sources are
  // made contiguous.
  bool repeated_rows = d == 0 && s.dim() >= 1;
  for (int64_t k = 1; k < s.dim() && repeated_rows; ++k) repeated_rows = s.stride()[k] == 0 || s.shape()[k] == 1;
  Tensor sc = repeated_rows ? s : contiguous(s);
  Tensor idc = contiguous(ids);
  const int64_t* id = idc.data_ptr<int64_t>();
  const int64_t I = ids.numel();
  EMBER_DISPATCH_NUMERIC(x.dtype(), "index_add_", [&]<typename T>() {
    if (x.is_contiguous()) {
      int64_t A = 1, C = 1;
      for (int64_t k = 0; k < d; ++k) A *= x.shape()[k];
      for (int64_t k = d + 1; k < x.dim(); ++k) C *= x.shape()[k];
      const int64_t N = x.shape()[d];
      T* px = x.data_ptr<T>();
      const T* ps = sc.data_ptr<T>();
      const int64_t row_stride = repeated_rows ? sc.stride()[0] : C;
      // Each thread owns a range of columns c, so every destination element
      // has one writer and receives the ids' rows in order (deterministic);
      // the inner loop is a plain contiguous row add.
      detail::parallel_for(C, std::max<int64_t>(16, detail::kGrain / std::max<int64_t>(A * I, 1)), [&](int64_t c0, int64_t c1) {
        for (int64_t a = 0; a < A; ++a) {
          for (int64_t i = 0; i < I; ++i) {
            T* dst = px + (a * N + id[i]) * C;
            const T* src = ps + (a * I + i) * row_stride;
            if (repeated_rows) {
              const T v = *src;
              for (int64_t c = c0; c < c1; ++c) dst[c] += v;
            } else {
              for (int64_t c = c0; c < c1; ++c) dst[c] += src[c];
            }
          }
        }
      });
    } else {
      for (int64_t i = 0; i < I; ++i) {
        Tensor dst = select(x, d, id[i]);
        detail::apply_inplace<T, T>(dst, select(sc, d, i), [](T a, T b) { return a + b; });
      }
    }
  });
  // one add per source element; the source and the rows it lands on read, those rows written
  const double bytes = static_cast<double>(s.numel()) * static_cast<double>(dtype_size(x.dtype()));
  note_work(static_cast<double>(s.numel()), 2 * bytes + 8.0 * static_cast<double>(I), bytes);
  x.storage()->bump_version();
}

}  // namespace ember::kernel

namespace ember {
// (declared in tensor/tensor.h; here, where the kernels it runs are)
bool grad_is_shared(const Tensor& grad) {
  // (also: one memory location for several elements, as set_grad of an
  // expanded tensor makes: adding into it in place would pile them up)
  return grad.defined() && (grad.requires_grad() || grad.impl_ptr().use_count() > 1 ||
                            grad.storage().use_count() > 1 || kernel::may_overlap_itself(grad));
}

void densify_row_grad(TensorImpl& t) {
  if (t.row_grad.empty()) return;
  Tensor g = !t.grad.defined()       ? zeros(t.shape, t.dtype)
             : grad_is_shared(t.grad) ? kernel::to(t.grad.detach(), t.dtype)
                                      : t.grad;
  for (const RowGrad& r : t.row_grad) kernel::index_add_(g, 0, r.ids, r.rows);
  t.grad = g;
  t.row_grad.clear();
}
}  // namespace ember

namespace ember::kernel {

RowGrad coalesce_rows(const Tensor& ids, const Tensor& rows, int64_t n, std::optional<int64_t> skip) {
  EMBER_CHECK(ids.dim() == 1 && rows.dim() >= 1 && rows.size(0) == ids.numel(), "coalesce_rows",
              "ids " << shape_str(ids.shape()) << " and rows " << shape_str(rows.shape())
                     << " must be (N) and (N, ...)");
  check_ids(ids, n, "coalesce_rows", "id");
  const Tensor idc = contiguous(ids);
  const int64_t* id = idc.data_ptr<int64_t>();
  std::vector<int64_t> slot(static_cast<size_t>(n), -1), distinct, to, kept;
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (skip && id[i] == *skip) continue;
    int64_t& s = slot[static_cast<size_t>(id[i])];
    if (s < 0) {
      s = static_cast<int64_t>(distinct.size());
      distinct.push_back(id[i]);
    }
    to.push_back(s);
    kept.push_back(i);
  }
  Shape shape = rows.shape();
  shape[0] = static_cast<int64_t>(distinct.size());
  Tensor sums = zeros(shape, rows.dtype());
  const bool all = static_cast<int64_t>(kept.size()) == ids.numel();
  index_add_(sums, 0, tensor(to), all ? rows : index_select(rows, 0, tensor(kept)));
  return {tensor(distinct), sums};
}

RowGrad coalesce_rows(const std::vector<RowGrad>& chunks, int64_t n) {
  EMBER_CHECK(!chunks.empty(), "coalesce_rows", "no chunks of rows");
  if (chunks.size() == 1) return chunks[0];
  std::vector<Tensor> ids, rows;
  for (const RowGrad& c : chunks) {
    ids.push_back(c.ids);
    rows.push_back(c.rows);
  }
  return coalesce_rows(cat(ids, 0), cat(rows, 0), n);
}

Tensor gather(const Tensor& x, int64_t d, const Tensor& ids) {
  d = wrap_dim(d, x.dim(), "gather");
  EMBER_CHECK(ids.dim() == x.dim(), "gather",
              "ids must have as many dims as the input: ids " << shape_str(ids.shape()) << " vs input "
                                                              << shape_str(x.shape()));
  for (int64_t k = 0; k < x.dim(); ++k) {
    EMBER_CHECK(k == d || ids.shape()[k] <= x.shape()[k], "gather",
                "ids of shape " << shape_str(ids.shape()) << " exceed the input shape " << shape_str(x.shape())
                                << " at dim " << k);
  }
  check_ids(ids, x.shape()[d], "gather", "id");
  Tensor out = empty(ids.shape(), x.dtype());
  Tensor idc = contiguous(ids);
  const int64_t* id = idc.data_ptr<int64_t>();
  EMBER_DISPATCH_ALL(x.dtype(), "gather", [&]<typename T>() {
    T* o = out.data_ptr<T>();
    const T* px = static_cast<const T*>(x.raw_data());
    const int64_t nd = x.dim();
    Shape idx(nd, 0);
    for (int64_t i = 0; i < out.numel(); ++i) {
      int64_t off = 0;
      for (int64_t k = 0; k < nd; ++k) off += (k == d ? id[i] : idx[k]) * x.stride()[k];
      o[i] = px[off];
      for (int64_t k = nd - 1; k >= 0; --k) {
        if (++idx[k] < ids.shape()[k]) break;
        idx[k] = 0;
      }
    }
  });
  return out;
}

Tensor scatter_add(const Shape& shape, int64_t d, const Tensor& ids, const Tensor& src) {
  d = wrap_dim(d, static_cast<int64_t>(shape.size()), "scatter_add");
  EMBER_CHECK(ids.shape() == src.shape(), "scatter_add",
              "ids " << shape_str(ids.shape()) << " and source " << shape_str(src.shape()) << " must have the same shape");
  check_ids(ids, shape[d], "scatter_add", "id");
  Tensor out = zeros(shape, src.dtype());
  Tensor idc = contiguous(ids), sc = contiguous(src);
  const int64_t* id = idc.data_ptr<int64_t>();
  const Shape ostr = out.stride();
  EMBER_DISPATCH_NUMERIC(src.dtype(), "scatter_add", [&]<typename T>() {
    T* o = out.data_ptr<T>();
    const T* s = sc.data_ptr<T>();
    const int64_t nd = static_cast<int64_t>(shape.size());
    Shape idx(nd, 0);
    for (int64_t i = 0; i < sc.numel(); ++i) {
      int64_t off = 0;
      for (int64_t k = 0; k < nd; ++k) off += (k == d ? id[i] : idx[k]) * ostr[k];
      o[off] += s[i];
      for (int64_t k = nd - 1; k >= 0; --k) {
        if (++idx[k] < ids.shape()[k]) break;
        idx[k] = 0;
      }
    }
  });
  return out;
}

Tensor one_hot(const Tensor& ids, int64_t num_classes) {
  EMBER_CHECK(ids.dtype() == kInt64, "one_hot",
              "ids must be int64, got " << dtype_name(ids.dtype()) << " of shape " << shape_str(ids.shape()));
  EMBER_CHECK(num_classes >= -1, "one_hot",
              "num_classes must be >= 0, or -1 to infer it from the largest id, got " << num_classes);
  std::vector<int64_t> v = ids.to_vector<int64_t>();
  if (num_classes == -1) {
    EMBER_CHECK(!v.empty(), "one_hot", "cannot infer num_classes from empty ids; pass it explicitly");
    const int64_t largest = *std::max_element(v.begin(), v.end());
    EMBER_CHECK(largest >= 0, "one_hot",
                "cannot infer num_classes: the largest id is " << largest << " (ids of shape " << shape_str(ids.shape())
                                                               << "); ids are in [0, num_classes)");
    num_classes = checked_add(largest, 1, "one_hot", "the class count (the largest id + 1)");
  }
  check_ids(ids, num_classes, "one_hot", "id");
  Shape shape = ids.shape();
  shape.push_back(num_classes);
  Tensor out = empty(shape, kInt64, "one_hot");  // checks that the shape and its bytes fit
  fill_(out, 0.0);
  int64_t* o = out.data_ptr<int64_t>();
  for (size_t i = 0; i < v.size(); ++i) o[static_cast<int64_t>(i) * num_classes + v[i]] = 1;
  return out;
}

}  // namespace ember::kernel
