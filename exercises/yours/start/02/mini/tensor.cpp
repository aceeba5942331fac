// Stage 2: a strided tensor (docs/book/build_your_own/02_strided.md).
// Each MINI_TODO asks a question; replace it with your code, then run
//   bash scripts/build_your_own.sh 2
#include "mini/tensor.h"

#include <algorithm>
#include <string>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)": a shape or an index, for the messages of your refusals (given).
[[maybe_unused]] std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

int64_t numel(const Shape& shape) {
  (void)shape;
  MINI_TODO("how many elements has a tensor of this shape? And one of shape ()?");
}

Shape contiguous_strides(const Shape& shape) {
  (void)shape;
  MINI_TODO("row-major: how far does one step along the last dim move? Along the dim before it?");
}

Index unravel(int64_t k, const Shape& shape) {
  (void)k;
  (void)shape;
  MINI_TODO("count k = 0, 1, 2, ... through the indices like the digits of a number: which digit is the last dim?");
}

Tensor::Tensor(std::vector<double> values, Shape shape) {
  (void)values;
  (void)shape;
  MINI_TODO("a storage of its own holding the values, and which strides and offset? What if the sizes disagree?");
}

int64_t Tensor::position(const Index& index) const {
  (void)index;
  MINI_TODO("where does element [0, 0, ...] live, and how far does each index move from there? "
            "Which indices must be refused?");
}

double& Tensor::at(const Index& index) const {
  (void)index;
  MINI_TODO("the element of the storage at this index's position");
}

std::vector<double> Tensor::values() const { MINI_TODO("every element, in row-major order of its index"); }

bool Tensor::is_contiguous() const {
  MINI_TODO("would a new tensor of this shape lay these elements out the same way? Which strides do not matter?");
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  (void)d0;
  (void)d1;
  MINI_TODO("what changes in (shape, strides, offset) when two dims trade places? What stays the same?");
}

Tensor Tensor::permute(const Shape& dims) const {
  (void)dims;
  MINI_TODO("dim i of the result is dim dims[i] of this tensor: which size and stride does it take? "
            "What is not a permutation?");
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t stop, int64_t step) const {
  (void)d;
  (void)start;
  (void)stop;
  (void)step;
  MINI_TODO("where is the slice's first element? How far is one of its steps along d? How many elements are "
            "there in start, start + step, ... below stop?");
}

Tensor Tensor::expand(const Shape& shape) const {
  (void)shape;
  MINI_TODO("an expanded dim reads the same element for every index along it: which stride does that?");
}

Tensor Tensor::view(const Shape& shape) const {
  (void)shape;
  MINI_TODO("for a contiguous tensor, which strides give the same row-major order with the new shape? "
            "Where does it start? What must be refused, and why?");
}

Tensor Tensor::contiguous() const {
  MINI_TODO("when can this tensor be returned as it is? Otherwise, in which order are the elements copied?");
}

}  // namespace mini
