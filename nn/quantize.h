/// @file
/// Weights in fewer bits, for inference: a trained model's Linear layers,
/// token table and LM head stored as int8 with a float32 scale per group of
/// inputs (or as bfloat16), multiplied by step 8 of the GEMM lesson
/// (tensor/gemm/int8.h, docs/book/13_gemm_and_bfloat16.md).
///
///   nn::GPT model(config);  train::load(model, "gpt.safetensors");
///   nn::quantize(model);                        // int8, groups of 32 (nn/quantize_model.h)
///   model.generate(prompt, 100, {.temperature = 0});
///   train::save(model, "gpt_int8.safetensors", metadata);  // about 0.29 of the bytes
///
/// A quantized layer keeps its module and its names: its "weight" is a
/// buffer of int8 values (N, K) with "weight_scale" (N, ceil(K / G)) beside it
/// (or one bfloat16 buffer), saved and loaded as any buffer, and no longer a
/// parameter: it does not train, and a product with an input that requires
/// grad is refused. The layer's `weight` member holds the float32 values
/// the stored ones stand for (the dequantized weight: the reference path,
/// and what an embedding lookup reads); it follows the buffers when
/// train::load fills them (see QuantizedWeight::dequantized). Biases, layer norms and the positional
/// table stay float32: they are a small part of the bytes.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tensor/gemm/int8.h"
#include "tensor/tensor.h"

namespace ember::nn {

struct QuantizeOptions {
  gemm::WeightFormat format = gemm::WeightFormat::Int8;
  /// Inputs per scale (int8): 32, 64, 128 or 256. 32 by default: see
  /// tensor/gemm/step8_int8.cpp for the choice.
  int64_t group = 32;
  /// How an int8 weight multiplies (tensor/gemm/int8.h): activations
  /// quantized too, or kept float32.
  gemm::Int8Mode mode = gemm::Int8Mode::Int8Activations;

  /// The stored form, "int8 group=32" or "bfloat16" (the checkpoint's
  /// "ember.quantization"; the mode is not stored), and back; an error
  /// naming the text otherwise.
  std::string to_string() const;
  static QuantizeOptions from_string(const std::string& s);
};

/// One weight (N, K) in fewer bits, and its products.
class QuantizedWeight {
 public:
  /// Quantizes a float32 weight (N, K) with finite values; errors name `op`.
  QuantizedWeight(const Tensor& weight, const QuantizeOptions& options, const char* op);

  /// The stored values: int8 (N, K) and scale float32 (N, ceil(K / G)),
  /// or bfloat16 (N, K) and an undefined scale. Their values may change (a
  /// load copies into them); a product refuses them if their shapes or
  /// dtypes did.
  Tensor values, scale;
  /// What a module registers in place of its weight: {"weight", values}
  /// and, for int8, {"weight_scale", scale}.
  std::vector<std::pair<std::string, Tensor>> buffers() const;
  const QuantizeOptions& options() const { return options_; }
  int64_t out_features() const { return values.size(0); }
  int64_t in_features() const { return values.size(1); }

  /// x (*, K) float32 -> (*, N): x Wᵀ (+ bias), with step 8's kernel, or
  /// with matmul on dequantized() when `reference` is set. Errors name op.
  Tensor linear(const Tensor& x, const Tensor& bias, const char* op);
  /// What the stored values stand for, float32 (N, K): q x scale. The same
  /// tensor every call, refreshed in place when the values have changed
  /// (train::load does it after loading; after Module::load_state_dict the
  /// next product or lookup does, or nn::refresh_quantized).
  const Tensor& dequantized();
  /// Multiply by the dequantized float32 weight instead (the reference).
  std::atomic<bool> reference{false};
  /// An int8 weight's product mode (repacks on the next product).
  void set_mode(gemm::Int8Mode mode);
  /// Bytes a product reads of the weight (values and scales).
  int64_t bytes() const;

 private:
  void refresh();  // after the buffers changed (a load): repack and dequantize again
  QuantizeOptions options_;
  Shape values_shape_, scale_shape_;
  mutable std::mutex mutex_;
  gemm::PackedWeight packed_;
  Tensor dequantized_;
  uint64_t seen_values_ = ~0ull, seen_scale_ = ~0ull;
  gemm::Int8Mode packed_mode_{};
};

}  // namespace ember::nn
