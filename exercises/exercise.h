// What every exercise file includes: the whole of ember, and TODO.
//
// A starting file (exercises/start/) marks what is yours to write with
//   TODO("what to write");
// which throws, so that the checker can say "this part is still to do"
// instead of failing in a confusing way. Replace the TODO line with your code.
#pragma once

#include <stdexcept>
#include <string>

#include "ember.h"
#include "tensor/kernels.h"  // kernel::: the plain loops that record nothing (chapter 1)

namespace exercise {

/// Thrown by TODO(...): the part of the file that is still to be written.
class Todo : public std::runtime_error {
 public:
  explicit Todo(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace exercise

#define TODO(what) throw ::exercise::Todo(what)
