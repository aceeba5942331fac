#include "tensor/tensor.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <new>
#include <sstream>


namespace ember {

void Tensor::undefined_error(const char* op) {
  EMBER_FAIL(op, "the tensor is undefined (a default-constructed Tensor, e.g. grad() before any backward)");
}

// ---- metadata ----
DType Tensor::dtype() const { return get("dtype").dtype; }
const Shape& Tensor::shape() const { return get("shape").shape; }
const Shape& Tensor::stride() const { return get("stride").strides; }
int64_t Tensor::dim() const { return static_cast<int64_t>(get("dim").shape.size()); }
int64_t Tensor::size(int64_t d) const { return get("size").shape[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::numel() const { return numel_of(get("numel").shape); }
int64_t Tensor::storage_offset() const { return get("storage_offset").offset; }
const std::shared_ptr<Storage>& Tensor::storage() const { return get("storage").storage; }
uint64_t Tensor::version() const { return get("version").storage->version(); }
void* Tensor::raw_data() const {
  const TensorImpl& t = get("data_ptr");
  return static_cast<char*>(t.storage->data()) + t.offset * static_cast<int64_t>(dtype_size(t.dtype));
}

bool Tensor::is_contiguous() const {
  get("is_contiguous");
  if (numel_of(impl_->shape) == 0) return true;  // nothing to lay out (and the sizes may multiply past int64)
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (impl_->shape[d] == 1) continue;
    if (impl_->strides[d] != expected) return false;
    expected *= impl_->shape[d];
  }
  return true;
}

Tensor empty(const Shape& shape, DType dtype, const char* op) {
  int64_t n = checked_numel(shape, op);
  size_t esize = dtype_size(dtype);
  EMBER_CHECK(n <= static_cast<int64_t>(INT64_MAX / static_cast<int64_t>(esize)), op,
              "shape " << shape_str(shape) << " of " << dtype_name(dtype) << " needs more bytes than fit in int64");
  auto impl = std::make_shared<TensorImpl>();
  const size_t nbytes = static_cast<size_t>(n) * esize;
  try {
    impl->storage = std::make_shared<Storage>(nbytes);
  } catch (const std::bad_alloc&) {
    EMBER_FAIL(op, "out of memory: a " << dtype_name(dtype) << " tensor of shape " << shape_str(shape) << " needs "
                                       << nbytes << " bytes (" << static_cast<double>(nbytes) / (1 << 30) << " GiB)");
  }
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

// ---- reading values ----
thread_local detail::ValueReadWatcher* detail::value_read_watcher = nullptr;

template <typename T>
T Tensor::item() const {
  EMBER_CHECK(defined(), "item", "tensor is undefined");
  if (detail::value_read_watcher) [[unlikely]] detail::value_read_watcher->reading_values(*this, "item");
  EMBER_CHECK(numel() == 1, "item",
              "only a tensor with one element can be converted to a scalar, got shape " << shape_str(shape()));
  return EMBER_DISPATCH_STORAGE(dtype(), "item", [&]<typename S>() { return static_cast<T>(*static_cast<S*>(raw_data())); });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  EMBER_CHECK(defined(), "to_vector", "tensor is undefined");
  if (detail::value_read_watcher) [[unlikely]] detail::value_read_watcher->reading_values(*this, "to_vector");
  std::vector<T> out(static_cast<size_t>(numel()));
  if (out.empty()) return out;
  EMBER_DISPATCH_STORAGE(dtype(), "to_vector", [&]<typename S>() {
    const char* base = static_cast<const char*>(raw_data());
    const int64_t nd = dim();
    Shape idx(nd, 0);
    for (size_t i = 0; i < out.size(); ++i) {
      int64_t off = 0;
      for (int64_t d = 0; d < nd; ++d) off += idx[d] * impl_->strides[d];
      out[i] = static_cast<T>(*reinterpret_cast<const S*>(base + off * static_cast<int64_t>(sizeof(S))));
      for (int64_t d = nd - 1; d >= 0; --d) {
        if (++idx[d] < impl_->shape[d]) break;
        idx[d] = 0;
      }
    }
  });
  return out;
}

#define EMBER_INSTANTIATE_READ(T)                     \
  template T Tensor::item<T>() const;                 \
  template std::vector<T> Tensor::to_vector<T>() const;
EMBER_INSTANTIATE_READ(float)
EMBER_INSTANTIATE_READ(double)
EMBER_INSTANTIATE_READ(int64_t)
EMBER_INSTANTIATE_READ(bool)
EMBER_INSTANTIATE_READ(int)
#undef EMBER_INSTANTIATE_READ

// ---- printing, in PyTorch's style ----
namespace {

std::string format_float(double v, int precision, bool sci) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  if (sci) os << std::scientific << std::setprecision(precision) << v;
  else os << std::fixed << std::setprecision(precision) << v;
  return os.str();
}

}  // namespace

// "tensor([...], shape=(...)[, dtype=...]" without the closing parenthesis:
// Tensor::to_string (autograd/tensor_methods.cpp) adds the autograd part.
std::string format_values(const Tensor& x) {
  const DType dt = x.dtype();
  // Every element as text first (integers exactly, never through double),
  // then one column width for all.
  std::vector<std::string> text;
  if (dt == kInt64) {
    for (int64_t v : x.to_vector<int64_t>()) text.push_back(std::to_string(v));
  } else if (dt == kBool) {
    for (bool v : x.to_vector<bool>()) text.push_back(v ? "True" : "False");
  } else {
    std::vector<double> vals = x.to_vector<double>();
    // Scientific notation when the magnitudes span too much to show in fixed.
    double max_abs = 0, min_abs = INFINITY;
    for (double v : vals) {
      if (std::isfinite(v) && v != 0) {
        max_abs = std::max(max_abs, std::abs(v));
        min_abs = std::min(min_abs, std::abs(v));
      }
    }
    // Whole numbers (arange, counts, ones) print as "3." like PyTorch, not
    // as "3.0000": the decimals would suggest a precision that is not there.
    bool whole = true;
    for (double v : vals) whole = whole && (!std::isfinite(v) || v == std::trunc(v));
    if (whole && max_abs < 1e8) {
      for (double v : vals) text.push_back(std::isfinite(v) ? format_float(v, 0, false) + "." : format_float(v, 0, false));
    } else {
      const bool sci = max_abs > 0 && (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1e5);
      for (double v : vals) text.push_back(format_float(v, 4, sci));
    }
  }
  size_t width = 0;
  for (const std::string& t : text) width = std::max(width, t.size());

  const int64_t nd = x.dim();
  const bool summarize = x.numel() > 1000;
  const int64_t edge = 3;
  std::ostringstream os;
  os << "tensor(";
  std::string indent = "       ";
  // Recursive print over dims (depth is the tensor's rank, small).
  std::function<void(int64_t, int64_t)> rec = [&](int64_t d, int64_t flat) {
    if (d == nd) {
      os << std::string(width - text[flat].size(), ' ') << text[flat];
      return;
    }
    int64_t n = x.shape()[d];
    int64_t inner = 1;
    for (int64_t k = d + 1; k < nd; ++k) inner *= x.shape()[k];
    os << "[";
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * edge && i == edge) {
        os << (d == nd - 1 ? "..., " : "...,\n" + indent + std::string(d + 1, ' '));
        i = n - edge;
      }
      rec(d + 1, flat + i * inner);
      if (i + 1 < n) {
        if (d == nd - 1) os << ", ";
        else os << "," << std::string(nd - d - 1, '\n') << indent << std::string(d + 1, ' ');
      }
    }
    os << "]";
  };
  if (nd == 0) {
    os << text[0];
  } else {
    rec(0, 0);
  }
  os << ", shape=" << shape_str(x.shape());
  if (dt != kFloat32) os << ", dtype=" << dtype_name(dt);
  return os.str();
}

// ---- autograd fields ----
bool Tensor::requires_grad() const { return get("requires_grad").requires_grad; }
Tensor& Tensor::requires_grad_(bool on) {
  get("requires_grad_");
  EMBER_CHECK(!on || is_floating(dtype()), "requires_grad_",
              "only floating tensors can require grad, got a " << dtype_name(dtype()) << " tensor of shape "
                                                               << shape_str(shape()));
  EMBER_CHECK(on || is_leaf(), "requires_grad_",
              "can only turn off requires_grad on a leaf; use detach() on a non-leaf of shape " << shape_str(shape()));
  impl_->requires_grad = on;
  return *this;
}
Tensor Tensor::grad() const {
  const TensorImpl& t = get("grad");
  if (t.grad_fn && !t.grad.defined()) {
    // As PyTorch does: the first time only, say why a non-leaf has no grad.
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
      std::fprintf(stderr,
                   "ember warning: reading .grad() of a non-leaf tensor of shape %s: backward() fills .grad only for "
                   "leaves, so it is undefined. Call retain_grad() on it before backward() to keep its gradient. "
                   "(printed once)\n",
                   shape_str(t.shape).c_str());
  }
  if (!t.row_grad.empty()) densify_row_grad(const_cast<TensorImpl&>(t));
  return t.grad;
}
const std::vector<RowGrad>& Tensor::row_grad() const { return get("row_grad").row_grad; }

void Tensor::set_grad(const Tensor& g) const {
  get("set_grad");
  if (g.defined()) {
    EMBER_CHECK(g.shape() == shape() && g.dtype() == dtype(), "set_grad",
                "grad has shape " << shape_str(g.shape()) << " " << dtype_name(g.dtype()) << " but the tensor is "
                                  << shape_str(shape()) << " " << dtype_name(dtype()));
  }
  impl_->grad = g;
  impl_->row_grad.clear();
}
const std::shared_ptr<Node>& Tensor::grad_fn() const { return get("grad_fn").grad_fn; }
std::string Tensor::name() const { return get("name").name; }
Tensor& Tensor::set_name(const std::string& n) {
  get("set_name").name = n;
  return *this;
}

}  // namespace ember
