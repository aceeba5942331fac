#include "nn/kv_cache.h"

#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember::nn {

KVCache::KVCache(int64_t layers, int64_t batch, int64_t heads, int64_t capacity, int64_t head_dim, DType dtype)
    : batch_(batch), heads_(heads), capacity_(capacity), head_dim_(head_dim), dtype_(dtype) {
  EMBER_CHECK(layers >= 0 && batch > 0 && heads > 0 && capacity > 0 && head_dim > 0, "KVCache",
              "layers " << layers << " must be >= 0 and batch " << batch << ", heads " << heads << ", capacity "
                        << capacity << ", head_dim " << head_dim << " positive");
  EMBER_CHECK(is_floating(dtype), "KVCache", "dtype must be floating, got " << dtype_name(dtype));
  for (int64_t l = 0; l < layers; ++l) {
    keys_.push_back(zeros({batch, heads, capacity, head_dim}, dtype));
    values_.push_back(zeros({batch, heads, capacity, head_dim}, dtype));
  }
}

std::pair<Tensor, Tensor> KVCache::append(int64_t layer, const Tensor& k, const Tensor& v) {
  EMBER_CHECK(layer >= 0 && layer < layers(), "KVCache", "layer " << layer << " is outside [0, " << layers() << ")");
  EMBER_CHECK(k.dim() == 4 && k.shape() == v.shape() && k.size(0) == batch_ && k.size(1) == heads_ &&
                  k.size(3) == head_dim_ && k.dtype() == dtype_ && v.dtype() == dtype_,
              "KVCache",
              "layer " << layer << ": k " << dtype_name(k.dtype()) << " " << shape_str(k.shape()) << " and v "
                       << dtype_name(v.dtype()) << " " << shape_str(v.shape()) << " must both be " << dtype_name(dtype_)
                       << " (" << batch_ << ", " << heads_ << ", T, " << head_dim_ << ")");
  const int64_t T = k.size(2);
  EMBER_CHECK(T <= capacity_ - length_, "KVCache",
              "layer " << layer << ": " << T << " new positions after the " << length_
                       << " cached exceed the capacity " << capacity_
                       << " (the model's context length): reset() the cache, or recompute a window of the last tokens");
  const Tensor &K = keys_[static_cast<size_t>(layer)], &V = values_[static_cast<size_t>(layer)];
  kernel::copy_(kernel::slice(K, 2, length_, length_ + T, 1), k, "KVCache");
  kernel::copy_(kernel::slice(V, 2, length_, length_ + T, 1), v, "KVCache");
  return {kernel::slice(K, 2, 0, length_ + T, 1), kernel::slice(V, 2, 0, length_ + T, 1)};
}

void KVCache::advance(int64_t T) {
  EMBER_CHECK(T >= 0 && T <= capacity_ - length_, "KVCache",
              "advance(" << T << ") after " << length_ << " cached positions: must be in [0, " << capacity_ - length_
                         << "] (capacity " << capacity_ << ")");
  length_ += T;
}

int64_t KVCache::nbytes() const {
  return 2 * layers() * batch_ * heads_ * capacity_ * head_dim_ * static_cast<int64_t>(dtype_size(dtype_));
}

}  // namespace ember::nn
