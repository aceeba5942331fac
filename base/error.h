/// @file
/// ember::Error and EMBER_CHECK: every user mistake becomes one clear exception.
///
/// A message always names the op, the offending value and the shapes, e.g.
///   "embedding: id 50301 at [3, 17] is outside the vocabulary [0, 50257)".
/// Checks run before anything is written, so a throwing op leaves every tensor
/// as it was.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace ember

// EMBER_CHECK(cond, "op", "message " << value << " more"): throws ember::Error("op: message ...").
#define EMBER_CHECK(cond, op, msg)                 \
  do {                                             \
    if (!(cond)) {                                 \
      std::ostringstream ember_check_os_;          \
      ember_check_os_ << op << ": " << msg;        \
      throw ::ember::Error(ember_check_os_.str()); \
    }                                              \
  } while (0)

#define EMBER_FAIL(op, msg) EMBER_CHECK(false, op, msg)
