/// @file
/// A whole model's weights in fewer bits (nn/quantize.h has one weight):
/// quantize a GPT or every Linear of a model of one's own, list the
/// quantized weights, choose how they multiply, and name the quantization a
/// checkpoint records.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/gpt.h"
#include "nn/quantize.h"

namespace ember::nn {

/// Quantizes, in place, every Linear of the model, its token table and its
/// head (tied or not); error if it is quantized already. Inference only
/// from then on (see nn/quantize.h).
void quantize(GPT& model, const QuantizeOptions& options = {});
/// Every Linear in a module tree (a model of one's own).
void quantize_linears(Module& model, const QuantizeOptions& options = {});
/// The quantized weights of a model, by the name of their module.
std::vector<std::pair<std::string, std::shared_ptr<QuantizedWeight>>> quantized_weights(const Module& model);
/// Brings every quantized layer's float32 `weight` up to its buffers (after
/// Module::load_state_dict; train::load does it itself).
void refresh_quantized(const Module& model);
/// Sets every int8 weight's product mode / reference flag.
void set_int8_mode(const Module& model, gemm::Int8Mode mode);
void set_reference(const Module& model, bool reference);
/// The model's quantization ("" when none): its weights' QuantizeOptions.
std::string quantization_of(const Module& model);

}  // namespace ember::nn
