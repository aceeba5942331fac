/// @file
/// Autocast: mixed precision, the way PyTorch's CPU autocast does it with
/// bfloat16 — the products in fewer bits, everything else in float32.
///
///   {
///     AutocastGuard bf16;                // this thread, this scope
///     Tensor loss = model.loss(x, y);    // products: bf16 inputs, float32 sums
///     loss.backward();                   // their backward products too
///   }
///   opt.step();                          // float32 weights and moments, always
///
/// Inside the scope, every matmul of two float32 tensors (and so every
/// linear layer, attention's two products per head and the GPT's head)
/// rounds its inputs to bfloat16 as they are packed and accumulates in
/// float32 (tensor/gemm/step7_bfloat16.cpp); the result is float32. The
/// backward of such a product computes its two products the same way,
/// whether or not the scope is still open when backward runs: the node
/// remembers. Nothing else changes: master weights, gradients and optimizer
/// state stay float32, and so do the ops that PyTorch's CPU autocast keeps
/// in float32 or leaves in their input's type — reductions, softmax,
/// layer_norm, GELU, the cross-entropy loss — since a product hands them
/// float32. (PyTorch returns the product in bfloat16 and lets the next op
/// cast it back; ember keeps the float32 sum, one rounding fewer.)
/// float64 products are left alone, as PyTorch leaves them: gradcheck runs
/// in float64 under autocast too.
///
/// The lists followed: PyTorch's CPU "lower_precision_fp" ops are the
/// products (mm, bmm, matmul, linear, addmm, baddbmm, the convolutions,
/// scaled_dot_product_attention); its "fp32" ops are the losses and the
/// numerically delicate rest. ember's products all go through matmul.
#pragma once

namespace ember {

/// The products of this thread run in bfloat16 (with float32 sums).
bool is_autocast_enabled();
void set_autocast_enabled(bool on);

/// RAII: autocast on (or `on`) for its scope, the previous state restored after.
class AutocastGuard {
 public:
  explicit AutocastGuard(bool on = true) : prev_(is_autocast_enabled()) { set_autocast_enabled(on); }
  ~AutocastGuard() { set_autocast_enabled(prev_); }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ember
