// Elementwise kernels: each op is a lambda handed to the engine in
// tensor/elementwise.h.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "tensor/elementwise.h"
#include "tensor/fast_math.h"
#include "tensor/kernels.h"

namespace ember::kernel {

using detail::map1;
using detail::map2;
using detail::map3;

const char* unary_name(Unary op) {
  static const char* names[] = {"neg", "exp", "log", "sqrt", "rsqrt", "abs", "sin",
                                "cos", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "sign", "erf"};
  return names[static_cast<int>(op)];
}

const char* binary_name(Binary op) {
  static const char* names[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum"};
  return names[static_cast<int>(op)];
}

namespace {

template <typename T>
[[gnu::always_inline]] inline T gelu_tanh(T x) {
  const T k = static_cast<T>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);  // sqrt(2/pi)
  return static_cast<T>(0.5) * x * (static_cast<T>(1) + std::tanh(k * (x + static_cast<T>(0.044715) * x * x * x)));
}
// out = f(in, out, n) over contiguous pieces of at most kVecBlock elements:
// for the ops whose cost is exp or erf, which go a whole array at a time
// (SIMD, tensor/fast_math.h). A strided input is copied first.
template <typename T, typename F>
Tensor map1_blocks(const Tensor& a, const F& f) {
  const Tensor src = contiguous(a);
  Tensor out = empty(a.shape(), a.dtype());
  detail::note_elementwise(out, {&a});
  const T* pa = src.data_ptr<T>();
  T* po = out.data_ptr<T>();
  detail::parallel_for(src.numel(), detail::kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i += detail::kVecBlock) f(pa + i, po + i, std::min(detail::kVecBlock, e - i));
  });
  return out;
}

constexpr double kSqrtHalf = std::numbers::sqrt2 / 2;

// gelu(x) = x/2 (1 + erf(x / sqrt 2))
template <typename T>
void gelu_block(const T* x, T* y, int64_t n) {
  detail::erf_scaled(x, T(kSqrtHalf), y, n);
  for (int64_t k = 0; k < n; ++k) y[k] = T(0.5) * x[k] * (T(1) + y[k]);
}

// sigmoid(x) = 1 / (1 + e^-x), from e = exp(-|x|), which never overflows
template <typename T>
void sigmoid_block(const T* x, T* y, int64_t n) {
  for (int64_t k = 0; k < n; ++k) y[k] = x[k] >= 0 ? -x[k] : x[k];
  detail::exp_shifted(y, T(0), y, n);
  for (int64_t k = 0; k < n; ++k) y[k] = x[k] >= 0 ? T(1) / (T(1) + y[k]) : y[k] / (T(1) + y[k]);
}

template <typename T>
Tensor unary_float(Unary op, const Tensor& x) {
  switch (op) {
    case Unary::Exp:
      return map1_blocks<T>(x, [](const T* a, T* o, int64_t n) { detail::exp_shifted(a, T(0), o, n); });
    case Unary::Log: return map1<T, T>(x, [](T v) EMBER_INLINE { return std::log(v); });
    case Unary::Sqrt: return map1<T, T>(x, [](T v) EMBER_INLINE { return std::sqrt(v); });
    case Unary::Rsqrt: return map1<T, T>(x, [](T v) EMBER_INLINE { return static_cast<T>(1) / std::sqrt(v); });
    case Unary::Sin: return map1<T, T>(x, [](T v) EMBER_INLINE { return std::sin(v); });
    case Unary::Cos: return map1<T, T>(x, [](T v) EMBER_INLINE { return std::cos(v); });
    case Unary::Tanh: return map1<T, T>(x, [](T v) EMBER_INLINE { return std::tanh(v); });
    case Unary::Sigmoid: return map1_blocks<T>(x, sigmoid_block<T>);
    // written so that NaN comes through (NaN < 0 is false), as in PyTorch
    case Unary::Relu: return map1<T, T>(x, [](T v) EMBER_INLINE { return v < 0 ? static_cast<T>(0) : v; });
    case Unary::Gelu: return map1_blocks<T>(x, gelu_block<T>);
    case Unary::GeluTanh: return map1<T, T>(x, [](T v) EMBER_INLINE { return gelu_tanh(v); });
    case Unary::Erf:
      return map1_blocks<T>(x, [](const T* a, T* o, int64_t n) { detail::erf_scaled(a, T(1), o, n); });
    default: break;
  }
  EMBER_FAIL(unary_name(op), "unsupported");
}

}  // namespace

Tensor gelu_backward(const Tensor& x, const Tensor& g) {
  EMBER_CHECK(x.shape() == g.shape() && x.dtype() == g.dtype() && is_floating(x.dtype()), "gelu backward",
              "input " << dtype_name(x.dtype()) << " " << shape_str(x.shape()) << " and gradient " << dtype_name(g.dtype())
                       << " " << shape_str(g.shape()) << " must match");
  const Tensor xs = contiguous(x), gs = contiguous(g);
  Tensor out = empty(x.shape(), x.dtype());
  detail::note_elementwise(out, {&x, &g});
  EMBER_DISPATCH_FLOAT(x.dtype(), "gelu backward", [&]<typename T>() {
    const T *px = xs.data_ptr<T>(), *pg = gs.data_ptr<T>();
    T* po = out.data_ptr<T>();
    const T inv_sqrt_2pi = T(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    detail::parallel_for(xs.numel(), detail::kGrain, [&](int64_t b, int64_t e) {
      T cdf[detail::kVecBlock], pdf[detail::kVecBlock];
      for (int64_t i = b; i < e; i += detail::kVecBlock) {
        const int64_t n = std::min(detail::kVecBlock, e - i);
        const T* xv = px + i;
        detail::erf_scaled(xv, T(kSqrtHalf), cdf, n);
        for (int64_t k = 0; k < n; ++k) pdf[k] = T(-0.5) * xv[k] * xv[k];
        detail::exp_shifted(pdf, T(0), pdf, n);
        for (int64_t k = 0; k < n; ++k)
          po[i + k] = pg[i + k] * (T(0.5) * (T(1) + cdf[k]) + xv[k] * pdf[k] * inv_sqrt_2pi);
      }
    });
  });
  return out;
}

Tensor unary(Unary op, const Tensor& x) {
  if (op == Unary::Neg || op == Unary::Abs || op == Unary::Sign) {
    return EMBER_DISPATCH_NUMERIC(x.dtype(), unary_name(op), [&]<typename T>() {
      if (op == Unary::Neg) return map1<T, T>(x, [](T v) EMBER_INLINE { return static_cast<T>(-v); });
      if (op == Unary::Abs) return map1<T, T>(x, [](T v) EMBER_INLINE { return v < 0 ? static_cast<T>(-v) : v; });
      return map1<T, T>(x, [](T v) EMBER_INLINE { return static_cast<T>((v > 0) - (v < 0)); });
    });
  }
  EMBER_CHECK(is_floating(x.dtype()), unary_name(op),
              "expected a float32 or float64 tensor, got " << dtype_name(x.dtype()) << " of shape " << shape_str(x.shape()));
  return EMBER_DISPATCH_FLOAT(x.dtype(), unary_name(op), [&]<typename T>() { return unary_float<T>(op, x); });
}

namespace {

template <typename T>
T apply_binary(Binary op, T a, T b) {
  switch (op) {
    case Binary::Add: return a + b;
    case Binary::Sub: return a - b;
    case Binary::Mul: return a * b;
    case Binary::Div: return a / b;
    case Binary::Pow: return static_cast<T>(std::pow(a, b));
    case Binary::Maximum: return a > b || a != a ? a : b;  // NaN propagates
    case Binary::Minimum: return a < b || a != a ? a : b;
  }
  return a;
}

template <typename T>
Tensor binary_typed(Binary op, const Tensor& a, const Tensor& b) {
  const char* name = binary_name(op);
  // One instantiation per op keeps the inner loop free of the switch.
  switch (op) {
    case Binary::Add: return map2<T, T, T>(a, b, [](T x, T y) { return x + y; }, name);
    case Binary::Sub: return map2<T, T, T>(a, b, [](T x, T y) { return x - y; }, name);
    case Binary::Mul: return map2<T, T, T>(a, b, [](T x, T y) { return x * y; }, name);
    case Binary::Div: return map2<T, T, T>(a, b, [](T x, T y) { return x / y; }, name);
    default: return map2<T, T, T>(a, b, [op](T x, T y) { return apply_binary(op, x, y); }, name);
  }
}

void check_binary_dtypes(Binary op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dtype() == b.dtype(), binary_name(op),
              "dtype mismatch: " << dtype_name(a.dtype()) << " " << shape_str(a.shape()) << " vs "
                                 << dtype_name(b.dtype()) << " " << shape_str(b.shape()) << "; convert one with to()");
  EMBER_CHECK(a.dtype() != kBool, binary_name(op), "not defined for bool tensors of shapes "
                                                       << shape_str(a.shape()) << " and " << shape_str(b.shape()));
  EMBER_CHECK(!(a.dtype() == kInt64 && op == Binary::Div), binary_name(op),
              "integer division is not supported on int64 tensors of shapes "
                  << shape_str(a.shape()) << " and " << shape_str(b.shape()) << "; convert to a floating dtype first");
}

}  // namespace

Tensor binary(Binary op, const Tensor& a, const Tensor& b) {
  check_binary_dtypes(op, a, b);
  return EMBER_DISPATCH_NUMERIC(a.dtype(), binary_name(op), [&]<typename T>() { return binary_typed<T>(op, a, b); });
}

Tensor binary_scalar(Binary op, const Tensor& a, double s, bool scalar_first) {
  EMBER_CHECK(a.dtype() != kBool, binary_name(op), "not defined for a bool tensor of shape " << shape_str(a.shape()));
  EMBER_CHECK(a.dtype() != kInt64 || s == std::trunc(s), binary_name(op),
              "scalar " << s << " is not an integer but the tensor of shape " << shape_str(a.shape())
                        << " is int64; convert it to a floating dtype first");
  EMBER_CHECK(!(a.dtype() == kInt64 && op == Binary::Div), binary_name(op),
              "integer division is not supported on an int64 tensor of shape " << shape_str(a.shape()));
  return EMBER_DISPATCH_NUMERIC(a.dtype(), binary_name(op), [&]<typename T>() {
    const T c = static_cast<T>(s);
    if (scalar_first) return map1<T, T>(a, [op, c](T x) { return apply_binary(op, c, x); });
    switch (op) {
      case Binary::Add: return map1<T, T>(a, [c](T x) { return x + c; });
      case Binary::Sub: return map1<T, T>(a, [c](T x) { return x - c; });
      case Binary::Mul: return map1<T, T>(a, [c](T x) { return x * c; });
      case Binary::Div: return map1<T, T>(a, [c](T x) { return x / c; });
      default: return map1<T, T>(a, [op, c](T x) { return apply_binary(op, x, c); });
    }
  });
}

namespace {
const char* compare_name(Compare op) {
  static const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return names[static_cast<int>(op)];
}
template <typename T>
bool apply_compare(Compare op, T a, T b) {
  switch (op) {
    case Compare::Eq: return a == b;
    case Compare::Ne: return a != b;
    case Compare::Lt: return a < b;
    case Compare::Le: return a <= b;
    case Compare::Gt: return a > b;
    case Compare::Ge: return a >= b;
  }
  return false;
}
}  // namespace

Tensor compare(Compare op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dtype() == b.dtype(), compare_name(op),
              "dtype mismatch: " << dtype_name(a.dtype()) << " " << shape_str(a.shape()) << " vs "
                                 << dtype_name(b.dtype()) << " " << shape_str(b.shape()));
  return EMBER_DISPATCH_ALL(a.dtype(), compare_name(op), [&]<typename T>() {
    return map2<bool, T, T>(a, b, [op](T x, T y) { return apply_compare(op, x, y); }, compare_name(op));
  });
}

Tensor compare_scalar(Compare op, const Tensor& a, double s) {
  return EMBER_DISPATCH_ALL(a.dtype(), compare_name(op), [&]<typename T>() {
    return map1<bool, T>(a, [op, s](T x) { return apply_compare(op, static_cast<double>(x), s); });
  });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(cond.dtype() == kBool, "where", "condition must be bool, got " << dtype_name(cond.dtype()) << " of shape "
                                                                           << shape_str(cond.shape()));
  EMBER_CHECK(a.dtype() == b.dtype(), "where",
              "dtype mismatch: " << dtype_name(a.dtype()) << " " << shape_str(a.shape()) << " vs "
                                 << dtype_name(b.dtype()) << " " << shape_str(b.shape()));
  return EMBER_DISPATCH_ALL(a.dtype(), "where", [&]<typename T>() {
    return map3<T, bool, T, T>(cond, a, b, [](bool c, T x, T y) { return c ? x : y; }, "where");
  });
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  EMBER_CHECK(mask.dtype() == kBool, "masked_fill",
              "mask must be bool, got " << dtype_name(mask.dtype()) << " of shape " << shape_str(mask.shape()));
  Shape b = broadcast_shapes(x.shape(), mask.shape(), "masked_fill");
  EMBER_CHECK(b == x.shape(), "masked_fill",
              "mask of shape " << shape_str(mask.shape()) << " must broadcast to the tensor's shape "
                               << shape_str(x.shape()));
  return EMBER_DISPATCH_ALL(x.dtype(), "masked_fill", [&]<typename T>() {
    const T v = static_cast<T>(value);
    return map2<T, T, bool>(x, mask, [v](T a, bool m) { return m ? v : a; }, "masked_fill");
  });
}

Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  EMBER_CHECK(!(lo && hi && *lo > *hi), "clamp", "min " << *lo << " is greater than max " << *hi);
  return EMBER_DISPATCH_NUMERIC(x.dtype(), "clamp", [&]<typename T>() {
    // A bound outside T's range is that end of the range (a plain cast of
    // 1e30 to int64 would be undefined); an integer tensor cannot take NaN.
    auto bound = [&](std::optional<double> b, T none) -> T {
      if (!b) return none;
      if constexpr (std::is_integral_v<T>) {
        EMBER_CHECK(!std::isnan(*b), "clamp", "a NaN bound for an integer tensor of shape " << shape_str(x.shape()));
        if (*b <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
        if (*b >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
      }
      return static_cast<T>(*b);
    };
    const T l = bound(lo, std::numeric_limits<T>::lowest());
    const T h = bound(hi, std::numeric_limits<T>::max());
    return map1<T, T>(x, [l, h](T v) { return v < l ? l : (v > h ? h : v); });
  });
}

namespace {
// Keeps x[..., i, j] where keep(j - i) holds, zero elsewhere.
template <typename Keep>
Tensor triangle(const Tensor& x, const char* op, Keep keep) {
  EMBER_CHECK(x.dim() >= 2, op, "expected a tensor with at least 2 dims, got shape " << shape_str(x.shape()));
  Tensor out = empty(x.shape(), x.dtype());
  copy_(out, x, op);
  const int64_t rows = x.size(-2), cols = x.size(-1), mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  EMBER_DISPATCH_ALL(x.dtype(), op, [&]<typename T>() {
    T* p = out.data_ptr<T>();
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          if (!keep(j - i)) p[(m * rows + i) * cols + j] = T(0);
  });
  return out;
}
}  // namespace

Tensor tril(const Tensor& x, int64_t k) { return triangle(x, "tril", [k](int64_t d) { return d <= k; }); }
Tensor triu(const Tensor& x, int64_t k) { return triangle(x, "triu", [k](int64_t d) { return d >= k; }); }

}  // namespace ember::kernel
