#include "base/text_fields.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace ember {

std::vector<std::pair<std::string, std::string>> key_values(const std::string& text, const char* op) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream is(text);
  std::string entry;
  while (is >> entry) {
    const size_t eq = entry.find('=');
    EMBER_CHECK(eq != std::string::npos, op, "malformed entry \"" << entry << "\" in \"" << text << "\"");
    out.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return out;
}

std::string real_text(double v) {
  // std::to_chars without a precision writes the shortest digits that
  // std::from_chars (base/parse.h) reads back as the same double; fixed
  // where %g would write it so ("0.0003", "1000"), else with an exponent
  // ("3e-05", "1e+300").
  const double a = std::fabs(v);
  const auto format = a == 0 || (a >= 1e-4 && a < 1e16) ? std::chars_format::fixed : std::chars_format::scientific;
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, format);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace ember
