#include "base/checked.h"

#include "base/error.h"

namespace ember {

int64_t checked_add(int64_t a, int64_t b, const char* op, const char* what) {
  int64_t r = 0;
  EMBER_CHECK(!__builtin_add_overflow(a, b, &r), op, what << " overflows int64: " << a << " + " << b);
  return r;
}

int64_t checked_mul(int64_t a, int64_t b, const char* op, const char* what) {
  int64_t r = 0;
  EMBER_CHECK(!__builtin_mul_overflow(a, b, &r), op, what << " overflows int64: " << a << " * " << b);
  return r;
}

}  // namespace ember
