/// @file
/// Node: one step of the backward graph.
///
/// Every differentiable op that runs while grad mode is on (and sees an input
/// that requires grad) creates one Node subclass — MulBackward, SumBackward, …
/// — and makes it the output's grad_fn. The node keeps:
///   * next: one Edge per input of the forward op, pointing at that input's
///     grad_fn (a non-leaf) or at the leaf tensor itself (whose .grad the
///     engine accumulates into), or empty when the input needs no gradient;
///   * input_shapes: so the engine can sum a broadcast gradient back to each
///     input's shape, in one place (see engine.cpp), instead of in every rule;
///   * the tensors the backward rule needs, as named SavedTensor members;
///   * a weak link to the tensor it computed (for graph export and traces).
///
/// apply(grad_out) returns one gradient per input (undefined = zero / none).
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

/// A tensor kept for backward. It stores a detached alias (same storage, no
/// grad_fn, so saving an op's own output creates no reference cycle) and the
/// storage version at save time, checked when backward reads it.
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& t);  // NOLINT: implicit so nodes can be built from tensors
  /// The saved tensor; throws if it was freed by an earlier backward or
  /// modified in place since it was saved.
  const Tensor& get(const Node& owner) const;
  void release() {
    tensor_ = Tensor();
    released_ = true;
  }
  /// True if a tensor was saved (even if a backward has freed it since: get()
  /// then reports the second backward instead of silently returning nothing).
  bool defined() const { return tensor_.defined() || released_; }
  const Tensor& peek() const { return tensor_; }  // no checks (graph export)
  uint64_t saved_version() const { return version_; }  // the storage's version when it was saved

 private:
  Tensor tensor_;
  uint64_t version_ = 0;
  bool released_ = false;
};

struct Node {
  virtual ~Node();
  virtual const char* name() const = 0;
  virtual std::vector<Tensor> apply(const Tensor& grad_out) = 0;
  /// The SavedTensor members, for freeing after backward and for graph export.
  virtual std::vector<SavedTensor*> saved() { return {}; }
  void release_saved() {
    for (SavedTensor* s : saved()) s->release();
  }

  std::vector<Edge> next;
  std::vector<Shape> input_shapes;
  std::vector<GradHook> hooks;          // hooks on the output tensor (non-leaf)
  /// The tensor this node computed, while it lives (weak: the tensor owns the
  /// node, not the other way round). Graph export and the trace read its
  /// name, shape and values; retain_grad() makes backward store its grad.
  std::weak_ptr<TensorImpl> output;
  bool retains_grad = false;
  // Where the node was recorded, e.g. "blocks.0.attn.softmax" (set only
  // while an inspect/ instrument watches; empty otherwise).
  std::string label;
};

// Each Node subclass names itself once with this macro.
#define EMBER_NODE_NAME(N)                   \
  static constexpr const char* kName = #N;   \
  const char* name() const override { return kName; }

/// True when an op with these inputs must record a node: grad mode is on and
/// some input requires grad.
bool needs_grad(std::initializer_list<Tensor> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

/// Makes `node` the grad_fn of `out`: one edge per input (to the input's
/// grad_fn, or to the input itself when it is a leaf that requires grad), and
/// each input's shape. An op calls it only when needs_grad said so:
///   if (needs_grad({a, b})) record(out, std::make_shared<MulBackward>(b, a), {a, b});
void record(Tensor& out, std::shared_ptr<Node> node, std::initializer_list<Tensor> inputs);
void record(Tensor& out, std::shared_ptr<Node> node, const std::vector<Tensor>& inputs);

/// Releases a node reference without recursion: a 100 000-node chain is torn
/// down by a loop, not by 100 000 nested destructors.
void release_node(std::shared_ptr<Node>&& node);

}  // namespace ember
