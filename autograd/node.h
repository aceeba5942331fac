// Node: one step of the backward graph.
//
// Every differentiable op that runs while grad mode is on (and sees an input
// that requires grad) creates one Node subclass — MulBackward, SumBackward, …
// — and makes it the output's grad_fn. The node keeps:
//   * next: one Edge per input of the forward op, pointing at that input's
//     grad_fn (a non-leaf) or at the leaf tensor itself (whose .grad the
//     engine accumulates into), or empty when the input needs no gradient;
//   * input_shapes: so the engine can sum a broadcast gradient back to each
//     input's shape, in one place (see engine.cpp), instead of in every rule;
//   * the tensors the backward rule needs, as named SavedTensor members.
//
// apply(grad_out) returns one gradient per input (undefined = zero / none).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

struct Edge {
  std::shared_ptr<Node> node;        // the input's grad_fn, or
  std::shared_ptr<TensorImpl> leaf;  // the input itself when it is a leaf
  bool defined() const { return node || leaf; }
};

// A tensor kept for backward. It stores a detached alias (same storage, no
// grad_fn, so saving an op's own output creates no reference cycle) and the
// storage version at save time, checked when backward reads it.
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& t);  // NOLINT: implicit so nodes can be built from tensors
  // The saved tensor; throws if it was freed by an earlier backward or
  // modified in place since it was saved.
  const Tensor& get(const Node& owner) const;
  void release() {
    tensor_ = Tensor();
    released_ = true;
  }
  // True if a tensor was saved (even if a backward has freed it since: get()
  // then reports the second backward instead of silently returning nothing).
  bool defined() const { return tensor_.defined() || released_; }
  const Tensor& peek() const { return tensor_; }  // no checks (graph export)

 private:
  Tensor tensor_;
  uint64_t version_ = 0;
  bool released_ = false;
};

struct Node {
  virtual ~Node();
  virtual const char* name() const = 0;
  virtual std::vector<Tensor> apply(const Tensor& grad_out) = 0;
  // The SavedTensor members, for freeing after backward and for graph export.
  virtual std::vector<SavedTensor*> saved() { return {}; }
  void release_saved() {
    for (SavedTensor* s : saved()) s->release();
  }

  std::vector<Edge> next;
  std::vector<Shape> input_shapes;
  std::vector<GradHook> hooks;          // hooks on the output tensor (non-leaf)
  std::weak_ptr<TensorImpl> retained;   // set by retain_grad() on the output
};

// Each Node subclass names itself once with this macro.
#define EMBER_NODE_NAME(N)                   \
  static constexpr const char* kName = #N;   \
  const char* name() const override { return kName; }

// Every node type that record<N>() can create, by name (filled at load time,
// used by the op-registry test to find ops missing from the registry).
std::vector<std::string>& node_type_names();
bool register_node_type(const char* name);
template <typename N>
inline const bool node_type_registered = register_node_type(N::kName);

// True when an op with these inputs must record a node.
bool needs_grad(std::initializer_list<Tensor> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

// Connects a new node N (constructed from args) to `inputs` and makes it
// `out`'s grad_fn, when grad mode is on and an input requires grad.
// (A template so that an op's forward can sit above its Node's definition:
// it is instantiated at the end of the file.)
template <typename N, typename Inputs, typename... Args>
void record_node(Tensor& out, const Inputs& inputs, Args&&... args) {
  (void)node_type_registered<N>;
  if (!needs_grad(inputs)) return;
  auto node = std::make_shared<N>(std::forward<Args>(args)...);
  node->next.reserve(inputs.size());
  node->input_shapes.reserve(inputs.size());
  for (const Tensor& in : inputs) {
    Edge e;
    if (in.defined() && in.requires_grad()) {
      if (in.grad_fn()) e.node = in.grad_fn();
      else e.leaf = in.impl_ptr();
    }
    node->next.push_back(std::move(e));
    node->input_shapes.push_back(in.defined() ? in.shape() : Shape{});
  }
  out.impl()->grad_fn = std::move(node);
  out.impl()->requires_grad = true;
}
template <typename N, typename... Args>
void record(Tensor& out, std::initializer_list<Tensor> inputs, Args&&... args) {
  record_node<N>(out, inputs, std::forward<Args>(args)...);
}
template <typename N, typename... Args>
void record(Tensor& out, const std::vector<Tensor>& inputs, Args&&... args) {
  record_node<N>(out, inputs, std::forward<Args>(args)...);
}

// Releases a node reference without recursion: a 100 000-node chain is torn
// down by a loop, not by 100 000 nested destructors.
void release_node(std::shared_ptr<Node>&& node);

}  // namespace ember
