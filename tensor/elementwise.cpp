// Elementwise kernels: each op is a lambda handed to the engine in
// tensor/elementwise.h.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "tensor/elementwise.h"
#include "tensor/fast_math.h"
#include "tensor/kernels.h"
#include "tensor/machine/simd/vec_math_impl.h"

namespace ember::kernel {

using detail::map1;
using detail::map2;
using detail::map3;

namespace {

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

// float64's erf and exp (for erf_chunk's place) and tanh: the C library's,
// whose accuracy gradcheck needs.
void erf_chunk_f64(const double* s, double* r, double* e, int64_t m) {
  for (int64_t k = 0; k < m; ++k) {
    r[k] = std::erf(s[k]);
    e[k] = std::exp(-s[k] * s[k]);
  }
}
void tanh_f64(const double* x, double* y, int64_t n) {
  for (int64_t k = 0; k < n; ++k) y[k] = std::tanh(x[k]);
}
// float64 GELU: the formulas float32's vec_math kernels use
// (tensor/machine/simd/vec_math_impl.h), on the C library's functions.
void gelu_f64(const double* x, double* y, int64_t n) { detail::simd::gelu_erf<double, erf_chunk_f64>(x, y, n); }
void gelu_tanh_f64(const double* x, double* y, int64_t n) { detail::simd::gelu_tanh<double, tanh_f64>(x, y, n); }
template <typename T>
void exp_block(const T* x, T* y, int64_t n) {
  detail::exp_shifted(x, T(0), y, n);
}
template <typename T>
void erf_block(const T* x, T* y, int64_t n) {
  detail::erf_scaled(x, T(1), y, n);
}

// sigmoid(x) = 1 / (1 + e^-x), from e = exp(-|x|), which never overflows
template <typename T>
void sigmoid_block(const T* x, T* y, int64_t n) {
  for (int64_t k = 0; k < n; ++k) y[k] = x[k] >= 0 ? -x[k] : x[k];
  detail::exp_shifted(y, T(0), y, n);
  for (int64_t k = 0; k < n; ++k) y[k] = x[k] >= 0 ? T(1) / (T(1) + y[k]) : y[k] / (T(1) + y[k]);
}

// ---- the unary kernels: one row each, in the order of kernel::Unary ----
// A row's kernel is given the op's name (for its errors). Three kinds: a
// formula on any number (int64 too), a formula on floats, and a function
// over blocks of floats (the ops whose cost is exp or erf, SIMD).
template <typename F>
Tensor on_numbers(const Tensor& x, const char* name, const F& f) {
  return EMBER_DISPATCH_NUMERIC(x.dtype(), name, [&]<typename T>() {
    return map1<T, T>(x, [&](T v) EMBER_INLINE { return static_cast<T>(f(v)); });
  });
}
using detail::map_floats;
// A function over blocks of floats, given for float32 and float64.
template <void (*F32)(const float*, float*, int64_t), void (*F64)(const double*, double*, int64_t)>
Tensor on_float_blocks(const Tensor& x, const char* name) {
  detail::check_floating(x, name);
  return EMBER_DISPATCH_FLOAT(x.dtype(), name, [&]<typename T>() {
    if constexpr (sizeof(T) == 4) return map1_blocks<T>(x, F32);
    else return map1_blocks<T>(x, F64);
  });
}

struct UnaryKernel {
  Unary op;
  const char* name;
  Tensor (*run)(const Tensor& x, const char* name);
};
constexpr UnaryKernel kUnary[] = {
    {Unary::Neg, "neg", [](const Tensor& x, const char* n) { return on_numbers(x, n, [](auto v) { return -v; }); }},
    {Unary::Exp, "exp", on_float_blocks<exp_block<float>, exp_block<double>>},
    {Unary::Log, "log", [](const Tensor& x, const char* n) { return map_floats(x, n, [](auto v) { return std::log(v); }); }},
    {Unary::Sqrt, "sqrt", [](const Tensor& x, const char* n) { return map_floats(x, n, [](auto v) { return std::sqrt(v); }); }},
    {Unary::Rsqrt, "rsqrt",
     [](const Tensor& x, const char* n) { return map_floats(x, n, [](auto v) { return decltype(v)(1) / std::sqrt(v); }); }},
    {Unary::Abs, "abs",
     [](const Tensor& x, const char* n) { return on_numbers(x, n, [](auto v) { return v < 0 ? -v : v; }); }},
    {Unary::Sin, "sin", [](const Tensor& x, const char* n) { return map_floats(x, n, [](auto v) { return std::sin(v); }); }},
    {Unary::Cos, "cos", [](const Tensor& x, const char* n) { return map_floats(x, n, [](auto v) { return std::cos(v); }); }},
    {Unary::Tanh, "tanh", on_float_blocks<detail::tanh_f32, tanh_f64>},
    {Unary::Sigmoid, "sigmoid", on_float_blocks<sigmoid_block<float>, sigmoid_block<double>>},
    // written so that NaN comes through (NaN < 0 is false), as in PyTorch
    {Unary::Relu, "relu",
     [](const Tensor& x, const char* n) { return map_floats(x, n, [](auto v) { return v < 0 ? decltype(v)(0) : v; }); }},
    {Unary::Gelu, "gelu", on_float_blocks<detail::gelu_f32, gelu_f64>},
    {Unary::GeluTanh, "gelu_tanh", on_float_blocks<detail::gelu_tanh_f32, gelu_tanh_f64>},
    {Unary::Sign, "sign",
     [](const Tensor& x, const char* n) { return on_numbers(x, n, [](auto v) { return (v > 0) - (v < 0); }); }},
    {Unary::Erf, "erf", on_float_blocks<erf_block<float>, erf_block<double>>},
};
// The table has a row for every op, at the op's place.
template <typename Row, size_t N>
constexpr bool in_enum_order(const Row (&rows)[N], size_t count) {
  if (N != count) return false;
  for (size_t i = 0; i < N; ++i)
    if (static_cast<size_t>(rows[i].op) != i) return false;
  return true;
}
static_assert(in_enum_order(kUnary, static_cast<size_t>(Unary::Count)), "kUnary: one row per kernel::Unary, in order");

}  // namespace

namespace {
// g * f'(x) for the two GELU forms in float64: the formulas float32's
// vec_math kernels use, on the C library's erf, exp and tanh.
void gelu_erf_f64_backward(const double* x, const double* g, double* o, int64_t n) {
  detail::simd::gelu_erf_backward<double, erf_chunk_f64>(x, g, o, n);
}
void gelu_tanh_f64_backward(const double* x, const double* g, double* o, int64_t n) {
  detail::simd::gelu_tanh_backward<double, tanh_f64>(x, g, o, n);
}
template <void (*F32)(const float*, const float*, float*, int64_t),
          void (*F64)(const double*, const double*, double*, int64_t)>
Tensor gelu_backward_with(const Tensor& x, const Tensor& g, const char* op) {
  EMBER_CHECK(x.shape() == g.shape() && x.dtype() == g.dtype() && is_floating(x.dtype()), op,
              "input " << dtype_name(x.dtype()) << " " << shape_str(x.shape()) << " and gradient " << dtype_name(g.dtype())
                       << " " << shape_str(g.shape()) << " must match");
  const Tensor xs = contiguous(x), gs = contiguous(g);
  Tensor out = empty(x.shape(), x.dtype());
  detail::note_elementwise(out, {&x, &g});
  EMBER_DISPATCH_FLOAT(x.dtype(), op, [&]<typename T>() {
    const T *px = xs.data_ptr<T>(), *pg = gs.data_ptr<T>();
    T* po = out.data_ptr<T>();
    detail::parallel_for(xs.numel(), detail::kGrain, [&](int64_t b, int64_t e) {
      if constexpr (sizeof(T) == 4) F32(px + b, pg + b, po + b, e - b);
      else F64(px + b, pg + b, po + b, e - b);
    });
  });
  return out;
}
}  // namespace

Tensor gelu_backward(const Tensor& x, const Tensor& g) {
  return gelu_backward_with<detail::gelu_backward_f32, gelu_erf_f64_backward>(x, g, "gelu backward");
}
Tensor gelu_tanh_backward(const Tensor& x, const Tensor& g) {
  return gelu_backward_with<detail::gelu_tanh_backward_f32, gelu_tanh_f64_backward>(x, g, "gelu (tanh form) backward");
}

namespace {
template <auto F, typename T>
void erased(const void* x, void* y, int64_t n) {
  F(static_cast<const T*>(x), static_cast<T*>(y), n);
}
template <auto F32, auto F64>
UnaryBlock for_dtype(DType dt) {
  if (dt == DType::Float32) return &erased<F32, float>;
  return dt == DType::Float64 ? &erased<F64, double> : nullptr;
}
}  // namespace

UnaryBlock unary_block(Unary op, DType dt) {
  switch (op) {  // the same functions as kUnary's rows
    case Unary::Exp: return for_dtype<exp_block<float>, exp_block<double>>(dt);
    case Unary::Tanh: return for_dtype<detail::tanh_f32, tanh_f64>(dt);
    case Unary::Sigmoid: return for_dtype<sigmoid_block<float>, sigmoid_block<double>>(dt);
    case Unary::Gelu: return for_dtype<detail::gelu_f32, gelu_f64>(dt);
    case Unary::GeluTanh: return for_dtype<detail::gelu_tanh_f32, gelu_tanh_f64>(dt);
    case Unary::Erf: return for_dtype<erf_block<float>, erf_block<double>>(dt);
    default: return nullptr;
  }
}

const char* unary_name(Unary op) { return kUnary[static_cast<size_t>(op)].name; }
Tensor unary(Unary op, const Tensor& x) { return kUnary[static_cast<size_t>(op)].run(x, unary_name(op)); }

namespace {

// ---- the binary kernels and the comparisons: one row each, in enum order ----
// Each op is its formula on two numbers; one instantiation per op keeps the
// inner loop free of a switch.
struct AddOp { template <typename T> [[gnu::always_inline]] static T f(T a, T b) { return a + b; } };
struct SubOp { template <typename T> [[gnu::always_inline]] static T f(T a, T b) { return a - b; } };
struct MulOp { template <typename T> [[gnu::always_inline]] static T f(T a, T b) { return a * b; } };
struct DivOp { template <typename T> [[gnu::always_inline]] static T f(T a, T b) { return a / b; } };
struct PowOp { template <typename T> [[gnu::always_inline]] static T f(T a, T b) { return static_cast<T>(std::pow(a, b)); } };
struct MaximumOp { template <typename T> [[gnu::always_inline]] static T f(T a, T b) { return a > b || a != a ? a : b; } };  // NaN propagates
struct MinimumOp { template <typename T> [[gnu::always_inline]] static T f(T a, T b) { return a < b || a != a ? a : b; } };

template <typename Op>
Tensor two_tensors(const Tensor& a, const Tensor& b, const char* name) {
  return EMBER_DISPATCH_NUMERIC(a.dtype(), name, [&]<typename T>() {
    return map2<T, T, T>(a, b, [](T x, T y) EMBER_INLINE { return Op::f(x, y); }, name);
  });
}
template <typename Op>
Tensor with_scalar(const Tensor& a, double s, bool scalar_first, const char* name) {
  return EMBER_DISPATCH_NUMERIC(a.dtype(), name, [&]<typename T>() {
    const T c = static_cast<T>(s);
    if (scalar_first) return map1<T, T>(a, [c](T x) EMBER_INLINE { return Op::f(c, x); });
    return map1<T, T>(a, [c](T x) EMBER_INLINE { return Op::f(x, c); });
  });
}
// dst = Op(dst, b): b a tensor, or a 0-d one holding the scalar.
template <typename Op>
void into_tensor(const Tensor& dst, const Tensor& b, const char* name) {
  EMBER_DISPATCH_NUMERIC(dst.dtype(), name, [&]<typename T>() {
    detail::apply_inplace<T, T>(dst, b, [](T x, T y) EMBER_INLINE { return Op::f(x, y); });
  });
}
struct BinaryKernel {
  Binary op;
  const char* name;
  Tensor (*two)(const Tensor& a, const Tensor& b, const char* name);
  Tensor (*scalar)(const Tensor& a, double s, bool scalar_first, const char* name);
  void (*into)(const Tensor& dst, const Tensor& b, const char* name);
};
template <typename Op>
constexpr BinaryKernel binary_row(Binary op, const char* name) {
  return {op, name, two_tensors<Op>, with_scalar<Op>, into_tensor<Op>};
}
constexpr BinaryKernel kBinary[] = {
    binary_row<AddOp>(Binary::Add, "add"),         binary_row<SubOp>(Binary::Sub, "sub"),
    binary_row<MulOp>(Binary::Mul, "mul"),         binary_row<DivOp>(Binary::Div, "div"),
    binary_row<PowOp>(Binary::Pow, "pow"),         binary_row<MaximumOp>(Binary::Maximum, "maximum"),
    binary_row<MinimumOp>(Binary::Minimum, "minimum"),
};
static_assert(in_enum_order(kBinary, static_cast<size_t>(Binary::Count)), "kBinary: one row per kernel::Binary, in order");

struct EqOp { template <typename T> [[gnu::always_inline]] static bool f(T a, T b) { return a == b; } };
struct NeOp { template <typename T> [[gnu::always_inline]] static bool f(T a, T b) { return a != b; } };
struct LtOp { template <typename T> [[gnu::always_inline]] static bool f(T a, T b) { return a < b; } };
struct LeOp { template <typename T> [[gnu::always_inline]] static bool f(T a, T b) { return a <= b; } };
struct GtOp { template <typename T> [[gnu::always_inline]] static bool f(T a, T b) { return a > b; } };
struct GeOp { template <typename T> [[gnu::always_inline]] static bool f(T a, T b) { return a >= b; } };

template <typename Op>
Tensor compare_two(const Tensor& a, const Tensor& b, const char* name) {
  return EMBER_DISPATCH_ALL(a.dtype(), name, [&]<typename T>() {
    return map2<bool, T, T>(a, b, [](T x, T y) { return Op::f(x, y); }, name);
  });
}
template <typename Op>
Tensor compare_with_scalar(const Tensor& a, double s, const char* name) {  // in double, as the scalar is
  return EMBER_DISPATCH_ALL(a.dtype(), name, [&]<typename T>() {
    return map1<bool, T>(a, [s](T x) { return Op::f(static_cast<double>(x), s); });
  });
}
struct CompareKernel {
  Compare op;
  const char* name;
  Tensor (*two)(const Tensor& a, const Tensor& b, const char* name);
  Tensor (*scalar)(const Tensor& a, double s, const char* name);
};
template <typename Op>
constexpr CompareKernel compare_row(Compare op, const char* name) {
  return {op, name, compare_two<Op>, compare_with_scalar<Op>};
}
constexpr CompareKernel kCompare[] = {
    compare_row<EqOp>(Compare::Eq, "eq"), compare_row<NeOp>(Compare::Ne, "ne"), compare_row<LtOp>(Compare::Lt, "lt"),
    compare_row<LeOp>(Compare::Le, "le"), compare_row<GtOp>(Compare::Gt, "gt"), compare_row<GeOp>(Compare::Ge, "ge"),
};
static_assert(in_enum_order(kCompare, static_cast<size_t>(Compare::Count)), "kCompare: one row per kernel::Compare, in order");

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

const char* binary_name(Binary op) { return kBinary[static_cast<size_t>(op)].name; }

Tensor binary(Binary op, const Tensor& a, const Tensor& b) {
  check_binary_dtypes(op, a, b);
  return kBinary[static_cast<size_t>(op)].two(a, b, binary_name(op));
}

namespace {
void check_scalar_operand(Binary op, const Tensor& a, double s) {
  EMBER_CHECK(a.dtype() != kBool, binary_name(op), "not defined for a bool tensor of shape " << shape_str(a.shape()));
  EMBER_CHECK(a.dtype() != kInt64 || s == std::trunc(s), binary_name(op),
              "scalar " << s << " is not an integer but the tensor of shape " << shape_str(a.shape())
                        << " is int64; convert it to a floating dtype first");
  EMBER_CHECK(!(a.dtype() == kInt64 && op == Binary::Div), binary_name(op),
              "integer division is not supported on an int64 tensor of shape " << shape_str(a.shape()));
}
}  // namespace

Tensor binary_scalar(Binary op, const Tensor& a, double s, bool scalar_first) {
  check_scalar_operand(op, a, s);
  return kBinary[static_cast<size_t>(op)].scalar(a, s, scalar_first, binary_name(op));
}

void binary_(Binary op, const Tensor& dst, const Tensor& b) {
  check_binary_dtypes(op, dst, b);
  const bool own_elements = b.storage() == dst.storage() && b.storage_offset() == dst.storage_offset() &&
                            b.shape() == dst.shape() && b.stride() == dst.stride();
  if (b.numel() > 0 && b.storage() == dst.storage() && !own_elements) {
    // b reads memory the loop writes (x.add_(x.t()), say): all of it first
    copy_(dst, binary(op, dst, b), binary_name(op));
    return;
  }
  kBinary[static_cast<size_t>(op)].into(dst, b, binary_name(op));
  dst.storage()->bump_version();
}

void binary_scalar_(Binary op, const Tensor& dst, double s) {
  check_scalar_operand(op, dst, s);
  Tensor value = empty({}, dst.dtype());  // s as binary_scalar converts it, broadcast
  EMBER_DISPATCH_NUMERIC(dst.dtype(), binary_name(op), [&]<typename T>() { *value.data_ptr<T>() = static_cast<T>(s); });
  kBinary[static_cast<size_t>(op)].into(dst, value, binary_name(op));
  dst.storage()->bump_version();
}

Tensor compare(Compare op, const Tensor& a, const Tensor& b) {
  const CompareKernel& k = kCompare[static_cast<size_t>(op)];
  EMBER_CHECK(a.dtype() == b.dtype(), k.name,
              "dtype mismatch: " << dtype_name(a.dtype()) << " " << shape_str(a.shape()) << " vs "
                                 << dtype_name(b.dtype()) << " " << shape_str(b.shape()));
  return k.two(a, b, k.name);
}

Tensor compare_scalar(Compare op, const Tensor& a, double s) {
  const CompareKernel& k = kCompare[static_cast<size_t>(op)];
  return k.scalar(a, s, k.name);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(cond.dtype() == kBool, "where", "condition must be bool, got " << dtype_name(cond.dtype()) << " of shape "
                                                                           << shape_str(cond.shape()));
  EMBER_CHECK(a.dtype() == b.dtype(), "where",
              "dtype mismatch: " << dtype_name(a.dtype()) << " " << shape_str(a.shape()) << " vs "
                                 << dtype_name(b.dtype()) << " " << shape_str(b.shape()));
  return EMBER_DISPATCH_ALL(a.dtype(), "where", [&]<typename T>() {
    // the condition read as bytes (elements_of): the select then vectorizes
    return map3<T, uint8_t, T, T>(cond, a, b, [](uint8_t c, T x, T y) EMBER_INLINE { return c != 0 ? x : y; }, "where");
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
    return map2<T, T, uint8_t>(x, mask, [v](T a, uint8_t m) EMBER_INLINE { return m != 0 ? v : a; }, "masked_fill");
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
