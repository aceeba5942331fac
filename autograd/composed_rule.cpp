#include "autograd/composed_rule.h"

#include "autograd/engine.h"

namespace ember {

std::vector<Tensor> ComposedBackward::apply(const Tensor& grad_out) {
  if (!backward_composes()) return fast_backward(grad_out);
  if (detail::capture_composes && !is_grad_enabled() && !detail::tangents_propagate()) return backward_as_op(grad_out);
  std::vector<Tensor> grads =
      composed_vjp([this](const std::vector<Tensor>& in) { return fallback(in); }, fallback_inputs(), grad_out);
  grads.resize(next.size());  // the inputs past the edges are not differentiated
  return grads;
}

void refuse_to_record(const char* op, std::initializer_list<Tensor> inputs) {
  EMBER_CHECK(!needs_grad(inputs), op,
              "is a backward kernel with no derivative of its own, and an input requires grad while grad mode is "
              "on: differentiate the forward op with create_graph instead");
}

std::vector<Tensor> composed_vjp(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                 const std::vector<Tensor>& inputs, const Tensor& g) {
  const bool records = is_grad_enabled();  // create_graph: the gradient gets a graph too
  std::vector<Tensor> args = inputs, wrt;
  std::vector<size_t> slot;  // which input each entry of wrt stands for
  Tensor y;
  {
    GradModeGuard on(true);  // the fallback's graph, to backpropagate through
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
      args[i] = detail::stand_in(inputs[i]);
      wrt.push_back(args[i]);
      slot.push_back(i);
    }
    y = f(args);
  }
  EMBER_CHECK(y.defined() && y.shape() == g.shape(), "backward",
              "a composed fallback gave " << (y.defined() ? shape_str(y.shape()) : std::string("nothing"))
                                          << " where its op gave " << shape_str(g.shape()));
  std::vector<Tensor> out(inputs.size());
  if (wrt.empty() || !y.requires_grad()) return out;
  std::vector<Tensor> grads = detail::partial_grad({y}, wrt, {g}, records);
  for (size_t i = 0; i < grads.size(); ++i) out[slot[i]] = grads[i];
  return out;
}

}  // namespace ember
