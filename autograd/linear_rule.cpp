#include "autograd/linear_rule.h"

#include "autograd/forward.h"
#include "autograd/grad_mode.h"
#include "autograd/op_scope.h"

namespace ember {

namespace {
// Lᵀ g as a node of the gradient graph: its own transpose is L.
struct TransposedBackward final : Node {
  EMBER_NODE_NAME(TransposedBackward)
  std::shared_ptr<const LinearBackward> of;  // the node whose Lᵀ this is (it keeps what L needs)
  explicit TransposedBackward(std::shared_ptr<const LinearBackward> n) : of(std::move(n)) {}
  std::vector<Tensor> apply(const Tensor& g) override { return {of->linear(g)}; }
};
}  // namespace

std::vector<Tensor> LinearBackward::apply(const Tensor& grad_out) {
  if (!backward_composes()) return {transposed(grad_out)};
  if (detail::capture_composes && !detail::tangents_propagate()) {
    // compile/ captures this backward pass: ops it can write down, and
    // differentiate again (create_graph: a jvp under vmap, autograd/functional.h)
    Tensor by_ops = transposed_by_ops(grad_out);
    if (by_ops.defined()) return {by_ops};
  }
  OpScope scope(name(), grad_out);
  Tensor grad_in = transposed(grad_out);
  forward_rule(grad_in, [&] { return transposed(dx(grad_out)); }, grad_out);
  if (needs_grad({grad_out})) record(grad_in, std::make_shared<TransposedBackward>(shared_from_this()), {grad_out});
  return {grad_in};
}

}  // namespace ember
