// Checks exercise 1.2: broadcast_shape against ember's own rule
// (tensor/shape.h: broadcast_shapes), and the error for shapes that do not
// broadcast.
#include "exercises/checks/check.h"

namespace ex1_2 {
ember::Shape broadcast_shape(const ember::Shape& a, const ember::Shape& b);
}

namespace {

using namespace ember;

void same_as_ember(const Shape& a, const Shape& b) {
  const Shape want = broadcast_shapes(a, b, "check");
  const Shape got = ex1_2::broadcast_shape(a, b);
  check::expect(got == want, "broadcast_shape(" + check::show(a) + ", " + check::show(b) + ") is " + check::show(got) +
                                 ", but a + b has shape " + check::show(want),
                "align from the right; a missing dim counts as size 1");
}

}  // namespace

check::Exercise check::exercise() {
  return {"1.2", "The broadcasting rule", "docs/book/01_tensors.md", {
    {"equal shapes, and a scalar with anything", [] {
       same_as_ember({2, 3}, {2, 3});
       same_as_ember({}, {4});
       same_as_ember({3, 2}, {});
       same_as_ember({}, {});
     }},
    {"size-1 dims repeat: (2, 1) and (1, 3)", [] {
       same_as_ember({2, 1}, {1, 3});
       same_as_ember({1, 3}, {2, 1});
     }},
    {"missing leading dims: (4, 1, 5) and (3, 1)", [] {
       same_as_ember({4, 1, 5}, {3, 1});
       same_as_ember({5}, {2, 3, 5});
       same_as_ember({8, 1, 6, 1}, {7, 1, 5});
     }},
    {"zero-size dims: (1) and (0) give (0)", [] {
       same_as_ember({1}, {0});
       same_as_ember({0, 3}, {1, 1});
     }},
    {"shapes that do not broadcast are an ember::Error naming both", [] {
       expect_error([] { (void)ex1_2::broadcast_shape({2, 3}, {3, 2}); }, {"(2, 3)", "(3, 2)"},
                    "broadcast_shape((2, 3), (3, 2))");
       expect_error([] { (void)ex1_2::broadcast_shape({3}, {0}); }, {"(3)", "(0)"}, "broadcast_shape((3), (0))");
       expect_error([] { (void)ex1_2::broadcast_shape({2, 4, 5}, {3, 5}); }, {"(2, 4, 5)", "(3, 5)"},
                    "broadcast_shape((2, 4, 5), (3, 5))");
     }},
  }};
}
