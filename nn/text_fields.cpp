#include "nn/text_fields.h"

#include <sstream>

namespace ember::nn {

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

std::string real_text(double v, int digits) {
  std::ostringstream os;
  os.precision(digits);
  os << v;
  return os.str();
}

std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace ember::nn
