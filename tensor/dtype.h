/// @file
/// The four element types ember knows, and a dispatch helper that turns a
/// runtime DType into a compile-time C++ type.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/error.h"

namespace ember {

enum class DType : uint8_t { Float32, Float64, Int64, Bool };

inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kBool = DType::Bool;

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "?";
}

inline bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }

/// C++ type -> DType
template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };

}  // namespace ember

// EMBER_DISPATCH_ALL(dtype, "op", [&]<typename T>() { ... }) calls the lambda with
// T = float / double / int64_t / bool. The FLOAT variant rejects int64/bool.
#define EMBER_DISPATCH_ALL(dt, op, ...)                                          \
  [&]() -> decltype(auto) {                                                     \
    switch (dt) {                                                               \
      case ::ember::DType::Float32: return (__VA_ARGS__).template operator()<float>();     \
      case ::ember::DType::Float64: return (__VA_ARGS__).template operator()<double>();    \
      case ::ember::DType::Int64: return (__VA_ARGS__).template operator()<int64_t>();     \
      case ::ember::DType::Bool: return (__VA_ARGS__).template operator()<bool>();         \
    }                                                                           \
    EMBER_FAIL(op, "unknown dtype");                                            \
  }()

#define EMBER_DISPATCH_FLOAT(dt, op, ...)                                          \
  [&]() -> decltype(auto) {                                                       \
    switch (dt) {                                                                 \
      case ::ember::DType::Float32: return (__VA_ARGS__).template operator()<float>();       \
      case ::ember::DType::Float64: return (__VA_ARGS__).template operator()<double>();      \
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
      default: break;                                                              \
    }                                                                              \
    EMBER_FAIL(op, "expected a numeric tensor, got " << ::ember::dtype_name(dt));  \
  }()
