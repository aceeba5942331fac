// Indexing: index_select (the embedding lookup) and gather. Their backward is
// a scatter-add: every selected row/element sends its gradient back to where
// it came from, and an id used twice receives the sum.
#include "autograd/node.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

struct IndexSelectBackward;
Tensor index_select(const Tensor& x, int64_t d, const Tensor& ids) {
  Tensor out = kernel::index_select(x, d, ids);
  record<IndexSelectBackward>(out, {x}, x.shape(), wrap_dim(d, x.dim(), "index_select"), ids);
  return out;
}
// grad_x = zeros(x.shape); grad_x[ids[i]] += grad_out[i]
struct IndexSelectBackward final : Node {
  EMBER_NODE_NAME(IndexSelectBackward)
  Shape in_shape;
  int64_t dim;
  SavedTensor ids;
  IndexSelectBackward(Shape s, int64_t d, const Tensor& i) : in_shape(std::move(s)), dim(d), ids(i) {}
  std::vector<SavedTensor*> saved() override { return {&ids}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    Tensor grad_x = zeros(in_shape, g.dtype());
    kernel::index_add_(grad_x, dim, ids.get(*this), g);
    return {grad_x};
  }
};

struct GatherBackward;
Tensor gather(const Tensor& x, int64_t d, const Tensor& ids) {
  Tensor out = kernel::gather(x, d, ids);
  record<GatherBackward>(out, {x}, x.shape(), wrap_dim(d, x.dim(), "gather"), ids);
  return out;
}
// grad_x = scatter_add(zeros(x.shape), d, ids, grad_out)
struct GatherBackward final : Node {
  EMBER_NODE_NAME(GatherBackward)
  Shape in_shape;
  int64_t dim;
  SavedTensor ids;
  GatherBackward(Shape s, int64_t d, const Tensor& i) : in_shape(std::move(s)), dim(d), ids(i) {}
  std::vector<SavedTensor*> saved() override { return {&ids}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    return {kernel::scatter_add(in_shape, dim, ids.get(*this), g)};
  }
};

Tensor one_hot(const Tensor& ids, int64_t num_classes) { return kernel::one_hot(ids, num_classes); }

Tensor& index_add_(Tensor& x, int64_t d, const Tensor& ids, const Tensor& src) {
  EMBER_CHECK(!(is_grad_enabled() && (x.requires_grad() || src.requires_grad())), "index_add_",
              "in-place index_add_ on tensors that require grad (destination " << shape_str(x.shape()) << ", source "
                                                                               << shape_str(src.shape())
                                                                               << ") is only allowed under NoGradGuard");
  kernel::index_add_(x, d, ids, src);
  return x;
}

}  // namespace ember
