/// @file
/// Activation checkpointing: run a piece of the model without keeping what
/// its ops save for backward, and run it again inside backward to get it
/// back (PyTorch's torch.utils.checkpoint is the habit).
///
///   Tensor y = checkpoint([&](const std::vector<Tensor>& in) { return block.forward(in[0]); }, {x});
///   Tensor y = nn::checkpoint(block, x);   // the same, for a module (nn/checkpoint.h)
///
/// A block then keeps only its input until backward. When backward reaches
/// the block, it runs the block's forward again, with the same inputs, the
/// same parameters and the same random numbers (each generator it drew from
/// is set back to the state it had, and restored afterwards), so its dropout
/// masks and every value are the same bits, then backpropagates through that
/// graph and frees it. The gradients are bitwise those of the run without
/// checkpointing; the cost is one more forward of the piece.
///
/// What the piece reads besides its inputs (its parameters, any other tensor
/// that requires grad) is found by walking the graph its forward recorded,
/// which is then dropped: a parameter needs no listing, and gradients reach
/// every tensor they would reach without checkpointing. A tensor the piece
/// reads through a temporary of the caller's that no longer exists when the
/// piece returns is refused (its gradient would stop there): pass it as an
/// input.
///
/// A checkpointed function must not write its inputs, or any other tensor
/// it reads that requires grad, in place: the write would be made again
/// when backward recomputes the function (the input changed twice, the
/// gradient computed from the changed value). Such a write is refused, an
/// ember::Error naming the op and the input, before the input is changed;
/// writes into tensors the function makes itself are fine.
///
/// Every input and every leaf read is kept with its version: a parameter
/// updated in place between forward and backward is an error in backward
/// (as for any saved tensor), not a gradient of other weights. Works with
/// create_graph (the recomputation then records, and the gradient can be
/// differentiated again) and with forward mode (the tangents are those of
/// the piece's ops). The function, the module and the generators it draws
/// from must outlive the backward.
#pragma once

#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

using CheckpointFn = std::function<Tensor(const std::vector<Tensor>& inputs)>;

/// fn(inputs), checkpointed. Outside grad mode it is fn(inputs).
Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs);

namespace detail {
/// Told, on this thread, of each in-place write before it is made (every
/// in-place method of autograd/tensor_methods.cpp calls before_write). Its
/// one user is checkpoint, which refuses writes into what a checkpointed
/// function reads. Null when nothing watches.
struct WriteWatcher {
  virtual void writing(const Tensor& t, const char* op) = 0;

 protected:
  ~WriteWatcher() = default;
};
extern thread_local WriteWatcher* write_watcher;
inline void before_write(const Tensor& t, const char* op) {
  if (write_watcher) [[unlikely]]
    write_watcher->writing(t, op);
}
}  // namespace detail

}  // namespace ember
