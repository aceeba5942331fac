// The engine, in five steps:
//   1. count, for every node reachable from the root, how many edges point at
//      it (its dependencies) — an explicit stack, no recursion;
//   2. start from the root's node with grad_output;
//   3. pop a node whose gradient is complete (every consumer has contributed),
//      run its hooks, call apply(), sum each input gradient back to the
//      input's shape (the one place where broadcasting is undone), then add
//      it to the next node's (or the leaf's) buffer;
//   4. accumulate each leaf's total gradient into its .grad.
// Unless retain_graph, each node frees what it saved as soon as its rule has
// run: the activations of a training step go as backward walks past them.
// A tensor used on several paths gets the sum of all of them because a node
// runs only after all its consumers have added their share.
#include "autograd/engine.h"

#include <cassert>
#include <cmath>
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/observer.h"
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
void accumulate(TensorImpl* leaf, Tensor g) {
  if (!leaf->grad.defined()) {
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

}  // namespace

void backward(const Tensor& root, const Tensor& grad_output, bool retain_graph) {
  EMBER_CHECK(root.defined(), "backward", "called on an undefined tensor");
  EMBER_CHECK(root.requires_grad(), "backward",
              "the tensor of shape " << shape_str(root.shape()) << " does not require grad and has no grad_fn");
  Tensor g0 = grad_output;
  if (!g0.defined()) {
    EMBER_CHECK(root.numel() == 1, "backward",
                "grad can be implicitly created only for a tensor with one element, got shape "
                    << shape_str(root.shape()) << "; pass a gradient of that shape");
    g0 = ones(root.shape(), root.dtype());
  }
  EMBER_CHECK(g0.shape() == root.shape() && g0.dtype() == root.dtype(), "backward",
              "gradient has shape " << shape_str(g0.shape()) << " " << dtype_name(g0.dtype())
                                    << " but the tensor has shape " << shape_str(root.shape()) << " "
                                    << dtype_name(root.dtype()));
  NoGradGuard no_grad;  // backward rules compute values only
  // inspect/ may watch (autograd/observer.h): null unless an instrument runs.
  AutogradObserver* watcher = watching();
  struct EndNotice {  // tells the watcher how backward ended, also when it throws
    AutogradObserver* o;
    bool ok = false;
    ~EndNotice() {
      if (o) o->backward_end(ok);
    }
  } end_notice{watcher};
  if (watcher) watcher->backward_begin(root);
  auto into_leaf = [watcher](TensorImpl* leaf, Tensor g) {
    accumulate(leaf, g);
    if (watcher) {
      watcher->leaf_accumulated(*leaf, g);
      watcher->tag_memory(leaf->grad, MemoryKind::Gradients);
    }
  };
  if (root.is_leaf()) {
    into_leaf(root.impl(), run_hooks(root.impl()->hooks, g0));
    end_notice.ok = true;
    return;
  }

  // 1. Dependencies: how many edges point at each node.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack{root.grad_fn().get()};
  deps[root.grad_fn().get()] = 0;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next) {
      if (!e.node) continue;
      auto [it, fresh] = deps.try_emplace(e.node.get(), 0);
      ++it->second;
      if (fresh) stack.push_back(e.node.get());
    }
  }

  // 2. Start at the root's node; run every node whose gradient is complete.
  std::unordered_map<Node*, Tensor> buffer{{root.grad_fn().get(), g0}};
  std::vector<Node*> ready{root.grad_fn().get()};
  std::unordered_map<TensorImpl*, size_t> leaf_index;          // leaf -> position in leaf_grads
  std::vector<std::pair<TensorImpl*, Tensor>> leaf_grads;      // in order of first arrival
  // 3. One node: its rule, then each input's gradient summed back to the
  // input's shape and added to the next node's (or the leaf's) buffer.
  auto run = [&](Node* n, const Tensor& g) {
    std::vector<Tensor> grads = n->apply(g);
    assert(grads.size() == n->next.size());
    for (size_t i = 0; i < n->next.size(); ++i) {
      const Edge& e = n->next[i];
      if (!e.defined()) continue;
      Tensor gi = std::move(grads[i]);
      if (gi.defined()) {
        gi = kernel::sum_to(gi, n->input_shapes[i]);  // undo broadcasting, here and only here
        if (watcher) watcher->node_sent(*n, i, gi);
        if (is_anomaly_enabled() && !all_finite(gi)) {
          EMBER_FAIL("backward", "anomaly: " << n->name() << " returned NaN or Inf in its gradient for input " << i
                                             << " of shape " << shape_str(gi.shape()));
        }
      }
      if (e.leaf) {
        // Summed over all paths first; hooks and .grad see the total once.
        if (gi.defined()) {
          auto [it, fresh] = leaf_index.try_emplace(e.leaf.get(), leaf_grads.size());
          if (fresh) leaf_grads.emplace_back(e.leaf.get(), std::move(gi));
          else leaf_grads[it->second].second = kernel::binary(kernel::Binary::Add, leaf_grads[it->second].second, gi);
        }
        continue;
      }
      Node* next = e.node.get();
      if (gi.defined()) {
        auto it = buffer.find(next);
        if (it == buffer.end()) buffer.emplace(next, std::move(gi));
        else it->second = kernel::binary(kernel::Binary::Add, it->second, gi);
      }
      if (--deps[next] == 0) ready.push_back(next);
    }
  };
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    auto found = buffer.find(n);
    if (found == buffer.end()) {
      // No gradient reached this node (every path into it was zero): pass
      // that on, so nodes that also depend on it are not left waiting.
      if (!retain_graph) n->release_saved();
      for (const Edge& e : n->next)
        if (e.node && --deps[e.node.get()] == 0) ready.push_back(e.node.get());
      continue;
    }
    Tensor g = std::move(found->second);
    buffer.erase(found);
    g = run_hooks(n->hooks, g);
    if (n->retains_grad)
      if (auto kept = n->output.lock()) accumulate(kept.get(), g);
    if (watcher) watcher->node_begin(*n, g);
    try {
      run(n, g);
    } catch (const std::exception& e) {
      if (watcher) watcher->node_failed(*n, e.what());
      throw;
    }
    if (!retain_graph) n->release_saved();  // its rule will not run again
    if (watcher) watcher->node_end(*n);
  }

  // 4. Leaves: run their hooks on the complete gradient, accumulate into .grad.
  // (Nothing is written to a leaf before the whole graph has run, so an error
  // above leaves every .grad as it was.)
  for (auto& [leaf, g] : leaf_grads) into_leaf(leaf, run_hooks(leaf->hooks, std::move(g)));
  end_notice.ok = true;
}

}  // namespace ember
