#include "base/parse.h"

#include <charconv>
#include <cmath>

#include "base/error.h"

namespace ember {

namespace {
// std::from_chars reads a number without locales or exceptions and says how
// far it got: a value counts only if it used up the whole text.
template <typename T>
T parse(const std::string& text, const char* op, const std::string& what, const char* expected) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  EMBER_CHECK(ec == std::errc() && ptr == end, op, "bad value \"" << text << "\" for " << what << " (expected " << expected << ")");
  return value;
}
}  // namespace

int64_t parse_int64(const std::string& text, const char* op, const std::string& what) {
  return parse<int64_t>(text, op, what, "an integer");
}
uint64_t parse_uint64(const std::string& text, const char* op, const std::string& what) {
  return parse<uint64_t>(text, op, what, "a non-negative integer");
}
double parse_double(const std::string& text, const char* op, const std::string& what) {
  double v = parse<double>(text, op, what, "a number");
  EMBER_CHECK(std::isfinite(v), op, "bad value \"" << text << "\" for " << what << " (expected a finite number)");
  return v;
}

}  // namespace ember
