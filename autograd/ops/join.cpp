// cat / stack: the gradient of a concatenation is the matching slice of the
// output gradient for each input.
#include "autograd/batching.h"
#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/kernels.h"

namespace ember {

struct CatBackward final : Node {
  EMBER_NODE_NAME(CatBackward)
  int64_t dim;
  std::vector<int64_t> sizes;
  CatBackward(int64_t d, std::vector<int64_t> s) : dim(d), sizes(std::move(s)) {}
  std::vector<Tensor> apply(const Tensor& g) override {
    std::vector<Tensor> grads;
    int64_t at = 0;
    for (int64_t n : sizes) {
      grads.push_back(narrow(g, dim, at, n));
      at += n;
    }
    return grads;
  }
};
Tensor cat(const std::vector<Tensor>& xs, int64_t d) {
  OpScope scope("cat", xs, d);
  Tensor out = kernel::cat(xs, d);  // checks that xs is not empty and that the shapes fit
  if (needs_grad(xs)) {
    std::vector<int64_t> sizes;
    for (const Tensor& x : xs) sizes.push_back(x.size(d));
    record(out, std::make_shared<CatBackward>(wrap_dim(d, xs[0].dim(), "cat"), sizes), xs);
  }
  forward_rule(out, [&] {  // the tangents side by side (zeros for an input without one)
    std::vector<Tensor> ts;
    for (const Tensor& x : xs) ts.push_back(dx(x));
    return cat(ts, d);
  }, xs);
  return scope.out(out);
}

Tensor stack(const std::vector<Tensor>& xs, int64_t d) {
  OpScope scope("stack", xs, d);
  EMBER_CHECK(!xs.empty(), "stack", "expected a non-empty list of tensors");
  int64_t w = wrap_dim(d, xs[0].dim() + 1, "stack");
  for (size_t i = 0; i < xs.size(); ++i) {
    EMBER_CHECK(xs[i].shape() == xs[0].shape(), "stack",
                "tensor " << i << " has shape " << shape_str(xs[i].shape()) << " but tensor 0 has shape "
                          << shape_str(xs[0].shape()) << "; all must be equal");
  }
  std::vector<Tensor> us;
  for (const Tensor& x : xs) us.push_back(unsqueeze(x, w));
  return scope.out(cat(us, w));
}

// ---- vmap (autograd/batching.h): every tensor of the list carries the batch
// (vmap sees to it), and the dim shifts past it ----
namespace {
batching::Result cat_batched(const batching::Call& c) {
  const auto& xs = std::get<std::vector<Tensor>>(c.args[0]);
  const int64_t d = std::get<int64_t>(c.args[1]);
  const int64_t rank = xs.empty() ? 0 : xs[0].dim() - 1;
  return batching::batched({c.op == "cat" ? cat(xs, batching::shift(d, rank)) : stack(xs, batching::shift(d, rank + 1))});
}
}  // namespace
void batching::detail::add_join_batching_rules(Rules& r) { r.add({"cat", "stack"}, &cat_batched); }

}  // namespace ember
