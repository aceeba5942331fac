#include "nn/functional_call.h"

#include <set>

#include "autograd/node.h"
#include "autograd/ops.h"

namespace ember::nn {

namespace {
// The fields of a tensor that say what it holds and where it is in the
// graph (not its .grad, hooks, name or owner: those stay the parameter's).
void swap_contents(TensorImpl& a, TensorImpl& b) {
  std::swap(a.storage, b.storage);
  std::swap(a.offset, b.offset);
  std::swap(a.shape, b.shape);
  std::swap(a.strides, b.strides);
  std::swap(a.dtype, b.dtype);
  std::swap(a.requires_grad, b.requires_grad);
  std::swap(a.grad_fn, b.grad_fn);
}
}  // namespace

Tensor functional_call(Module& module, const std::vector<std::pair<std::string, Tensor>>& parameters,
                       const std::function<Tensor()>& fn) {
  std::vector<std::pair<std::string, Tensor>> own = module.named_parameters();
  std::vector<std::pair<Tensor, Tensor>> swaps;  // (parameter, what stands in for it)
  std::set<std::string> seen;
  for (const auto& [name, t] : parameters) {
    EMBER_CHECK(seen.insert(name).second, "functional_call", "parameter '" << name << "' is given twice");
    const Tensor* p = nullptr;
    for (const auto& [n, param] : own)
      if (n == name) p = &param;
    EMBER_CHECK(p, "functional_call", module.type_name() << " has no parameter named '" << name << "'");
    EMBER_CHECK(t.defined() && t.shape() == p->shape() && t.dtype() == p->dtype(), "functional_call",
                "parameter '" << name << "' is " << dtype_name(p->dtype()) << " " << shape_str(p->shape())
                              << " but the tensor given for it is "
                              << (t.defined() ? dtype_name(t.dtype()) + std::string(" ") + shape_str(t.shape())
                                              : std::string("undefined")));
    // A recorded view when t takes part in the graph (the parameter's
    // handle then leads to t's node), else an alias of its memory.
    swaps.emplace_back(*p, t.requires_grad() ? t.view(t.shape()) : t.detach());
  }
  std::vector<const TensorImpl*> borrowed;
  for (auto& [p, stand_in] : swaps) {
    swap_contents(*p.impl(), *stand_in.impl());
    borrowed.push_back(p.impl());
  }
  const std::vector<const TensorImpl*>* outer = detail::borrowed_parameters;
  std::vector<const TensorImpl*> all = borrowed;
  if (outer) all.insert(all.end(), outer->begin(), outer->end());
  detail::borrowed_parameters = &all;
  struct Restore {
    std::vector<std::pair<Tensor, Tensor>>& swaps;
    const std::vector<const TensorImpl*>* outer;
    ~Restore() {
      for (auto& [p, stand_in] : swaps) swap_contents(*p.impl(), *stand_in.impl());
      detail::borrowed_parameters = outer;
    }
  } restore{swaps, outer};
  Tensor out = fn();
  // An output that is a parameter's own handle would change with the restore.
  for (auto& [p, stand_in] : swaps)
    if (out.impl() == p.impl()) return out.view(out.shape());
  return out;
}

}  // namespace ember::nn
