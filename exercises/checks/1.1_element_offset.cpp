// Checks exercise 1.1: element_offset against the storage itself, on views of
// every kind, and the refusal of an index that does not fit.
#include "exercises/checks/check.h"

namespace ex1_1 {
int64_t element_offset(const ember::Tensor& t, const std::vector<int64_t>& index);
}

namespace {

using namespace ember;

// Every element of t (float32) read through the learner's offset must be the
// element itself (t.to_vector() reads it the library's way, row-major).
void every_element(const Tensor& t, const std::string& what) {
  const std::vector<float> want = t.to_vector<float>();
  const float* storage = static_cast<const float*>(t.storage()->data());
  std::vector<int64_t> index(static_cast<size_t>(t.dim()), 0);
  for (size_t flat = 0; flat < want.size(); ++flat) {
    const int64_t off = ex1_1::element_offset(t, index);
    const int64_t capacity = static_cast<int64_t>(t.storage()->nbytes() / sizeof(float));
    check::expect(off >= 0 && off < capacity, what + ": element " + check::show(Shape(index)) + " got offset " +
                                                  std::to_string(off) + ", outside the storage of " +
                                                  std::to_string(capacity) + " numbers");
    check::expect(storage[off] == want[flat],
                  what + ": element " + check::show(Shape(index)) + " is " + check::num(want[flat]) +
                      ", but the storage at your offset " + std::to_string(off) + " holds " + check::num(storage[off]),
                  "offset = storage_offset() + sum of index[d] * stride()[d]");
    for (int64_t d = t.dim() - 1; d >= 0; --d) {  // the next index, row-major
      if (++index[static_cast<size_t>(d)] < t.size(d)) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

Tensor base() { return arange(24).reshape({2, 3, 4}); }  // element value = its storage position

}  // namespace

check::Exercise check::exercise() {
  return {"1.1", "Where an element lives", "docs/book/01_tensors.md", {
    {"a contiguous (2, 3, 4) tensor", [] { every_element(base(), "arange(24).reshape({2, 3, 4})"); }},
    {"a transpose (strides swapped)", [] { every_element(base().transpose(0, 2), "x.transpose(0, 2)"); }},
    {"a narrow and a select (the offset moves)", [] {
       every_element(base().narrow(1, 1, 2), "x.narrow(1, 1, 2)");
       every_element(base().select(0, 1), "x.select(0, 1)");
     }},
    {"a slice with a step of 2", [] { every_element(base().slice(2, 1, 4, 2), "x.slice(2, 1, 4, 2)"); }},
    {"an expand (stride 0) and a 0-d tensor", [] {
       every_element(arange(3).reshape({3, 1}).expand({3, 5}), "arange(3).reshape({3, 1}).expand({3, 5})");
       every_element(base().select(0, 1).select(0, 2).select(0, 3), "a 0-d element of x");
     }},
    {"an index outside the tensor is an ember::Error naming it and the shape", [] {
       expect_error([] { (void)ex1_1::element_offset(base(), {0, 3, 0}); }, {"3", "(2, 3, 4)"},
                    "element_offset(x, {0, 3, 0}) with x of shape (2, 3, 4)");
       expect_error([] { (void)ex1_1::element_offset(base(), {0, -1, 0}); }, {"-1"}, "element_offset(x, {0, -1, 0})");
       expect_error([] { (void)ex1_1::element_offset(base(), {1, 1}); }, {"(2, 3, 4)"},
                    "element_offset(x, {1, 1}): two indices for three dims");
     }},
  }};
}
