/// @file
/// An op's arguments as values: what OpScope hands to an observer that asks
/// for them (AutogradObserver::wants_calls), so that compile/'s tracer can
/// write the call down and call the op again later with the same arguments.
/// Each alternative is a parameter type some op takes, exactly: the tracer
/// finds the op's overload again by these types.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

enum class GeluApprox { None, Tanh };
enum class Reduction { Mean, Sum, None };

using OpArg = std::variant<Tensor, std::vector<Tensor>, double, int64_t, bool, Shape, DType, std::optional<double>,
                           std::optional<int64_t>, GeluApprox, Reduction>;

}  // namespace ember
