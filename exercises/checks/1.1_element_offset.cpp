// Checks exercise 1.1: element_offset against the storage itself, on views of
// every kind, and the refusal of an index that does not fit. A wrong offset is
// compared with the usual mistakes (no storage offset, the strides of a
// contiguous tensor, strides paired in reverse, bytes) to name the one it is.
#include "exercises/checks/check.h"

namespace ex1_1 {
int64_t element_offset(const ember::Tensor& t, const std::vector<int64_t>& index);
}

namespace {

using namespace ember;

// sum of index[d] * strides[d]
int64_t dot(const std::vector<int64_t>& index, const Shape& strides) {
  int64_t s = 0;
  for (size_t d = 0; d < index.size(); ++d) s += index[d] * strides[d];
  return s;
}

// The strides t would have if it were contiguous: row-major, from its shape.
Shape row_major_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// The hint for a wrong offset, from the way it is wrong.
std::string hint_for(const Tensor& t, const std::vector<int64_t>& index, int64_t got) {
  const int64_t start = t.storage_offset(), steps = dot(index, t.stride());
  const Shape contiguous = row_major_strides(t.shape());
  const Shape reversed(t.stride().rbegin(), t.stride().rend());
  if (start != 0 && got == steps)
    return "this view does not start at the storage's first element: a narrow or a select moves its start "
           "further in, and the view remembers where (storage_offset)";
  if (t.stride() != contiguous && (got == start + dot(index, contiguous) || got == dot(index, contiguous)))
    return "you stepped through t as if it were contiguous, with strides made from its shape; a view keeps its "
           "own strides (a transpose swaps them, a step of 2 doubles one, an expand has 0), and they are what "
           "one step along a dim moves";
  if (reversed != t.stride() && got == start + dot(index, reversed))
    return "the strides were paired with the indices in reverse order: index d moves by stride d";
  if (got == 4 * (start + steps) || got == start + 4 * steps)
    return "that counts bytes: the position counts elements (a float32 element is 4 bytes)";
  return "the position is where t's first element lives plus, for every dim, how far the index moves along it";
}

// Every element of t (float32) read through the learner's offset must be the
// element itself (t.to_vector() reads it the library's way, row-major).
void every_element(const Tensor& t, const std::string& what) {
  const std::vector<float> want = t.to_vector<float>();
  const float* storage = static_cast<const float*>(t.storage()->data());
  const int64_t capacity = static_cast<int64_t>(t.storage()->nbytes() / sizeof(float));
  std::vector<int64_t> index(static_cast<size_t>(t.dim()), 0);
  for (size_t flat = 0; flat < want.size(); ++flat) {
    const int64_t off = ex1_1::element_offset(t, index);
    const std::string element = what + ": element " + check::show(Shape(index));
    check::expect(off >= 0 && off < capacity, element + " got offset " + std::to_string(off) +
                                                  ", outside the storage of " + std::to_string(capacity) + " numbers",
                  hint_for(t, index, off));
    check::expect(storage[off] == want[flat],
                  element + " is " + check::num(want[flat]) + ", but the storage at your offset " +
                      std::to_string(off) + " holds " + check::num(storage[off]),
                  hint_for(t, index, off));
    for (int64_t d = t.dim() - 1; d >= 0; --d) {  // the next index, row-major
      if (++index[static_cast<size_t>(d)] < t.size(d)) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

Tensor base() { return arange(24).reshape({2, 3, 4}); }  // element value = its storage position

// Every index these steps ask for fits its tensor: a refusal means the bounds are wrong.
const std::vector<std::pair<std::string, std::string>> kValidIndex = {
    {"element_offset", "every index asked for in this step fits its tensor: at a dim of size n the indices 0 to "
                       "n - 1 fit, and a 0-d tensor takes no index at all"}};

const std::string kNameThem = "the message names the index and the shape, the shape as shape_str writes it: (2, 3, 4)";

}  // namespace

check::Exercise check::exercise() {
  return {"1.1", "Where an element lives", "docs/book/01_tensors.md", {
    {"a contiguous (2, 3, 4) tensor", [] { every_element(base(), "arange(24).reshape({2, 3, 4})"); }, kValidIndex},
    {"a transpose (strides swapped)", [] { every_element(base().transpose(0, 2), "x.transpose(0, 2)"); },
     kValidIndex},
    {"a narrow and a select (the offset moves)", [] {
       every_element(base().narrow(1, 1, 2), "x.narrow(1, 1, 2)");
       every_element(base().select(0, 1), "x.select(0, 1)");
     }, kValidIndex},
    {"a slice with a step of 2", [] { every_element(base().slice(2, 1, 4, 2), "x.slice(2, 1, 4, 2)"); },
     kValidIndex},
    {"an expand (stride 0) and a 0-d tensor", [] {
       every_element(arange(3).reshape({3, 1}).expand({3, 5}), "arange(3).reshape({3, 1}).expand({3, 5})");
       every_element(base().select(0, 1).select(0, 2).select(0, 3), "a 0-d element of x");
     }, kValidIndex},
    {"an index outside the tensor is an ember::Error naming it and the shape", [] {
       expect_error([] { (void)ex1_1::element_offset(base(), {0, 3, 0}); }, {"3", "(2, 3, 4)"},
                    "element_offset(x, {0, 3, 0}) with x of shape (2, 3, 4)",
                    "dim 1 has size 3: which indices fit it? 3 is one past its last element", kNameThem);
       expect_error([] { (void)ex1_1::element_offset(base(), {0, -1, 0}); }, {"-1"}, "element_offset(x, {0, -1, 0})",
                    "an index below 0 does not fit either: does your check look at both ends?", kNameThem);
       expect_error([] { (void)ex1_1::element_offset(base(), {1, 1}); }, {"(2, 3, 4)"},
                    "element_offset(x, {1, 1}): two indices for three dims",
                    "a tensor of three dims needs three indices: is the count checked before the indices are read?",
                    kNameThem);
     }},
  }};
}
