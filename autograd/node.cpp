#include "autograd/node.h"

#include "autograd/grad_mode.h"
#include "autograd/observer.h"

namespace ember {

const char* node_name(const Node& node) { return node.name(); }

namespace {
thread_local int gradient_graph_depth = 0;
}  // namespace
namespace detail {
thread_local uint64_t recording_segment = 0;
}  // namespace detail
GradientGraphScope::GradientGraphScope() { ++gradient_graph_depth; }
GradientGraphScope::~GradientGraphScope() { --gradient_graph_depth; }

namespace {
template <typename Range>
bool any_requires_grad(const Range& inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}
}  // namespace
bool needs_grad(std::initializer_list<Tensor> inputs) { return any_requires_grad(inputs); }
bool needs_grad(const std::vector<Tensor>& inputs) { return any_requires_grad(inputs); }

namespace {
template <typename Range>
void connect(Tensor& out, std::shared_ptr<Node> node, const Range& inputs) {
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
  node->output = out.impl_ptr();
  node->meta.in_gradient_graph = gradient_graph_depth > 0;
  node->meta.segment = detail::recording_segment;
  // The output, if the node saved it (as an alias: it did not require grad
  // yet), gets its weak link to the node: see SavedTensor::get.
  for (SavedTensor* s : node->saved()) {
    const Tensor& t = s->peek();
    if (t.defined() && !t.requires_grad() && t.storage() == out.storage() &&
        t.storage_offset() == out.storage_offset() && t.shape() == out.shape() && t.stride() == out.stride())
      s->mark_output(node);
  }
  if (AutogradObserver* o = autograd_observer()) o->node_recorded(*node, out);
  out.impl()->grad_fn = std::move(node);
  out.impl()->requires_grad = true;
}
}  // namespace
void record(Tensor& out, std::shared_ptr<Node> node, std::initializer_list<Tensor> inputs) {
  connect(out, std::move(node), inputs);
}
void record(Tensor& out, std::shared_ptr<Node> node, const std::vector<Tensor>& inputs) {
  connect(out, std::move(node), inputs);
}

namespace {
thread_local std::vector<std::shared_ptr<Node>> pending;
thread_local bool draining = false;
}  // namespace

void release_node(std::shared_ptr<Node>&& node) {
  if (!node) return;
  pending.push_back(std::move(node));
  if (draining) return;  // an outer call is already looping
  draining = true;
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    n.reset();  // may destroy the node, whose ~Node pushes its children here
  }
  draining = false;
}

Node::~Node() {
  for (Edge& e : next) release_node(std::move(e.node));
}

}  // namespace ember
