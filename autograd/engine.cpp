// The engine, in four steps:
//   1. count, for every node reachable from the roots, how many edges point
//      at it (its dependencies) — an explicit stack, no recursion;
//   2. start from the roots' nodes with their gradients;
//   3. pop a node whose gradient is complete (every consumer has contributed),
//      run its hooks, call apply(), sum each input gradient back to the
//      input's shape (the one place where broadcasting is undone), then add
//      it to the next node's (or the leaf's) buffer; a leaf whose gradient is
//      now complete has its hooks run at once (so that a hook can act on a
//      finished gradient while backward computes the others: PyTorch's DDP
//      starts its all-reduce there);
//   4. hand each leaf its total gradient: into .grad (backward), or into the
//      result (grad).
// Unless retain_graph, each node frees what it saved as soon as its rule has
// run: the activations of a training step go as backward walks past them.
// A tensor used on several paths gets the sum of all of them because a node
// runs only after all its consumers have added their share.
//
// create_graph: the same walk with grad mode on, so the ops inside every
// rule record nodes of their own, and the gradients can be differentiated
// again. The sums (broadcast undone, several consumers, .grad) then use the
// differentiable ops instead of the kernels; a rule that cannot be
// differentiated says so (Node::not_differentiable) instead of returning a
// gradient whose own derivative would be silently wrong.
#include "autograd/engine.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

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
void accumulate(TensorImpl* leaf, Tensor g, bool create_graph) {
  const bool shared = leaf->grad.defined() && (leaf->grad.requires_grad() || leaf->grad.impl_ptr().use_count() > 1 ||
                                                leaf->grad.storage().use_count() > 1);
  if (create_graph) {
    leaf->grad = leaf->grad.defined() ? add(leaf->grad, g) : g;
  } else if (shared) {
    leaf->grad = kernel::binary(kernel::Binary::Add, leaf->grad.detach(), g);
  } else if (!leaf->grad.defined()) {
    bool owned = g.impl_ptr().use_count() == 1 && g.storage().use_count() == 1 && g.is_contiguous() &&
                 g.storage()->nbytes() == static_cast<size_t>(g.numel()) * dtype_size(g.dtype());
    leaf->grad = owned ? g : kernel::to(g, g.dtype());  // a contiguous copy of its own
  } else {
    kernel::copy_(leaf->grad, kernel::binary(kernel::Binary::Add, leaf->grad, g), "backward");
  }
}

bool all_finite(const Tensor& g) {
  return EMBER_DISPATCH_FLOAT(g.dtype(), "anomaly", [&]<typename T>() {
    for (T v : g.to_vector<T>())
      if (!std::isfinite(v)) return false;
    return true;
  });
}

// Sets grad mode for the walk (on exactly when recording) and restores it.
class GradModeFor {
 public:
  explicit GradModeFor(bool on) : prev_(is_grad_enabled()) { set_grad_enabled(on); }
  ~GradModeFor() { set_grad_enabled(prev_); }
  GradModeFor(const GradModeFor&) = delete;
  GradModeFor& operator=(const GradModeFor&) = delete;

 private:
  bool prev_;
};

// What a walk computes: either every leaf's .grad (backward) or the
// gradients of chosen tensors (grad), which may be leaves or non-leaves.
struct Targets {
  bool into_grad = true;                           // backward(): accumulate into leaves' .grad
  std::unordered_map<const Node*, size_t> nodes;   // grad(): a non-leaf input, by its grad_fn
  std::unordered_map<const TensorImpl*, size_t> leaves;  // grad(): a leaf input
  std::vector<Tensor> result;                      // grad(): one per input
};

void walk(const std::vector<Tensor>& roots, const std::vector<Tensor>& seeds, bool retain_graph, bool create_graph,
          Targets& targets) {
  retain_graph = retain_graph || create_graph;  // the gradient graph refers to the forward one
  GradModeFor mode(create_graph);               // rules record nodes only when asked to
  std::optional<GradientGraphScope> marking;    // ... and those nodes belong to the gradient graph
  if (create_graph) marking.emplace();
  // inspect/ may watch (autograd/observer.h): null unless an instrument runs.
  AutogradObserver* watcher = watching();
  struct EndNotice {  // tells the watcher how backward ended, also when it throws
    AutogradObserver* o;
    bool ok = false;
    ~EndNotice() {
      if (o) o->backward_end(ok);
    }
  } end_notice{watcher};
  if (watcher) watcher->backward_begin(roots.front());

  auto sum_to = [create_graph](const Tensor& g, const Shape& shape) {
    return create_graph ? ember::sum_to(g, shape) : kernel::sum_to(g, shape);
  };
  auto plus = [create_graph](const Tensor& a, const Tensor& b) {
    return create_graph ? add(a, b) : kernel::binary(kernel::Binary::Add, a, b);
  };

  // A leaf's hooks run when backward() writes .grad, or when the leaf is an
  // input of grad() (as its gradient is returned); a hooked leaf that is
  // neither is left alone.
  auto hooks_run = [&](const TensorImpl* leaf) {
    return !leaf->hooks.empty() && (targets.into_grad || targets.leaves.count(leaf) > 0);
  };

  // 1. Dependencies: how many edges point at each node, from every root, and
  // at each leaf whose hooks run (so that they can run as soon as its
  // gradient is complete).
  std::unordered_map<Node*, int> deps;
  std::unordered_map<TensorImpl*, int> leaf_deps;
  std::vector<Node*> stack;
  for (const Tensor& r : roots)
    if (r.grad_fn() && deps.try_emplace(r.grad_fn().get(), 0).second) stack.push_back(r.grad_fn().get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next) {
      if (e.leaf && hooks_run(e.leaf.get())) ++leaf_deps[e.leaf.get()];
      if (!e.node) continue;
      auto [it, fresh] = deps.try_emplace(e.node.get(), 0);
      ++it->second;
      if (fresh) stack.push_back(e.node.get());
    }
  }
  // grad(): only the nodes on a path to an input need to run. Decided in
  // reverse topological order (every consumer before what it consumes, so
  // reversed: an input's producers first).
  std::unordered_set<const Node*> needed;
  if (!targets.into_grad) {
    std::unordered_map<Node*, int> left = deps;
    std::vector<Node*> order, ready;
    for (auto& [n, d] : left)
      if (d == 0) ready.push_back(n);
    while (!ready.empty()) {
      Node* n = ready.back();
      ready.pop_back();
      order.push_back(n);
      for (const Edge& e : n->next)
        if (e.node && --left[e.node.get()] == 0) ready.push_back(e.node.get());
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* n = *it;
      bool need = targets.nodes.count(n) > 0;
      for (const Edge& e : n->next)
        need = need || (e.node && needed.count(e.node.get())) || (e.leaf && targets.leaves.count(e.leaf.get()));
      if (need) needed.insert(n);
    }
  }
  // A node's rule must run when backward() writes .grad (every node), or
  // when something it sends to leads to an input of grad().
  auto must_run = [&](const Node* n) {
    if (targets.into_grad) return true;
    for (const Edge& e : n->next)
      if ((e.node && needed.count(e.node.get())) || (e.leaf && targets.leaves.count(e.leaf.get()))) return true;
    return false;
  };

  // 2. Start at the roots' nodes (a leaf root's gradient goes straight to it).
  std::unordered_map<Node*, Tensor> buffer;
  std::vector<Node*> ready;
  std::unordered_map<TensorImpl*, size_t> leaf_index;      // leaf -> position in leaf_grads
  std::vector<std::pair<TensorImpl*, Tensor>> leaf_grads;  // in order of first arrival
  std::vector<char> hooked;                                // per leaf_grads entry: its hooks have run
  auto to_leaf = [&](TensorImpl* leaf, Tensor g) {
    auto [it, fresh] = leaf_index.try_emplace(leaf, leaf_grads.size());
    if (fresh) {
      leaf_grads.emplace_back(leaf, std::move(g));
      hooked.push_back(0);
    } else {
      leaf_grads[it->second].second = plus(leaf_grads[it->second].second, g);
    }
  };
  // Early leaf hooks: an edge into a leaf is done when its node has run (or
  // passed nothing on); after a leaf's last one, its hooks see the total.
  std::vector<TensorImpl*> complete;  // leaves whose last edge just ran
  auto edge_done = [&](TensorImpl* leaf) {
    if (hooks_run(leaf) && --leaf_deps[leaf] == 0) complete.push_back(leaf);
  };
  auto run_complete_hooks = [&] {
    for (TensorImpl* leaf : complete) {
      auto it = leaf_index.find(leaf);
      if (it == leaf_index.end()) continue;  // no gradient reached it
      leaf_grads[it->second].second = run_hooks(leaf->hooks, std::move(leaf_grads[it->second].second));
      hooked[it->second] = 1;
    }
    complete.clear();
  };
  for (size_t i = 0; i < roots.size(); ++i) {
    Node* n = roots[i].grad_fn().get();
    if (!n) {
      to_leaf(roots[i].impl(), seeds[i]);
      continue;
    }
    auto it = buffer.find(n);
    if (it == buffer.end()) buffer.emplace(n, seeds[i]);
    else it->second = plus(it->second, seeds[i]);
  }
  for (auto& [n, d] : deps)
    if (d == 0) ready.push_back(n);
  std::sort(ready.begin(), ready.end(), [&](Node* a, Node* b) {  // roots in the order given
    auto pos = [&](Node* n) {
      for (size_t i = 0; i < roots.size(); ++i)
        if (roots[i].grad_fn().get() == n) return i;
      return roots.size();
    };
    return pos(a) > pos(b);
  });

  // 3. One node: its rule, then each input's gradient summed back to the
  // input's shape and added to the next node's (or the leaf's) buffer.
  auto run = [&](Node* n, const Tensor& g) {
    if (create_graph) {
      if (const char* why = n->not_differentiable())
        EMBER_FAIL("backward", "create_graph: " << n->name() << " cannot be differentiated a second time: " << why);
    }
    std::vector<Tensor> grads = n->apply(g);
    assert(grads.size() == n->next.size());
    for (size_t i = 0; i < n->next.size(); ++i) {
      const Edge& e = n->next[i];
      if (!e.defined()) continue;
      Tensor gi = std::move(grads[i]);
      if (gi.defined()) {
        gi = sum_to(gi, n->input_shapes[i]);  // undo broadcasting, here and only here
        if (watcher) watcher->node_sent(*n, i, gi);
        if (is_anomaly_enabled() && !all_finite(gi)) {
          EMBER_FAIL("backward", "anomaly: " << n->name() << " returned NaN or Inf in its gradient for input " << i
                                             << " of shape " << shape_str(gi.shape()));
        }
      }
      if (e.leaf) {
        // Summed over all paths first; hooks and .grad see the total once.
        if (gi.defined()) to_leaf(e.leaf.get(), std::move(gi));
        edge_done(e.leaf.get());
        continue;
      }
      Node* next = e.node.get();
      if (gi.defined()) {
        auto it = buffer.find(next);
        if (it == buffer.end()) buffer.emplace(next, std::move(gi));
        else it->second = plus(it->second, gi);
      }
      if (--deps[next] == 0) ready.push_back(next);
    }
  };
  auto pass_nothing_on = [&](Node* n) {  // so that nodes (and leaves) that also depend on n are not left waiting
    for (const Edge& e : n->next) {
      if (e.leaf) edge_done(e.leaf.get());
      if (e.node && --deps[e.node.get()] == 0) ready.push_back(e.node.get());
    }
    run_complete_hooks();
  };
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    auto found = buffer.find(n);
    if (found == buffer.end() || (!targets.into_grad && !needed.count(n))) {
      // No gradient reached this node (every path into it was zero), or
      // grad() does not need it.
      if (found != buffer.end()) buffer.erase(found);
      if (!retain_graph) n->release_saved();
      pass_nothing_on(n);
      continue;
    }
    Tensor g = std::move(found->second);
    buffer.erase(found);
    g = run_hooks(n->hooks, g);
    if (n->retains_grad && targets.into_grad)
      if (auto kept = n->output.lock()) accumulate(kept.get(), g, create_graph);
    if (auto t = targets.nodes.find(n); t != targets.nodes.end()) targets.result[t->second] = g;
    if (!must_run(n)) {
      pass_nothing_on(n);
      continue;
    }
    if (watcher) watcher->node_begin(*n, g);
    try {
      run(n, g);
    } catch (const std::exception& e) {
      if (watcher) watcher->node_failed(*n, e.what());
      throw;
    }
    if (!retain_graph) n->release_saved();  // its rule will not run again
    if (watcher) watcher->node_end(*n);
    run_complete_hooks();  // (after the node has freed what it saved)
  }

  // 4. Leaves: the complete gradient (through the hooks, for a leaf whose
  // hooks have not run above: a root itself, say) into .grad (backward) or
  // into the result (grad). Nothing is written to a leaf before the whole
  // graph has run, so an error above leaves every .grad as it was (a hook
  // may have seen its gradient already).
  for (size_t i = 0; i < leaf_grads.size(); ++i) {
    auto& [leaf, g] = leaf_grads[i];
    auto t = targets.leaves.find(leaf);
    if (!targets.into_grad && t == targets.leaves.end()) continue;  // not an input of grad()
    Tensor total = hooked[i] ? std::move(g) : run_hooks(leaf->hooks, std::move(g));
    if (targets.into_grad) {
      if (!watcher) {  // handed over, so that .grad can take it without a copy
        accumulate(leaf, std::move(total), create_graph);
        continue;
      }
      accumulate(leaf, total, create_graph);
      watcher->leaf_accumulated(*leaf, total);
      watcher->tag_memory(leaf->grad, MemoryKind::Gradients);
    } else {
      targets.result[t->second] = std::move(total);
    }
  }
  end_notice.ok = true;
}

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
  walk({root}, {seed}, retain_graph, create_graph, targets);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, const GradOptions& options) {
  EMBER_CHECK(!outputs.empty(), "grad", "no outputs to differentiate");
  EMBER_CHECK(!inputs.empty(), "grad", "no inputs to differentiate with respect to");
  EMBER_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "grad",
              grad_outputs.size() << " grad_outputs for " << outputs.size() << " outputs");
  std::vector<Tensor> seeds;
  for (size_t i = 0; i < outputs.size(); ++i)
    seeds.push_back(seed_for(outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i], "grad"));
  Targets targets;
  targets.into_grad = false;
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
  walk(outputs, seeds, options.retain_graph, options.create_graph, targets);
  for (size_t j = 0; j < inputs.size(); ++j) targets.result[j] = targets.result[first[j]];
  for (size_t j = 0; j < inputs.size(); ++j) {
    EMBER_CHECK(targets.result[j].defined() || options.allow_unused, "grad",
                "input " << j << " of shape " << shape_str(inputs[j].shape())
                         << " was not used to compute the outputs (pass allow_unused to get an undefined tensor)");
  }
  return targets.result;
}

}  // namespace ember
