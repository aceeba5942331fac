/// @file
/// BackwardTrace: what the engine did, node by node.
///
///   inspect::BackwardTrace trace;           // watching starts here
///   Tensor loss = model.loss(x, y);         // forward: nodes get their labels
///   loss.backward();                        // the trace fills
///   trace.print(std::cout);                 // a table, one row per node
///   trace.to_html("backward.html");         // a page to step through
///
/// For each node, in the order the engine ran it: its name, where it was
/// recorded (the op with its module path, "blocks.0.attn.softmax"), the
/// gradient that arrived for its output, the saved tensors it read (each by
/// its role in the op: "x", "weight", "output"), what it sent along each
/// edge and to whom, and its time. A leaf is named by its own name, or by
/// name_leaves(), or by the module that registered it as a parameter
/// ("blocks.0.attn.w_q.weight"): any model's parameters are named without
/// being told. Leaves show the total
/// their .grad received; provenance(leaf) splits a leaf's gradient into the
/// parts that each node sent (their sum is the .grad this backward wrote, bit
/// for bit). A backward that throws (a version error, an anomaly) leaves a
/// consistent partial trace ending at the failing node.
///
/// The trace keeps the last backward pass run while it exists.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "inspect/hub.h"

namespace ember::inspect {

/// A tensor in a few numbers: shape, dtype, L2 norm, range and first values.
struct TensorSummary {
  Shape shape;
  DType dtype = kFloat32;
  int64_t numel = 0;
  double norm = 0, min = 0, max = 0;  // over the finite values
  int64_t nonfinite = 0;              // NaN and Inf values
  std::vector<double> first;          // the first values, row-major
  static TensorSummary of(const Tensor& t, int64_t first_values = 6);
  /// "(2, 3) |g| 1.23 in [-0.5, 0.9]: 0.1, 0.2, ..."
  std::string text() const;
};

/// A saved tensor that a node's rule read.
struct SavedUse {
  std::string name;  // its role in the op's formula: "x", "weight", "output" (Node::saved())
  Shape shape;
  DType dtype = kFloat32;
  uint64_t version_saved = 0, version_now = 0;  // equal, or backward fails
};

/// What a node sent along one edge.
struct TraceEdge {
  size_t input = 0;            // which input of the forward op
  bool to_leaf = false;
  const void* target = nullptr;  // the receiving node or leaf (an identity, for the page's graph)
  std::string target_name;     // "MulBackward", or the leaf's name ("leaf" when unnamed)
  TensorSummary grad;
};

struct TraceStep {
  int64_t step = 0;            // 0, 1, ... in the order the engine ran the nodes
  const void* node = nullptr;  // identity, while the graph lives
  std::string name;            // "MulBackward"
  std::string label;           // where it was recorded: "blocks.0.attn.softmax" ("" if not traced forward)
  bool gradient_graph = false; // recorded by an earlier backward with create_graph (a second derivative)
  TensorSummary grad_in;       // the gradient that arrived for the node's output
  std::vector<SavedUse> saved;
  std::vector<TraceEdge> sent;
  std::optional<TensorSummary> forward;  // the node's output when it was computed (Options::forward_values)
  double ms = 0;               // time in the node, including the ops its rule ran
  std::string error;           // set on the step where backward failed
};

/// A leaf's total gradient from this backward.
struct LeafGrad {
  const void* leaf = nullptr;
  std::string name;
  TensorSummary total;
  int64_t after_step = 0;      // accumulated once the whole graph had run
};

class BackwardTrace : public Instrument {
 public:
  struct Options {
    bool forward_values = false;  // also keep each recorded tensor's forward value
    int64_t first_values = 6;     // how many values a summary keeps
  };
  explicit BackwardTrace(Options options);
  BackwardTrace();
  ~BackwardTrace() override;

  /// Names for leaves that have none of their own (set_name), used from the
  /// next event on. A module's parameters need none: the trace asks the
  /// module that registered them ("blocks.0.attn.w_q.weight"); this is for
  /// tensors outside modules, or to name parameters differently.
  void name_leaves(const std::vector<std::pair<std::string, Tensor>>& named);

  const std::vector<TraceStep>& steps() const { return steps_; }
  const std::vector<LeafGrad>& leaves() const { return leaves_; }
  /// True when the backward ran to the end; false: it failed at steps().back().
  bool complete() const { return complete_; }

  /// A readable table: one row per node, then the leaves.
  void print(std::ostream& os) const;
  /// One self-contained HTML file (no network): the graph as SVG (Graphviz)
  /// with Prev / Next / Play and the arrow keys; the page opens at step N
  /// with ?step=N. Error naming the path if Graphviz's `dot` or the file
  /// cannot be used.
  void to_html(const std::string& path) const;

  /// One node's contribution to a leaf's gradient.
  struct GradPart {
    int64_t step = 0;
    std::string node, label;
    Tensor grad;                 // exactly what the node sent
    double norm = 0;
    std::vector<int64_t> rows;   // for a 2-D leaf: the rows the part touches (non-zero)
  };
  /// The parts of leaf's gradient in the order they arrived. Error if the
  /// leaf received nothing in the traced backward.
  std::vector<GradPart> provenance(const Tensor& leaf) const;
  /// The parts added up in the engine's order: equal, bit for bit, to the
  /// .grad the backward wrote into a leaf whose .grad was empty before.
  static Tensor sum(const std::vector<GradPart>& parts);

  // ---- the events it records (AutogradObserver) ----
  void node_recorded(Node& node, const Tensor& out) override;
  void backward_begin(const Tensor& root) override;
  void node_begin(const Node& node, const Tensor& grad_out) override;
  void node_sent(const Node& node, size_t edge, const Tensor& grad) override;
  void node_end(const Node& node) override;
  void node_failed(const Node& node, const std::string& error) override;
  void leaf_accumulated(const TensorImpl& leaf, const Tensor& total) override;
  void backward_end(bool ok) override;

 private:
  struct Part {
    const void* leaf;
    int64_t step;
    Tensor grad;
  };
  Options options_;
  std::vector<TraceStep> steps_;
  std::vector<LeafGrad> leaves_;
  std::vector<Part> parts_;
  std::vector<std::pair<const void*, TensorSummary>> forward_values_;  // by node, from the forward
  std::vector<std::pair<const void*, std::string>> leaf_names_;        // from name_leaves
  // The last gradient sent to each node not yet run, and its summary.
  std::unordered_map<const Node*, std::pair<std::weak_ptr<TensorImpl>, TensorSummary>> sent_to_;
  std::string leaf_name(const TensorImpl& leaf) const;
  bool complete_ = false;
  int depth_ = 0;         // nested backward passes (a hook's) are not traced
  double step_start_ = 0;
  double bookkeeping_ms_ = 0;  // the trace's own time inside the running node, less the others' at its start
};

}  // namespace ember::inspect
