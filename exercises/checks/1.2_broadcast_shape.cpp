// Checks exercise 1.2: broadcast_shape against ember's own rule
// (tensor/shape.h: broadcast_shapes), and the error for shapes that do not
// broadcast.
#include <algorithm>
#include <string>

#include "exercises/checks/check.h"

namespace ex1_2 {
ember::Shape broadcast_shape(const ember::Shape& a, const ember::Shape& b);
}

namespace {

using namespace ember;

// The hint for a wrong answer, from the way it is wrong.
std::string hint_for(const Shape& a, const Shape& b, const Shape& got, const Shape& want) {
  if (got.size() != want.size())
    return "the result has as many dims as the longer shape: align the two from the right, a missing dim counts "
           "as size 1";
  const size_t n = want.size();
  for (size_t i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    const size_t from_right = n - 1 - i;
    const int64_t da = from_right < a.size() ? a[a.size() - 1 - from_right] : 1;
    const int64_t db = from_right < b.size() ? b[b.size() - 1 - from_right] : 1;
    if ((da == 0 || db == 0) && got[i] == std::max(da, db))
      return "a size-1 dim takes the other's size, 0 included: (1) and (0) give (0), so the rule is not max(da, db)";
    if (got[i] != da && got[i] != db)
      return "dim " + std::to_string(i) + " of the result is " + std::to_string(got[i]) +
             ", which is neither input's size there (" + std::to_string(da) + " and " + std::to_string(db) +
             " once aligned from the right)";
  }
  return "align from the right; a missing dim counts as size 1, and a size-1 dim takes the other's size";
}

void same_as_ember(const Shape& a, const Shape& b) {
  const Shape want = broadcast_shapes(a, b, "check");
  const Shape got = ex1_2::broadcast_shape(a, b);
  if (got == want) return;
  check::fail("broadcast_shape(" + check::show(a) + ", " + check::show(b) + ") is " + check::show(got) +
                  ", but a + b has shape " + check::show(want),
              hint_for(a, b, got, want));
}

// Every pair of these steps broadcasts: a refusal means the rule is wrong.
const std::vector<std::pair<std::string, std::string>> kRefusedShapesThatBroadcast = {
    {"", "these shapes do broadcast: align them from the right (a missing leading dim counts as size 1), then a "
         "size-1 dim takes the other's size"}};

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
     }, kRefusedShapesThatBroadcast},
    {"missing leading dims: (4, 1, 5) and (3, 1)", [] {
       same_as_ember({4, 1, 5}, {3, 1});
       same_as_ember({5}, {2, 3, 5});
       same_as_ember({8, 1, 6, 1}, {7, 1, 5});
     }, kRefusedShapesThatBroadcast},
    {"zero-size dims: (1) and (0) give (0)", [] {
       same_as_ember({1}, {0});
       same_as_ember({0, 3}, {1, 1});
     }, kRefusedShapesThatBroadcast},
    {"shapes that do not broadcast are an ember::Error naming both", [] {
       expect_error([] { (void)ex1_2::broadcast_shape({2, 3}, {3, 2}); }, {"(2, 3)", "(3, 2)"},
                    "broadcast_shape((2, 3), (3, 2))");
       expect_error([] { (void)ex1_2::broadcast_shape({3}, {0}); }, {"(3)", "(0)"}, "broadcast_shape((3), (0))");
       expect_error([] { (void)ex1_2::broadcast_shape({2, 4, 5}, {3, 5}); }, {"(2, 4, 5)", "(3, 5)"},
                    "broadcast_shape((2, 4, 5), (3, 5))");
     }},
  }};
}
