// Stage 4: autograd on tensors (docs/book/build_your_own/04_autograd.md).
// Each MINI_TODO asks a question; replace it with your code, then run
//   bash scripts/build_your_own.sh 4
#include "mini/autograd.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)": a shape, for the messages of your refusals (given).
[[maybe_unused]] std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

// ---- given: a Var's plumbing ----

Var::Var(Tensor data, bool requires_grad) : data_(std::move(data)) {
  if (requires_grad) {
    node_ = std::make_shared<GradNode>();
    node_->shape = data_.shape();
  }
}

Var::Var(Tensor data, std::shared_ptr<GradNode> node) : data_(std::move(data)), node_(std::move(node)) {}

std::optional<Tensor> Var::grad() const {
  if (!node_ || !node_->is_leaf()) return std::nullopt;
  return node_->grad;
}

void Var::zero_grad() const {
  if (node_) node_->grad.reset();
}

// ---- yours ----

void Var::add_(const Tensor& delta) const {
  (void)delta;
  MINI_TODO("which numbers change, through which view, and what must a Saved that holds this Var's data learn "
            "about it? (What if data_ is an expanded view?)");
}

const Tensor& Saved::get(const std::string& op) const {
  (void)op;
  MINI_TODO("when is the saved data still the data the forward used?");
}

Var record(Tensor data, const std::string& op, const std::vector<Var>& inputs,
           std::function<std::vector<Tensor>(const Tensor& grad)> backward) {
  (void)data;
  (void)op;
  (void)inputs;
  (void)backward;
  MINI_TODO("when does the result need a node at all? What must its node know to send each input its gradient, "
            "and to check the gradient's shape?");
}

void Var::backward(const Tensor& grad) const {
  (void)grad;
  MINI_TODO("when may a node pass its gradient on? How do you know that every node which uses its output has "
            "already added its part? And what happens to a gradient that reaches a leaf twice?");
}

void Var::backward() const {
  MINI_TODO("which gradient is implied, and for which Vars can it be?");
}

// ---- the ops: the forward of stage 3, and the gradient of each input ----

Var add(const Var& a, const Var& b) {
  (void)a;
  (void)b;
  MINI_TODO("what does each element of a contribute to the output, and how many times, when a was broadcast?");
}

Var sub(const Var& a, const Var& b) {
  (void)a;
  (void)b;
  MINI_TODO("as add: what changes for b?");
}

Var mul(const Var& a, const Var& b) {
  (void)a;
  (void)b;
  MINI_TODO("what must the backward keep from the forward, and how does it know the numbers are still those?");
}

Var div(const Var& a, const Var& b) {
  (void)a;
  (void)b;
  MINI_TODO("how does a/b move when a moves, and when b moves?");
}

Var neg(const Var& x) {
  (void)x;
  MINI_TODO("the simplest backward: which one is it?");
}

Var exp(const Var& x) {
  (void)x;
  MINI_TODO("what is the derivative of e^x, and what do you keep to compute it?");
}

Var log(const Var& x) {
  (void)x;
  MINI_TODO("what is the derivative of log x?");
}

Var tanh(const Var& x) {
  (void)x;
  MINI_TODO("tanh's derivative is easiest written with tanh itself: of what?");
}

Var relu(const Var& x) {
  (void)x;
  MINI_TODO("which elements let the gradient through?");
}

Var sum(const Var& x, const Shape& dims, bool keepdim) {
  (void)x;
  (void)dims;
  (void)keepdim;
  MINI_TODO("each element of x went into one element of the result: which? Without keepdim, which dims does g "
            "lack to line up with x's?");
}

Var max(const Var& x, int64_t d, bool keepdim) {
  (void)x;
  (void)d;
  (void)keepdim;
  MINI_TODO("which elements of x moved the result, if one of them moves a little?");
}

}  // namespace mini
