#include "autograd/node.h"

#include "autograd/grad_mode.h"
#include "autograd/observer.h"

namespace ember {

SavedTensor::SavedTensor(const Tensor& t) {
  if (!t.defined()) return;
  auto alias = std::make_shared<TensorImpl>();
  alias->storage = t.storage();
  alias->offset = t.storage_offset();
  alias->shape = t.shape();
  alias->strides = t.stride();
  alias->dtype = t.dtype();
  tensor_ = Tensor(std::move(alias));
  version_ = t.version();
  if (AutogradObserver* o = watching()) o->tag_memory(tensor_, MemoryKind::SavedForBackward);
}

const Tensor& SavedTensor::get(const Node& owner) const {
  EMBER_CHECK(!released_, "backward",
              "trying to backward through the graph a second time: the tensors saved by "
                  << owner.name()
                  << " were freed after the first backward. Pass retain_graph=true to the first backward() to keep "
                     "them");
  if (tensor_.defined() && tensor_.version() != version_) {
    EMBER_FAIL("backward", "one of the tensors needed for gradient computation has been modified by an inplace "
                           "operation: ["
                               << dtype_name(tensor_.dtype()) << " " << shape_str(tensor_.shape())
                               << "], which is saved by " << owner.name() << ", is at version " << tensor_.version()
                               << "; expected version " << version_);
  }
  return tensor_;
}

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
  if (AutogradObserver* o = watching()) o->node_recorded(*node, out);
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

TensorImpl::~TensorImpl() { release_node(std::move(grad_fn)); }

}  // namespace ember
