/// @file
/// SavedTensor: a tensor a backward rule keeps from the forward, checked
/// against its version when the rule reads it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

/// A tensor kept for backward, and the storage version at save time, checked
/// when backward reads it. An input is kept as itself (its grad_fn too, for
/// a derivative of the gradient). The op's own output is kept as a detached
/// alias (same storage, no grad_fn: no reference cycle through the node)
/// and a weak link to the node, which record() sets.
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& t);  // NOLINT: implicit so nodes can be built from tensors
  /// The saved tensor; throws if it was freed by an earlier backward or
  /// modified in place since it was saved. While backward records
  /// (create_graph), the op's output comes back with its node as grad_fn.
  Tensor get(const Node& owner) const;
  void release() {
    tensor_ = Tensor();
    released_ = true;
  }
  /// Called by record() when this is the output of the node it saves for.
  void mark_output(const std::shared_ptr<Node>& owner);
  /// True if a tensor was saved (even if a backward has freed it since: get()
  /// then reports the second backward instead of silently returning nothing).
  bool defined() const { return tensor_.defined() || released_; }
  const Tensor& peek() const { return tensor_; }  // no checks (graph export)
  uint64_t saved_version() const { return version_; }  // the storage's version when it was saved
  /// True if record() marked this as the output of the node that saved it
  /// (mark_output set output_of_: its owner is not the empty one's).
  bool is_output() const {
    const std::weak_ptr<Node> none;
    return output_of_.owner_before(none) || none.owner_before(output_of_);
  }

 private:
  Tensor tensor_;
  uint64_t version_ = 0;
  bool released_ = false;
  std::weak_ptr<Node> output_of_;  // set for the node's own output
};

/// A node's name, for the errors of SavedTensor::get (Node::name(), defined
/// with Node in autograd/node.cpp: a SavedTensor needs nothing else of it).
const char* node_name(const Node& node);

/// One entry of Node::saved(): a SavedTensor member and its role in the op,
/// the name its formula gives it ("x", "weight", "output"; "a" and "b" for
/// the operands of a * b). Converts to the SavedTensor* itself, so a loop
/// that needs only the tensors reads `for (SavedTensor* s : node.saved())`.
struct SavedRef {
  const char* name;
  SavedTensor* tensor;
  operator SavedTensor*() const { return tensor; }  // NOLINT: see above
  SavedTensor* operator->() const { return tensor; }
};

namespace detail {
/// Set by nn::functional_call (nn/functional_call.cpp), read by SavedTensor's
/// constructor. While functional_call runs, these parameters' handles hold other
/// tensors' values and graph links, and lose them again when it returns. A
/// rule that saves one saves an alias of what it holds then (its memory and
/// grad_fn), so that the graph stays right after the handle is restored.
extern thread_local const std::vector<const TensorImpl*>* borrowed_parameters;
}  // namespace detail

}  // namespace ember
