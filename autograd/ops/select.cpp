// Selection by mask: where, masked_fill, tril/triu. The gradient flows only
// to the elements that were selected.
#include "autograd/batching.h"
#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

// (g where cond, g where not cond)
struct WhereBackward final : Node {
  EMBER_NODE_NAME(WhereBackward)
  SavedTensor cond;
  explicit WhereBackward(const Tensor& c) : cond(c) {}
  std::vector<SavedRef> saved() override { return {{"cond", &cond}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor c = cond.get(*this);
    Tensor zero = scalar_tensor(0.0, g.dtype());
    return {where(c, g, zero), where(c, zero, g)};
  }
};
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  OpScope scope("where", cond, a, b);
  Tensor out = kernel::where(cond, a, b);
  if (needs_grad({a, b})) record(out, std::make_shared<WhereBackward>(cond), {a, b});
  forward_rule(out, [&] { return where(cond, dx(a), dx(b)); }, a, b);
  return scope.out(out);
}

// filled positions are constants: zero gradient there
struct MaskedFillBackward final : Node {
  EMBER_NODE_NAME(MaskedFillBackward)
  SavedTensor mask;
  explicit MaskedFillBackward(const Tensor& m) : mask(m) {}
  std::vector<SavedRef> saved() override { return {{"mask", &mask}}; }
  std::vector<Tensor> apply(const Tensor& g) override { return {masked_fill(g, mask.get(*this), 0.0)}; }
};
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  OpScope scope("masked_fill", x, mask, value);
  Tensor out = kernel::masked_fill(x, mask, value);
  if (needs_grad({x})) record(out, std::make_shared<MaskedFillBackward>(mask), {x});
  forward_rule(out, [&] { return masked_fill(dx(x), mask, 0.0); }, x);
  return scope.out(out);
}

// the same triangle of the gradient
struct TriangleBackward final : Node {
  EMBER_NODE_NAME(TriangleBackward)
  int64_t k;
  bool lower;
  TriangleBackward(int64_t k_, bool l) : k(k_), lower(l) {}
  std::vector<Tensor> apply(const Tensor& g) override { return {lower ? tril(g, k) : triu(g, k)}; }
};
Tensor tril(const Tensor& x, int64_t k) {
  OpScope scope("tril", x, k);
  Tensor out = kernel::tril(x, k);
  if (needs_grad({x})) record(out, std::make_shared<TriangleBackward>(k, true), {x});
  forward_rule(out, [&] { return tril(dx(x), k); }, x);
  return scope.out(out);
}
Tensor triu(const Tensor& x, int64_t k) {
  OpScope scope("triu", x, k);
  Tensor out = kernel::triu(x, k);
  if (needs_grad({x})) record(out, std::make_shared<TriangleBackward>(k, false), {x});
  forward_rule(out, [&] { return triu(dx(x), k); }, x);
  return scope.out(out);
}

// ---- vmap (autograd/batching.h) ----
namespace {
// masked_fill(x, mask): the mask broadcasts to x, so x must carry the batch
// when the mask does
batching::Result masked_fill_batched(const batching::Call& c) {
  const int64_t rank = c.rank(0);
  return batching::batched({masked_fill(batching::with_batch(c.tensor(0), c.batched[0], c.size),
                                        batching::pad(c.tensor(1), c.batched[1], rank), std::get<double>(c.args[2]))});
}
}  // namespace
void batching::detail::add_select_batching_rules(Rules& r) {
  r.add("where", &broadcast);
  r.add("masked_fill", &masked_fill_batched);
  r.add({"tril", "triu"}, &same);  // the last two dims: a sample's own
}

}  // namespace ember
