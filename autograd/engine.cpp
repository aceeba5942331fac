// The backward engine, in the four steps of chapter 2, in the order they
// run (BackwardPass::run below; 1, 3 and 4 are one function each):
//
//   1. count_dependencies — for every node reachable from the roots, how
//      many edges point at it. A node may run only when every consumer of
//      its output has sent it a share: then its gradient is the whole sum.
//      (An explicit stack, no recursion: a 100 000-node chain is fine.)
//   2. the roots' nodes start with their seeds (1 for a one-element loss).
//   3. run_ready_nodes — take a node whose count has reached zero, call its
//      rule (apply), sum each input's gradient back to the input's shape
//      (broadcasting is undone here and only here), add it to that input's
//      node — or, for a leaf, to the leaf's running total — and count the
//      node down.
//   4. deliver_to_leaves — each leaf's total, through the leaf's hooks, into
//      its .grad (backward) or into the result (grad).
//
// grad() (chapter 9) runs one more step between 1 and 3, prune_to_inputs:
// only the nodes on a path to one of its inputs need their rules run.
//
// Unless retain_graph, each node frees what it saved once the pass is past
// it: the activations of a training step go as backward walks by them.
// Nothing is written to a .grad before step 4, so an error in step 3
// leaves every .grad as it was.
//
// create_graph (chapter 9; skip it on a first reading): the same walk with grad mode on, so the ops inside every rule
// record nodes of their own and the gradients can be differentiated again.
// The sums (broadcast undone, several consumers, .grad) then use the
// differentiable ops instead of the kernels. A rule that cannot be
// differentiated says so (Node::not_differentiable) instead of returning a
// gradient whose own derivative would be silently wrong.
//
// The instruments of inspect/ watch through AutogradObserver: `watcher_` is
// null unless one runs, and every call to it is one line beside the step it
// reports.
#include "autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "autograd/forward.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/observer.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

namespace {

Tensor run_hooks(const std::vector<GradHook>& hooks, Tensor g) {
  for (const GradHook& h : hooks) {
    if (std::optional<Tensor> r = h(g)) {
      EMBER_CHECK(r->defined() && r->shape() == g.shape(), "register_hook",
                  "hook returned a gradient of shape " << (r->defined() ? shape_str(r->shape()) : "undefined")
                                                       << " for a tensor of shape " << shape_str(g.shape()));
      g = *r;
    }
  }
  return g;
}

// leaf.grad += g (first time: takes g itself when nothing else refers to it).
// In place only into a .grad that is ember's alone: recording (create_graph),
// a .grad with a graph of its own, or one the caller still holds, gets a new
// tensor instead, so what someone holds is never changed under them.
// Whether g is a contiguous tensor no one else refers to, so that it may
// become a .grad (or be added into) as it is.
bool held_alone(const Tensor& g) {
  return g.impl_ptr().use_count() == 1 && g.storage().use_count() == 1 && g.is_contiguous() &&
         g.storage()->nbytes() == static_cast<size_t>(g.numel()) * dtype_size(g.dtype());
}

void accumulate(TensorImpl* leaf, Tensor g, bool create_graph) {
  densify_row_grad(*leaf);  // rows an earlier backward left: the sum is dense now
  const bool shared = grad_is_shared(leaf->grad);
  if (create_graph) {
    leaf->grad = leaf->grad.defined() ? add(leaf->grad, g) : g;
    // As PyTorch does, once: the new .grad's graph refers to the leaf.
    static std::atomic<bool> warned{false};
    if (leaf->grad.grad_fn() && !warned.exchange(true))
      std::fprintf(stderr,
                   "ember warning: backward(create_graph=true) wrote a .grad with a graph of its own, and that graph "
                   "refers to the tensor whose .grad it is: the two keep each other in memory until the .grad is reset "
                   "(zero_grad(), set_grad(Tensor())) or its nn::Module is destroyed. grad(outputs, inputs, "
                   "{.create_graph = true}) gives the same gradient without the cycle. (printed once)\n");
  } else if (shared) {
    leaf->grad = kernel::binary(kernel::Binary::Add, leaf->grad.detach(), g);
  } else if (!leaf->grad.defined()) {
    leaf->grad = held_alone(g) ? g : kernel::to(g, g.dtype());  // a contiguous copy of its own
  } else {
    kernel::binary_(kernel::Binary::Add, leaf->grad, g);  // in place, one pass
  }
}

// leaf.grad += rows: into a dense .grad when there is one (under the same
// rule as accumulate's), otherwise kept as rows until someone reads .grad().
// Each pass's rows are one chunk of distinct ids, so that reading .grad()
// later adds pass by pass, as the dense gradients would have been added.
void accumulate_rows(TensorImpl* leaf, RowGrad rows) {
  leaf->row_grad.push_back(std::move(rows));
  if (leaf->grad.defined()) densify_row_grad(*leaf);
}

bool all_finite(const Tensor& g) {
  return EMBER_DISPATCH_FLOAT(g.dtype(), "anomaly", [&]<typename T>() {
    for (T v : g.to_vector<T>())
      if (!std::isfinite(v)) return false;
    return true;
  });
}

// What a pass computes: every leaf's .grad (backward), or the gradients of
// chosen tensors (grad), which may be leaves or intermediate results.
struct Targets {
  bool into_grad = true;                                 // backward(): into the leaves' .grad
  bool stop_at_inputs = false;                           // partial_grad(): the walk ends at each input
  std::unordered_map<const Node*, size_t> nodes;         // grad(): an intermediate input, by its grad_fn
  std::unordered_map<const TensorImpl*, size_t> leaves;  // grad(): a leaf input
  std::vector<Tensor> result;                            // grad(): one per input
};

// Each leaf's running total, in the order gradients first reached the leaves.
struct LeafTotal {
  TensorImpl* leaf;
  Tensor dense;               // undefined when only rows reached the leaf
  std::vector<RowGrad> rows;  // from rules that gave rows (Node::apply_rows)
};
struct LeafTotals {
  std::unordered_map<TensorImpl*, size_t> index;
  std::vector<LeafTotal> totals;
};

class BackwardPass {
 public:
  BackwardPass(Targets& targets, bool retain_graph, bool create_graph)
      : targets_(targets), retain_graph_(retain_graph || create_graph), create_graph_(create_graph),
        watcher_(autograd_observer()) {}

  void run(const std::vector<Tensor>& roots, const std::vector<Tensor>& seeds) {
    GradModeGuard mode(create_graph_);  // rules record nodes only when asked to...
    std::optional<GradientGraphScope> marking;  // ... and those belong to the gradient graph
    if (create_graph_) marking.emplace();
    if (watcher_) {
      watcher_->backward_begin(roots.front());
      if (targets_.into_grad) watcher_->backward_into_grad();  // before any node runs or any .grad changes
    }
    try {
      count_dependencies(roots);
      if (!targets_.into_grad) prune_to_inputs();
      start_at_roots(roots, seeds);
      run_ready_nodes();
      deliver_to_leaves();
    } catch (...) {
      if (watcher_) watcher_->backward_end(false);
      throw;
    }
    if (watcher_) watcher_->backward_end(true);
  }

 private:
  // ---- step 1 ----
  void count_dependencies(const std::vector<Tensor>& roots) {
    std::vector<Node*> stack;
    for (const Tensor& r : roots)
      if (r.grad_fn() && deps_.try_emplace(r.grad_fn().get(), 0).second) stack.push_back(r.grad_fn().get());
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      if (boundary(n)) continue;  // partial_grad: what lies behind an input is not entered
      for (const Edge& e : n->next) {
        if (!e.node) continue;
        auto [it, first_visit] = deps_.try_emplace(e.node.get(), 0);
        ++it->second;
        if (first_visit) stack.push_back(e.node.get());
      }
    }
  }

  // ---- grad() only: which rules lead to an input ----
  // A node leads to an input when one of its edges goes to an input, or to a
  // node that leads to one. Each answer needs the answers of the nodes it
  // sends to, so they are decided in reverse topological order (Kahn's
  // algorithm on a copy of the counts of step 1).
  void prune_to_inputs() {
    std::unordered_map<Node*, int> left = deps_;
    std::vector<Node*> order, ready;
    for (auto& [n, d] : left)
      if (d == 0) ready.push_back(n);
    while (!ready.empty()) {
      Node* n = ready.back();
      ready.pop_back();
      order.push_back(n);
      if (boundary(n)) continue;
      for (const Edge& e : n->next)
        if (e.node && --left[e.node.get()] == 0) ready.push_back(e.node.get());
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (boundary(*it)) continue;
      for (const Edge& e : (*it)->next)
        if ((e.node && (is_input(e.node.get()) || leads_to_input_.count(e.node.get()))) ||
            (e.leaf && targets_.leaves.count(e.leaf.get()))) {
          leads_to_input_.insert(*it);
          break;
        }
    }
  }
  bool is_input(const Node* n) const { return targets_.nodes.count(n) > 0; }
  // partial_grad(): an input's node ends the walk; it belongs to a graph
  // this pass does not run (nothing of it is counted, run or freed).
  bool boundary(const Node* n) const { return targets_.stop_at_inputs && is_input(n); }
  // Whether n's rule runs: always for backward(); for grad(), only on a path
  // to an input (an input's own node only records the gradient it received).
  bool rule_needed(const Node* n) const { return targets_.into_grad || leads_to_input_.count(n) > 0; }

  // ---- step 3 (step 2, the seeds, is in run) ----
  void start_at_roots(const std::vector<Tensor>& roots, const std::vector<Tensor>& seeds) {
    for (size_t i = 0; i < roots.size(); ++i) {
      if (Node* n = roots[i].grad_fn().get()) add_to_node(n, seeds[i]);
      else add_to_leaf(roots[i].impl(), seeds[i]);  // a leaf root: its gradient is the seed
    }
    // The roots' nodes are the ones nothing points at; the first root runs
    // first (ready_ is a stack).
    for (const Tensor& r : roots) {
      Node* n = r.grad_fn().get();
      if (n && deps_[n] == 0 && std::find(ready_.begin(), ready_.end(), n) == ready_.end()) ready_.push_back(n);
    }
    std::reverse(ready_.begin(), ready_.end());
  }

  void run_ready_nodes() {
    while (!ready_.empty()) {
      Node* n = ready_.back();
      ready_.pop_back();
      auto arrived = buffer_.find(n);
      if (arrived == buffer_.end() || !(rule_needed(n) || is_input(n))) {
        // No gradient reached n (every path into it was zero), or grad()
        // does not need it.
        if (arrived != buffer_.end()) buffer_.erase(arrived);
        pass_over(n);
        continue;
      }
      // A boundary's hooks are the caller's: its engine runs them on the total.
      Tensor g = boundary(n) ? std::move(arrived->second) : run_hooks(n->hooks, std::move(arrived->second));
      buffer_.erase(arrived);
      if (n->retains_grad && targets_.into_grad)
        if (auto out = n->output.lock()) accumulate(out.get(), g, composes_);
      if (auto t = targets_.nodes.find(n); t != targets_.nodes.end()) targets_.result[t->second] = g;
      if (!rule_needed(n)) {
        pass_over(n);
        continue;
      }
      run_rule(n, g);
    }
  }

  // n's rule, then each input's gradient to where it goes.
  void run_rule(Node* n, const Tensor& g) {
    if (watcher_) watcher_->node_begin(*n, g);
    try {
      if (create_graph_)
        if (const char* why = n->not_differentiable())
          EMBER_FAIL("backward", "create_graph: " << n->name() << " cannot be differentiated a second time: " << why);
      if (rows_allowed(*n))
        if (std::optional<RowGrad> rows = n->apply_rows(g)) {
          leaf_total(n->next[0].leaf.get()).rows.push_back(std::move(*rows));
          if (!retain_graph_) n->release_saved();
          if (watcher_) watcher_->node_end(*n);
          return;
        }
      std::vector<Tensor> grads = n->apply(g);
      // A rule written by hand (an exercise's, a user's) may miscount.
      EMBER_CHECK(grads.size() == n->next.size(), "backward",
                  n->name() << " returned " << grads.size() << " gradient(s) for its " << n->next.size()
                            << " input(s): one per input, in the order record() was given them (an undefined "
                               "Tensor() for an input that gets none)");
      for (size_t i = 0; i < n->next.size(); ++i) send(*n, i, std::move(grads[i]));
    } catch (const std::exception& e) {
      if (watcher_) watcher_->node_failed(*n, e.what());
      throw;
    }
    if (!retain_graph_) n->release_saved();  // its rule will not run again
    if (watcher_) watcher_->node_end(*n);
  }

  // What n's rule returned for its input i, summed to the input's shape,
  // into the input's node (counted down) or the leaf's total.
  void send(const Node& n, size_t i, Tensor gi) {
    const Edge& e = n.next[i];
    if (!e.defined()) return;
    if (gi.defined()) {
      gi = composes_ ? sum_to(gi, n.input_shapes[i]) : kernel::sum_to(gi, n.input_shapes[i]);
      if (watcher_) watcher_->node_sent(n, i, gi);
      if (is_anomaly_enabled() && !all_finite(gi))
        EMBER_FAIL("backward", "anomaly: " << n.name() << " returned NaN or Inf in its gradient for input " << i
                                           << " of shape " << shape_str(gi.shape()));
    }
    if (e.leaf) {
      if (gi.defined()) add_to_leaf(e.leaf.get(), std::move(gi));
      return;
    }
    if (gi.defined()) add_to_node(e.node.get(), std::move(gi));
    count_down(e.node.get());
  }

  // The pass will not run n's rule: what it saved goes (unless retain_graph),
  // and the nodes it sends to stop waiting for it.
  void pass_over(Node* n) {
    if (boundary(n)) return;
    if (!retain_graph_) n->release_saved();
    for (const Edge& e : n->next)
      if (e.node) count_down(e.node.get());
  }

  void count_down(Node* n) {
    if (--deps_[n] == 0) ready_.push_back(n);
  }
  void add_to_node(Node* n, Tensor g) {
    auto [it, first] = buffer_.try_emplace(n, g);
    if (!first) it->second = plus(it->second, g);
  }
  LeafTotal& leaf_total(TensorImpl* leaf) {
    auto [it, first] = leaves_.index.try_emplace(leaf, leaves_.totals.size());
    if (first) leaves_.totals.push_back({leaf, Tensor(), {}});
    return leaves_.totals[it->second];
  }
  void add_to_leaf(TensorImpl* leaf, Tensor g) {
    LeafTotal& t = leaf_total(leaf);
    t.dense = t.dense.defined() ? plus(t.dense, g) : std::move(g);
  }
  // A rule may give rows when what it sends is written into a leaf's .grad
  // as it is: backward() (not grad()), no recording, no hooks on the leaf,
  // no instrument (a trace) or anomaly check that reads each gradient.
  bool rows_allowed(const Node& n) const {
    return targets_.into_grad && !targets_.stop_at_inputs && !composes_ && (!watcher_ || !watcher_->reads_gradients()) &&
           !is_anomaly_enabled() &&
           n.next.size() == 1 && n.next[0].leaf && n.next[0].leaf->hooks.empty();
  }
  Tensor plus(const Tensor& a, const Tensor& b) const {
    return composes_ ? add(a, b) : kernel::binary(kernel::Binary::Add, a, b);
  }

  // ---- step 4 ----
  // A leaf's hooks run once, on its total, when that total is used: written
  // to .grad (backward) or returned (grad, for its inputs). Leaves that are
  // not inputs of grad() are left alone, hooks included.
  void deliver_to_leaves() {
    for (auto& [leaf, g, rows] : leaves_.totals) {
      if (!rows.empty()) {  // into_grad, and the leaf has no hooks (rows_allowed)
        RowGrad all = kernel::coalesce_rows(rows, leaf->shape[0]);
        if (!g.defined()) {
          if (watcher_) watcher_->tag_memory(all.rows, MemoryKind::Gradients);
          accumulate_rows(leaf, std::move(all));
          continue;
        }
        // Dense gradients reached it too (a tied table): one dense sum, the
        // rows added after the dense ones (into a copy when g is not ours).
        if (!held_alone(g)) g = kernel::to(g, g.dtype());
        kernel::index_add_(g, 0, all.ids, all.rows);
      }
      auto input = targets_.leaves.find(leaf);
      if (!targets_.into_grad && input == targets_.leaves.end()) continue;
      Tensor total = targets_.stop_at_inputs ? std::move(g) : run_hooks(leaf->hooks, std::move(g));
      if (!targets_.into_grad) {
        targets_.result[input->second] = std::move(total);
      } else if (!watcher_) {
        accumulate(leaf, std::move(total), composes_);  // handed over: .grad may take it without a copy
      } else {
        accumulate(leaf, total, composes_);
        watcher_->leaf_accumulated(*leaf, total);
        watcher_->tag_memory(leaf->grad, MemoryKind::Gradients);
      }
    }
  }

  Targets& targets_;
  const bool retain_graph_;  // keep what the nodes saved (create_graph implies it: the new graph refers to it)
  const bool create_graph_;
  // With ember ops rather than kernels: when recording, when tangents travel
  // through the pass (forward-over-reverse inside a DualLevel), and while
  // compile/ captures it.
  const bool composes_ = create_graph_ || detail::tangents_propagate() || detail::capture_composes;
  AutogradObserver* const watcher_;             // null unless an instrument watches
  std::unordered_map<Node*, int> deps_;         // step 1: edges not yet run into each node
  std::unordered_set<const Node*> leads_to_input_;  // grad() only
  std::unordered_map<Node*, Tensor> buffer_;    // the gradient summed so far for each node's output
  std::vector<Node*> ready_;                    // nodes whose every consumer has run (a stack)
  LeafTotals leaves_;
};

// The gradient that starts the walk at `root`: given, or 1 for one element.
Tensor seed_for(const Tensor& root, const Tensor& grad_output, const char* op) {
  EMBER_CHECK(root.defined(), op, "called on an undefined tensor");
  EMBER_CHECK(root.requires_grad(), op,
              "the tensor of shape " << shape_str(root.shape()) << " does not require grad and has no grad_fn");
  if (!grad_output.defined()) {
    EMBER_CHECK(root.numel() == 1, op,
                "grad can be implicitly created only for a tensor with one element, got shape "
                    << shape_str(root.shape()) << "; pass a gradient of that shape");
    return ones(root.shape(), root.dtype());
  }
  EMBER_CHECK(grad_output.shape() == root.shape() && grad_output.dtype() == root.dtype(), op,
              "gradient has shape " << shape_str(grad_output.shape()) << " " << dtype_name(grad_output.dtype())
                                    << " but the tensor has shape " << shape_str(root.shape()) << " "
                                    << dtype_name(root.dtype()));
  return grad_output;
}

}  // namespace

void backward(const Tensor& root, const Tensor& grad_output, bool retain_graph, bool create_graph) {
  const Tensor seed = seed_for(root, grad_output, "backward");
  Targets targets;
  BackwardPass(targets, retain_graph, create_graph).run({root}, {seed});
}

namespace {
std::vector<Tensor> grad_of(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& grad_outputs, const GradOptions& options, bool stop_at_inputs) {
  EMBER_CHECK(!outputs.empty(), "grad", "no outputs to differentiate");
  EMBER_CHECK(!inputs.empty(), "grad", "no inputs to differentiate with respect to");
  EMBER_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "grad",
              grad_outputs.size() << " grad_outputs for " << outputs.size() << " outputs");
  std::vector<Tensor> seeds;
  for (size_t i = 0; i < outputs.size(); ++i)
    seeds.push_back(seed_for(outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i], "grad"));
  Targets targets;
  targets.into_grad = false;
  targets.stop_at_inputs = stop_at_inputs;
  targets.result.resize(inputs.size());
  std::vector<size_t> first(inputs.size());  // an input given twice gets the same gradient twice
  for (size_t j = 0; j < inputs.size(); ++j) {
    const Tensor& x = inputs[j];
    EMBER_CHECK(x.defined() && x.requires_grad(), "grad",
                "input " << j << (x.defined() ? " of shape " + shape_str(x.shape()) : std::string())
                         << " does not require grad");
    first[j] = x.grad_fn() ? targets.nodes.emplace(x.grad_fn().get(), j).first->second
                           : targets.leaves.emplace(x.impl(), j).first->second;
  }
  BackwardPass(targets, options.retain_graph, options.create_graph).run(outputs, seeds);
  for (size_t j = 0; j < inputs.size(); ++j) targets.result[j] = targets.result[first[j]];
  for (size_t j = 0; j < inputs.size(); ++j) {
    EMBER_CHECK(targets.result[j].defined() || options.allow_unused, "grad",
                "input " << j << " of shape " << shape_str(inputs[j].shape())
                         << " was not used to compute the outputs (pass allow_unused to get an undefined tensor)");
  }
  return targets.result;
}

}  // namespace

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, const GradOptions& options) {
  return grad_of(outputs, inputs, grad_outputs, options, false);
}

std::vector<Tensor> detail::partial_grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                         const std::vector<Tensor>& grad_outputs, bool create_graph) {
  return grad_of(outputs, inputs, grad_outputs, {.create_graph = create_graph, .allow_unused = true}, true);
}

}  // namespace ember
