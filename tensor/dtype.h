/// @file
/// The five element types ember knows, and dispatch helpers that turn a
/// runtime DType into a compile-time C++ type.
///
/// bfloat16 (tensor/bfloat16.h) is a storage type: only the ops that move,
/// convert, read, print or save values take it (EMBER_DISPATCH_STORAGE),
/// and matmul, which multiplies it in float32. Every other dispatch refuses
/// it with an error naming the op and the dtype, and is_floating() (the
/// types ember computes and differentiates in) is false for it.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/bfloat16.h"
#include "tensor/error.h"

namespace ember {

enum class DType : uint8_t { Float32, Float64, Int64, Bool, BFloat16 };

inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kBool = DType::Bool;
inline constexpr DType kBFloat16 = DType::BFloat16;

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
    case DType::BFloat16: return 2;
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
  }
  return "?";
}

/// The float types ember computes and differentiates in: float32 and float64
/// (not bfloat16, a storage type: see the top of this file).
inline bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }

/// C++ type -> DType
template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::BFloat16; };

}  // namespace ember

// What an op that does not compute in bfloat16 says when given it.
#define EMBER_BF16_REFUSED(op, dt)                                                                   \
  EMBER_FAIL(op, "does not take " << ::ember::dtype_name(dt)                                         \
                                  << " tensors (a storage type in ember: convert with to(float32) "  \
                                     "first; matmul takes them as they are)")

// EMBER_DISPATCH_ALL(dtype, "op", [&]<typename T>() { ... }) calls the lambda with
// T = float / double / int64_t / bool. The FLOAT variant rejects int64/bool.
// bfloat16 is refused by all three, naming op; EMBER_DISPATCH_STORAGE adds it
// (T = ember::bfloat16) for the ops that only move, convert or read values.
#define EMBER_DISPATCH_ALL(dt, op, ...)                                          \
  [&]() -> decltype(auto) {                                                     \
    switch (dt) {                                                               \
      case ::ember::DType::Float32: return (__VA_ARGS__).template operator()<float>();     \
      case ::ember::DType::Float64: return (__VA_ARGS__).template operator()<double>();    \
      case ::ember::DType::Int64: return (__VA_ARGS__).template operator()<int64_t>();     \
      case ::ember::DType::Bool: return (__VA_ARGS__).template operator()<bool>();         \
      case ::ember::DType::BFloat16: break;                                     \
    }                                                                           \
    EMBER_BF16_REFUSED(op, dt);                                                 \
  }()

#define EMBER_DISPATCH_STORAGE(dt, op, ...)                                      \
  [&]() -> decltype(auto) {                                                     \
    switch (dt) {                                                               \
      case ::ember::DType::Float32: return (__VA_ARGS__).template operator()<float>();     \
      case ::ember::DType::Float64: return (__VA_ARGS__).template operator()<double>();    \
      case ::ember::DType::Int64: return (__VA_ARGS__).template operator()<int64_t>();     \
      case ::ember::DType::Bool: return (__VA_ARGS__).template operator()<bool>();         \
      case ::ember::DType::BFloat16: return (__VA_ARGS__).template operator()<::ember::bfloat16>(); \
    }                                                                           \
    EMBER_FAIL(op, "unknown dtype");                                            \
  }()

#define EMBER_DISPATCH_FLOAT(dt, op, ...)                                          \
  [&]() -> decltype(auto) {                                                       \
    switch (dt) {                                                                 \
      case ::ember::DType::Float32: return (__VA_ARGS__).template operator()<float>();       \
      case ::ember::DType::Float64: return (__VA_ARGS__).template operator()<double>();      \
      case ::ember::DType::BFloat16: EMBER_BF16_REFUSED(op, dt);                  \
      default: break;                                                             \
    }                                                                             \
    EMBER_FAIL(op, "expected a floating tensor (float32 or float64), got "        \
                       << ::ember::dtype_name(dt));                               \
  }()

#define EMBER_DISPATCH_NUMERIC(dt, op, ...)                                         \
  [&]() -> decltype(auto) {                                                        \
    switch (dt) {                                                                  \
      case ::ember::DType::Float32: return (__VA_ARGS__).template operator()<float>();        \
      case ::ember::DType::Float64: return (__VA_ARGS__).template operator()<double>();       \
      case ::ember::DType::Int64: return (__VA_ARGS__).template operator()<int64_t>();        \
      case ::ember::DType::BFloat16: EMBER_BF16_REFUSED(op, dt);                   \
      default: break;                                                              \
    }                                                                              \
    EMBER_FAIL(op, "expected a numeric tensor, got " << ::ember::dtype_name(dt));  \
  }()
