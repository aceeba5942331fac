/// @file
/// The hooks through which inspect/ watches autograd work: ops and modules
/// running forward, nodes being recorded, the backward pass node by node,
/// and which tensors hold gradients, saved activations or optimizer state.
///
/// One pointer, autograd_observer(), null unless an instrument runs: every
/// hook in the library is `if (AutogradObserver* o = autograd_observer())
/// o->...`, so watching costs nothing when nobody watches. The calls arrive
/// on the thread that runs the ops (ember's own worker threads never call).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "autograd/op_args.h"
#include "tensor/tensor.h"

namespace ember {

/// What the memory a tensor's storage holds is for (inspect/'s timeline).
/// Instruments: tensors an instrument itself keeps alive (the backward
/// trace's copies of what each node sent to a leaf), not the program's.
enum class MemoryKind { Parameters, Gradients, OptimizerState, SavedForBackward, Temporaries, Instruments };
const char* memory_kind_name(MemoryKind k);

struct AutogradObserver {
  virtual ~AutogradObserver() = default;

  // ---- forward ----
  /// An op (OpScope, autograd/op_scope.h) starts / ends.
  virtual void op_begin(const char* /*op*/, const std::vector<const Tensor*>& /*inputs*/) {}
  virtual void op_end(const char* /*op*/) {}
  /// Whether this observer wants each op's arguments and results (compile/'s
  /// tracer does; the profiler does not, and costs no copies).
  virtual bool wants_calls() const { return false; }
  /// Right after op_begin, if wants_calls(): every argument of the op, in
  /// the order of its parameters (tensors and the rest: dims, scalars, flags).
  virtual void op_call(const char* /*op*/, const std::vector<OpArg>& /*args*/) {}
  /// Right before op_end, if wants_calls(): what the op returns (two tensors
  /// for max(x, d)). An op that ends without it (an error, or an op with no
  /// result to hand over, such as an in-place one) reports none.
  virtual void op_results(const char* /*op*/, const std::vector<Tensor>& /*results*/) {}
  /// An in-place method (fill_, add_, copy_, ...) is about to write into t.
  virtual void writes_in_place(const char* /*op*/, const Tensor& /*t*/) {}
  /// A module's forward starts / ends (ModuleScope, nn/module.h); `path` is
  /// its dotted name in the tree ("blocks.0.attn"), "" for the root.
  virtual void module_begin(const std::string& /*path*/, const std::string& /*type*/) {}
  virtual void module_end() {}
  /// The current op just recorded `node` as out's grad_fn. The observer may
  /// set node.meta.label (e.g. "blocks.0.attn.softmax").
  virtual void node_recorded(Node& /*node*/, const Tensor& /*out*/) {}

  // ---- backward (autograd/engine.cpp) ----
  virtual void backward_begin(const Tensor& /*root*/) {}
  /// Right after backward_begin, when the pass will write the leaves' .grad
  /// (backward(), not grad()); nothing has run or changed yet.
  virtual void backward_into_grad() {}
  /// A node starts, with the gradient that arrived for its output.
  virtual void node_begin(const Node& /*node*/, const Tensor& /*grad_out*/) {}
  /// What the node sent along edge i (already summed to the input's shape).
  virtual void node_sent(const Node& /*node*/, size_t /*edge*/, const Tensor& /*grad*/) {}
  virtual void node_end(const Node& /*node*/) {}
  /// The node threw (a version error, an anomaly); backward stops there.
  virtual void node_failed(const Node& /*node*/, const std::string& /*error*/) {}
  /// The total gradient of a leaf, just added into its .grad.
  virtual void leaf_accumulated(const TensorImpl& /*leaf*/, const Tensor& /*total*/) {}
  virtual void backward_end(bool /*ok*/) {}
  /// Whether this observer reads the gradients nodes send (a trace does; a
  /// profiler does not). If it does, every rule gives its dense gradient,
  /// none the rows of one (Node::apply_rows), so that it sees every part.
  virtual bool reads_gradients() const { return true; }

  // ---- what memory is for ----
  /// t's storage holds `kind` (a saved tensor, a new .grad, optimizer state).
  virtual void tag_memory(const Tensor& /*t*/, MemoryKind /*kind*/) {}
};

namespace detail {
extern std::atomic<AutogradObserver*> autograd_observer_ptr;  // constant-initialized to null
}
/// The observer in effect, or null: `if (AutogradObserver* o = autograd_observer()) o->...`.
inline AutogradObserver* autograd_observer() { return detail::autograd_observer_ptr.load(std::memory_order_relaxed); }
/// Installs `o` (nullptr: none). Called by inspect/'s hub only.
inline void set_autograd_observer(AutogradObserver* o) {
  detail::autograd_observer_ptr.store(o, std::memory_order_relaxed);
}

}  // namespace ember
