#include "autograd/saved_tensor.h"

#include "autograd/grad_mode.h"
#include "autograd/observer.h"

namespace ember {

namespace {
Tensor alias_of(const Tensor& t) {
  auto alias = std::make_shared<TensorImpl>();
  alias->storage = t.storage();
  alias->offset = t.storage_offset();
  alias->shape = t.shape();
  alias->strides = t.stride();
  alias->dtype = t.dtype();
  return Tensor(std::move(alias));
}
}  // namespace

namespace detail {
thread_local const std::vector<const TensorImpl*>* borrowed_parameters = nullptr;
}  // namespace detail

namespace {
bool borrowed(const Tensor& t) {
  if (!detail::borrowed_parameters) return false;
  for (const TensorImpl* p : *detail::borrowed_parameters)
    if (p == t.impl()) return true;
  return false;
}
}  // namespace

SavedTensor::SavedTensor(const Tensor& t) {
  if (!t.defined()) return;
  // Only a tensor that takes part in the graph is kept as itself; others
  // (ids, masks, values computed inside a forward) as an alias.
  tensor_ = t.requires_grad() ? t : alias_of(t);
  if (t.requires_grad() && borrowed(t)) {  // see detail::borrowed_parameters
    tensor_ = alias_of(t);
    tensor_.impl()->grad_fn = t.grad_fn();
    tensor_.impl()->requires_grad = true;
  }
  version_ = t.version();
  if (AutogradObserver* o = autograd_observer()) o->tag_memory(tensor_, MemoryKind::SavedForBackward);
}

void SavedTensor::mark_output(const std::shared_ptr<Node>& owner) { output_of_ = owner; }

Tensor SavedTensor::get(const Node& owner) const {
  EMBER_CHECK(!released_, "backward",
              "trying to backward through the graph a second time: the tensors saved by "
                  << node_name(owner)
                  << " were freed after the first backward. Pass retain_graph=true to the first backward() to keep "
                     "them");
  if (tensor_.defined() && tensor_.version() != version_) {
    EMBER_FAIL("backward", "one of the tensors needed for gradient computation has been modified by an inplace "
                           "operation: ["
                               << dtype_name(tensor_.dtype()) << " " << shape_str(tensor_.shape())
                               << "], which is saved by " << node_name(owner) << ", is at version " << tensor_.version()
                               << "; expected version " << version_);
  }
  if (is_grad_enabled() && !output_of_.expired()) {
    // Recording a derivative of the gradient: the output in its place in
    // the graph, as the node's result.
    Tensor out = alias_of(tensor_);
    out.impl()->grad_fn = output_of_.lock();
    out.impl()->requires_grad = true;
    return out;
  }
  return tensor_;
}

}  // namespace ember
