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
///
/// Second derivatives (backward with create_graph): the engine then runs
/// apply() with grad mode on, so the ember ops inside a rule record nodes of
/// their own. A rule written with ember ops (g * b.get(*this)) is
/// differentiable as it stands; a rule with a fused kernel of its own checks
/// is_grad_enabled() (autograd/grad_mode.h: inside apply() it is on exactly
/// when the backward records) and takes its composed formulation instead. The
/// saved tensors keep their place in the graph for this (an input's own
/// handle; the op's output comes back with this node as its grad_fn).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autograd/forward.h"
#include "autograd/grad_mode.h"
#include "tensor/tensor.h"

namespace ember {

struct Edge {
  std::shared_ptr<Node> node;        // the input's grad_fn, or
  std::shared_ptr<TensorImpl> leaf;  // the input itself when it is a leaf
  bool defined() const { return node || leaf; }
};

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

struct Node {
  virtual ~Node();
  virtual const char* name() const = 0;
  virtual std::vector<Tensor> apply(const Tensor& grad_out) = 0;
  /// The SavedTensor members, each with its role: for freeing after backward,
  /// for graph export and the instruments (which show the names).
  virtual std::vector<SavedRef> saved() { return {}; }
  void release_saved() {
    for (SavedTensor* s : saved()) s->release();
  }
  /// Why this rule cannot be differentiated again (backward with
  /// create_graph refuses it, naming the node), or nullptr: it can.
  virtual const char* not_differentiable() const { return nullptr; }

  std::vector<Edge> next;
  std::vector<Shape> input_shapes;
  std::vector<GradHook> hooks;          // hooks on the output tensor (non-leaf)
  /// The tensor this node computed, while it lives (weak: the tensor owns the
  /// node, not the other way round). Graph export and the trace read its
  /// name, shape and values; retain_grad() makes backward store its grad.
  std::weak_ptr<TensorImpl> output;
  bool retains_grad = false;
  /// Recorded while a backward ran with create_graph: a node of the gradient
  /// graph (graph export and the backward trace draw these apart).
  bool in_gradient_graph = false;
  /// The nn::checkpoint whose forward recorded this node (while one runs on
  /// this thread), else null: how it tells its own nodes from the graph
  /// that was there before.
  uint64_t segment = 0;
  // Where the node was recorded, e.g. "blocks.0.attn.softmax" (set only
  // while an inspect/ instrument watches; empty otherwise).
  std::string label;
};

// Each Node subclass names itself once with this macro.
#define EMBER_NODE_NAME(N)                   \
  static constexpr const char* kName = #N;   \
  const char* name() const override { return kName; }

namespace detail {
/// While nn::functional_call runs, these parameters' handles hold other
/// tensors' values and graph links, and lose them again when it returns. A
/// rule that saves one saves an alias of what it holds then (its memory and
/// grad_fn), so that the graph stays right after the handle is restored.
extern thread_local const std::vector<const TensorImpl*>* borrowed_parameters;
}  // namespace detail

/// True when a backward rule must take its composed formulation (ember ops,
/// which record and carry tangents) instead of a fused kernel of its own:
/// backward records (create_graph), or tangents travel through it
/// (forward-over-reverse, inside a DualLevel).
inline bool backward_composes() { return is_grad_enabled() || detail::tangents_propagate(); }

/// RAII, used by the engine for a create_graph walk: every node recorded in
/// its scope is marked in_gradient_graph.
class GradientGraphScope {
 public:
  GradientGraphScope();
  ~GradientGraphScope();
  GradientGraphScope(const GradientGraphScope&) = delete;
  GradientGraphScope& operator=(const GradientGraphScope&) = delete;
};

namespace detail {
/// Stamped on every node recorded on this thread while set (Node::segment).
extern thread_local uint64_t recording_segment;
}  // namespace detail

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
