// mini's two exceptions, and the two macros that throw them. Nothing here is
// a lesson: it is how your framework says "no" and "not yet".
//
//   MINI_CHECK(cond, op, message)  refuses a user mistake: a mini::Error
//                                  "op: message", where the message names the
//                                  values and shapes that are wrong, e.g.
//     MINI_CHECK(d < dim(), "transpose", "dim " << d << " of a tensor with " << dim() << " dims");
//   MINI_TODO("a question")        marks a part still to write: it throws a
//                                  mini::Todo, so that the checker can say
//                                  "still to do" instead of failing strangely.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace mini {

/// A user mistake, refused: the message starts with the op's name.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// A part of your framework still to be written (where, and the question it asks).
class Todo : public std::runtime_error {
 public:
  Todo(const std::string& file, int line, const std::string& question)
      : std::runtime_error(short_path(file) + ":" + std::to_string(line) + ": " + question) {}

 private:
  // "mini/value.cpp" out of the whole path the compiler knows.
  static std::string short_path(const std::string& file) {
    const size_t at = file.rfind("mini/");
    return at == std::string::npos ? file : file.substr(at);
  }
};

}  // namespace mini

#define MINI_CHECK(cond, op, message)                 \
  do {                                                \
    if (!(cond)) {                                    \
      std::ostringstream mini_check_message_;         \
      mini_check_message_ << (op) << ": " << message; \
      throw ::mini::Error(mini_check_message_.str()); \
    }                                                 \
  } while (false)

#define MINI_TODO(question) throw ::mini::Todo(__FILE__, __LINE__, question)
