/// @file
/// Numbers from text, the strict way: the whole string must be one number of
/// the asked type ("64x", "", " 1", "-1" for an unsigned, "1e999" are errors,
/// never 64, 0 or inf). Used wherever ember reads numbers it did not write in
/// this process: model configs and checkpoint metadata.
#pragma once

#include <cstdint>
#include <string>

namespace ember {

/// Each throws ember::Error "op: bad value \"text\" for what (expected ...)".
int64_t parse_int64(const std::string& text, const char* op, const std::string& what);
uint64_t parse_uint64(const std::string& text, const char* op, const std::string& what);
double parse_double(const std::string& text, const char* op, const std::string& what);

}  // namespace ember
