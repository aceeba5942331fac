/// @file
/// The five element types ember knows, and dispatch helpers that turn a
/// runtime DType into a compile-time C++ type.
///
/// bfloat16 (tensor/bfloat16.h) and int8 are storage types: only the ops
/// that move, convert, read, print or save values take them
/// (EMBER_DISPATCH_STORAGE), and matmul, which multiplies bfloat16 in
/// float32. Every other dispatch refuses them with an error naming the op
/// and the dtype, and is_floating() (the types ember computes and
/// differentiates in) is false for both. int8 holds quantized weights
/// (nn/quantize.h); a conversion to int8 refuses a value outside
/// [-128, 127] (or a NaN) instead of wrapping it.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"
#include "tensor/bfloat16.h"

namespace ember {

enum class DType : uint8_t { Float32, Float64, Int64, Bool, BFloat16, Int8 };

inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kBool = DType::Bool;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kInt8 = DType::Int8;

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
    case DType::BFloat16: return 2;
    case DType::Int8: return 1;
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
    case DType::BFloat16: return "bfloat16";
    case DType::Int8: return "int8";
  }
  return "?";
}

/// The float types ember computes and differentiates in: float32 and float64
/// (not bfloat16 or int8, storage types: see the top of this file).
inline bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }

/// C++ type -> DType
template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::Int8; };

}  // namespace ember

namespace ember {
namespace detail {
/// The dtypes a dispatch takes, as bits.
enum DTypeSet : unsigned {
  kFloats = 1u << 0 | 1u << 1,                  // float32, float64
  kNumbers = kFloats | 1u << 2,                 // and int64
  kAllButBF16 = kNumbers | 1u << 3,             // and bool
  kStorageTypes = kAllButBF16 | 1u << 4 | 1u << 5,  // and bfloat16, int8
};
constexpr bool takes(unsigned set, DType t) { return (set >> static_cast<unsigned>(t)) & 1u; }
/// The error for a dtype that `set` does not take, naming op. bfloat16 and
/// int8 are storage types in ember, and it says so.
[[noreturn]] inline void refuse_dtype(const char* op, DType dt, unsigned set) {
  if (dt == DType::BFloat16)
    EMBER_FAIL(op, "does not take " << dtype_name(dt)
                                    << " tensors (a storage type in ember: convert with to(float32) first; matmul "
                                       "takes them as they are)");
  if (dt == DType::Int8)
    EMBER_FAIL(op, "does not take int8 tensors (a storage type in ember, for quantized weights: convert with "
                   "to(float32) first, or multiply with nn::quantize's kernels)");
  if (set == kFloats) EMBER_FAIL(op, "expected a floating tensor (float32 or float64), got " << dtype_name(dt));
  EMBER_FAIL(op, "expected a numeric tensor, got " << dtype_name(dt));
}

/// f.template operator()<T>() with T the C++ type of dt, for the dtypes in
/// `set`; any other dtype is an error naming op. Only the types in `set`
/// are instantiated, so f may use what only they can do.
template <unsigned set, typename F>
decltype(auto) dispatch(DType dt, const char* op, F&& f) {
#define EMBER_DISPATCH_CASE(D, T) \
  case DType::D:                  \
    if constexpr (takes(set, DType::D)) return f.template operator()<T>(); \
    break;
  switch (dt) {
    EMBER_DISPATCH_CASE(Float32, float)
    EMBER_DISPATCH_CASE(Float64, double)
    EMBER_DISPATCH_CASE(Int64, int64_t)
    EMBER_DISPATCH_CASE(Bool, bool)
    EMBER_DISPATCH_CASE(BFloat16, ::ember::bfloat16)
    EMBER_DISPATCH_CASE(Int8, int8_t)
  }
#undef EMBER_DISPATCH_CASE
  refuse_dtype(op, dt, set);
}
}  // namespace detail
}  // namespace ember

// EMBER_DISPATCH_ALL(dtype, "op", [&]<typename T>() { ... }) calls the lambda with
// T = float / double / int64_t / bool. The FLOAT variant takes float32 and
// float64 only, NUMERIC adds int64. bfloat16 is refused by all three, naming
// op; EMBER_DISPATCH_STORAGE adds it (T = ember::bfloat16) for the ops that
// only move, convert or read values.
#define EMBER_DISPATCH_ALL(dt, op, ...) ::ember::detail::dispatch<::ember::detail::kAllButBF16>(dt, op, __VA_ARGS__)
#define EMBER_DISPATCH_STORAGE(dt, op, ...) ::ember::detail::dispatch<::ember::detail::kStorageTypes>(dt, op, __VA_ARGS__)
#define EMBER_DISPATCH_FLOAT(dt, op, ...) ::ember::detail::dispatch<::ember::detail::kFloats>(dt, op, __VA_ARGS__)
#define EMBER_DISPATCH_NUMERIC(dt, op, ...) ::ember::detail::dispatch<::ember::detail::kNumbers>(dt, op, __VA_ARGS__)
