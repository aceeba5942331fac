/// @file
/// A key-value cache for decoding one token at a time.
///
/// A causal GPT computes, for every new token, the keys and values of every
/// earlier token again, although they cannot change: position i attends to
/// positions 0..i only, so token i's key and value in layer l depend on
/// tokens 0..i alone. The cache keeps them. Decoding then runs in two parts:
///
///   prefill  the prompt (B, P) once, through every layer, appending its
///            P keys and values per layer: length() = P
///   decode   one token (B, 1) at a time: its query attends to the cached
///            keys 0..n-1 and its own key n, appended first
///
/// Each layer's keys are one (B, h, capacity, d) buffer; append() writes T
/// new rows after the length() already there and returns views of the rows
/// 0..length()+T-1, which attention reads in place (no copy of the past).
/// advance(T) moves length() on once every layer has appended T rows.
///
/// Legend: B batch, h heads, d head dim, L capacity (the model's context
/// length), T new tokens.
#pragma once

#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace ember::nn {

class KVCache {
 public:
  /// Zeroed buffers of (batch, heads, capacity, head_dim) for the keys and
  /// the values of each layer. Error naming the size if one is not positive
  /// (layers may be 0) or dtype is not floating.
  KVCache(int64_t layers, int64_t batch, int64_t heads, int64_t capacity, int64_t head_dim, DType dtype = kFloat32);

  /// Writes k, v (B, h, T, d) of `layer` at positions length()..length()+T-1
  /// and returns views (B, h, length()+T, d) of everything that layer holds.
  /// Error, with nothing written, if the shapes or the dtype differ from
  /// the cache's, the layer is out of range, or length() + T > capacity.
  std::pair<Tensor, Tensor> append(int64_t layer, const Tensor& k, const Tensor& v);
  /// length() += T, once each layer has appended its T rows.
  void advance(int64_t T);
  /// Empties the cache (length() = 0) for a new sequence; the buffers stay.
  void reset() { length_ = 0; }

  int64_t length() const { return length_; }
  int64_t capacity() const { return capacity_; }
  int64_t layers() const { return static_cast<int64_t>(keys_.size()); }
  int64_t batch() const { return batch_; }
  DType dtype() const { return dtype_; }
  /// Bytes the buffers take: 2 · layers · B · h · L · d · sizeof(dtype).
  int64_t nbytes() const;

 private:
  std::vector<Tensor> keys_, values_;
  int64_t batch_, heads_, capacity_, head_dim_, length_ = 0;
  DType dtype_;
};

}  // namespace ember::nn
