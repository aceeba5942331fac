// Stage 4 of your framework: autograd on tensors
// (docs/book/build_your_own/04_autograd.md).
//
// A Var is a Tensor of stage 2 with a history. The ops on Vars compute what
// stage 3's ops compute and, when an input requires grad, record a GradNode of
// the backward graph: the op's name, where each input's gradient goes, and
// a function from the gradient of the op's output to the gradients of its
// inputs. backward() walks that graph from the Var it is called on: it runs
// each node once every node that uses its output has passed its part, and
// adds what reaches a leaf into the leaf's grad.
//
//   mini::Var w(mini::Tensor({1, 2, 3}, {3}), true);        // a leaf that requires grad
//   mini::Var x(mini::Tensor({1, 2, 3, 4, 5, 6}, {2, 3}));  // one that does not
//   mini::Var loss = sum(tanh(mul(x, w)));                  // w is broadcast along dim 0
//   loss.backward();                                        // w.grad(): of shape (3)
//
// Gradients add up: a leaf reached twice, in one backward() or in two, gets
// the sum (zero_grad() forgets it). An op saves what its backward needs; a
// Var changed in place (add_) after an op saved it would make that backward
// wrong, so backward() refuses it: each Var counts its versions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mini/ops.h"

namespace mini {

/// A node of the backward graph (GradNode: stage 1's Node is a Value's): the
/// op that made a Var, or a leaf's place for its gradient.
struct GradNode {
  std::string op = "leaf";  // "mul", "sum", ...; "leaf" for a leaf's node
  Shape shape;              // of the Var this node made (or the leaf's)
  /// Where the gradient of each input of the op goes: that input's node, or
  /// nullptr for an input that requires no grad. None for a leaf.
  std::vector<std::shared_ptr<GradNode>> next;
  /// Given d(out)/d(this op's output), of `shape`: d(out)/d(each input), one
  /// tensor for each entry of next, of that input's shape (a tensor for a
  /// nullptr entry may be anything: it is not used). Unset for a leaf.
  std::function<std::vector<Tensor>(const Tensor& grad)> backward;
  /// A leaf's gradient: the sum of what every backward() so far brought it.
  std::optional<Tensor> grad;

  bool is_leaf() const { return !backward; }
};

class Var {
 public:
  /// A leaf: data computed from nothing. backward() fills in its grad when
  /// requires_grad is true.
  explicit Var(Tensor data, bool requires_grad = false);
  /// What an op returns: data, and the node that records how it was made
  /// (nullptr when no input required grad).
  Var(Tensor data, std::shared_ptr<GradNode> node);

  const Tensor& data() const { return data_; }
  const Shape& shape() const { return data_.shape(); }
  /// Whether gradients flow to this Var: it has a node.
  bool requires_grad() const { return node_ != nullptr; }
  const std::shared_ptr<GradNode>& node() const { return node_; }

  /// The gradient of a leaf that requires grad: the sum over the backward()
  /// calls that reached it since the last zero_grad(); none before. A Var an
  /// op made keeps none (as in PyTorch): none.
  std::optional<Tensor> grad() const;
  /// Forgets a leaf's gradient (the next backward() starts it again).
  void zero_grad() const;

  /// d(this)/d(everything it was computed from): the graph walked from this
  /// Var, starting with `grad` (of this Var's shape) as d(out)/d(this).
  /// Refuses a Var that does not require grad, and a grad of another shape.
  void backward(const Tensor& grad) const;
  /// The same with a gradient of 1: only for a Var of one element.
  void backward() const;

  /// In place, and recorded by no node (the way an optimizer updates a
  /// parameter): data += delta, delta broadcast to data's shape. Counts a
  /// new version of this Var.
  void add_(const Tensor& delta) const;
  /// How many times this Var has been changed in place.
  int64_t version() const { return *version_; }
  /// The counter itself, which Saved keeps (copies of a Var share it).
  const std::shared_ptr<int64_t>& version_counter() const { return version_; }

 private:
  Tensor data_;
  std::shared_ptr<GradNode> node_;
  std::shared_ptr<int64_t> version_ = std::make_shared<int64_t>(0);
};

/// A Var's data as an op saves it for its backward, with the version the
/// Var had then.
class Saved {
 public:
  explicit Saved(const Var& v) : data_(v.data()), counter_(v.version_counter()), version_(v.version()) {}
  /// The saved data. Refuses, naming `op`, when the Var has been changed in
  /// place since it was saved: the gradient would be computed from numbers
  /// the forward did not use.
  const Tensor& get(const std::string& op) const;

 private:
  Tensor data_;
  std::shared_ptr<int64_t> counter_;
  int64_t version_;
};

/// The Var an op returns: `data`, recorded as made by `op` from `inputs`
/// with `backward` when one of the inputs requires grad (and not recorded
/// otherwise).
Var record(Tensor data, const std::string& op, const std::vector<Var>& inputs,
           std::function<std::vector<Tensor>(const Tensor& grad)> backward);

// ---- the ops of stage 3, on Vars (the same refusals) ----
Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
Var div(const Var& a, const Var& b);
Var neg(const Var& x);
Var exp(const Var& x);
Var log(const Var& x);
Var tanh(const Var& x);
Var relu(const Var& x);  // its derivative at 0 is taken as 0
Var sum(const Var& x, const Shape& dims = {}, bool keepdim = false);
/// The max along d; its gradient goes to the element that is the max (the
/// first along d, if several are equal).
Var max(const Var& x, int64_t d, bool keepdim = false);

}  // namespace mini
