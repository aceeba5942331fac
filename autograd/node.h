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
/// On a first reading (chapter 2) the struct Node and record() are the whole
/// story; what follows here, NodeMeta and GradientGraphScope belong to later
/// chapters (create_graph: 9; checkpoint segments: 15; labels: 8) and can be
/// skipped.
///
/// Second derivatives (backward with create_graph, chapter 9): the engine then runs
/// apply() with grad mode on, so the ember ops inside a rule record nodes of
/// their own. A rule written with ember ops (g * b.get(*this)) is
/// differentiable as it stands. A rule that is faster than its ember ops (a
/// fused loop, a kernel) is built on one of three helpers, which take the
/// ember-op form themselves when it must record: autograd/elementwise_rule.h,
/// linear_rule.h and composed_rule.h. The saved tensors keep their place in
/// the graph for this (an input's own handle; the op's output comes back with
/// this node as its grad_fn, autograd/saved_tensor.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autograd/saved_tensor.h"
#include "tensor/tensor.h"

namespace ember {

struct Edge {
  std::shared_ptr<Node> node;        // the input's grad_fn, or
  std::shared_ptr<TensorImpl> leaf;  // the input itself when it is a leaf
  bool defined() const { return node || leaf; }
};

/// Where a node was recorded, noted by record() from the state of its thread
/// (later chapters: 8, 9 and 15).
struct NodeMeta {
  /// Recorded while a backward ran with create_graph (GradientGraphScope): a
  /// node of the gradient graph (graph export and the backward trace draw
  /// these apart).
  bool in_gradient_graph = false;
  /// The checkpoint whose forward recorded it (detail::recording_segment,
  /// set by autograd/checkpoint.cpp while one runs on this thread), else 0:
  /// how a checkpoint tells its own nodes from the graph that was there before.
  uint64_t segment = 0;
  /// Where in the model, e.g. "blocks.0.attn.softmax": set by an inspect/
  /// instrument while one watches (AutogradObserver::node_recorded), else "".
  std::string label;
};

struct Node {
  virtual ~Node();
  virtual const char* name() const = 0;
  virtual std::vector<Tensor> apply(const Tensor& grad_out) = 0;
  /// A rule whose one input's gradient is rows of it (a sparse embedding)
  /// may give those rows instead of the dense gradient. The engine asks only
  /// when the input is a leaf that backward() writes into without hooks,
  /// recording or instruments; otherwise, or for nullopt, it calls apply.
  virtual std::optional<RowGrad> apply_rows(const Tensor& /*grad_out*/) { return std::nullopt; }
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
  /// What record() noted of where the node was recorded: read by the
  /// instruments, graph export and checkpoint, never by the engine.
  NodeMeta meta;
};

// Each Node subclass names itself once with this macro.
#define EMBER_NODE_NAME(N)                   \
  static constexpr const char* kName = #N;   \
  const char* name() const override { return kName; }

/// RAII, used by the engine for a create_graph walk: every node recorded in
/// its scope is noted as in_gradient_graph.
class GradientGraphScope {
 public:
  GradientGraphScope();
  ~GradientGraphScope();
  GradientGraphScope(const GradientGraphScope&) = delete;
  GradientGraphScope& operator=(const GradientGraphScope&) = delete;
};

namespace detail {
/// Noted on every node recorded on this thread while set (NodeMeta::segment).
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
