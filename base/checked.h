/// @file
/// Integer arithmetic that cannot overflow silently: a + b and a * b, or an
/// ember::Error naming op and what was being computed (sizes, strides,
/// offsets, a picture's cells).
#pragma once

#include <cstdint>

namespace ember {

int64_t checked_add(int64_t a, int64_t b, const char* op, const char* what);
int64_t checked_mul(int64_t a, int64_t b, const char* op, const char* what);

}  // namespace ember
