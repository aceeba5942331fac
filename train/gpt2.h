/// @file
/// GPT-2 checkpoints as Hugging Face distributes them: a directory with
/// config.json and model.safetensors, read into ember's GPT.
///
/// GPT-2 is the GPT of nn/gpt.h with the tanh form of GELU; the files only
/// name and lay out its tensors differently:
///
///   GPT-2 (after an optional "transformer." prefix)   ember's GPT
///   wte.weight (V, D)                                  embed.token.weight, and the head (tied)
///   wpe.weight (L, D)                                  embed.positional.weight
///   h.N.ln_1.{weight,bias}                             blocks.N.ln1.*
///   h.N.attn.c_attn.weight (D, 3D), bias (3D)          blocks.N.attn.w_q, w_k, w_v: columns
///                                                      [0, D), [D, 2D), [2D, 3D), transposed
///   h.N.attn.c_proj.weight (D, D)                      blocks.N.attn.w_o, transposed
///   h.N.ln_2.*                                         blocks.N.ln2.*
///   h.N.mlp.c_fc.weight (D, 4D)                        blocks.N.fc1, transposed
///   h.N.mlp.c_proj.weight (4D, D)                      blocks.N.fc2, transposed
///   ln_f.*                                             ln_f.*
///   lm_head.weight (V, D), only when untied            head.weight
///
/// "Transposed": GPT-2's projections are Conv1D modules, y = x W + b with W
/// stored (in, out), where a Linear stores (out, in) and computes x Wᵀ + b.
/// The causal-mask buffers h.N.attn.bias and h.N.attn.masked_bias are
/// skipped (ember's attention is causal by construction).
#pragma once

#include <memory>
#include <string>

#include "nn/gpt.h"
#include "train/safetensors.h"

namespace ember::train {

/// The GPTConfig of a GPT-2 config.json: vocab_size, n_positions (or n_ctx),
/// n_embd, n_head, n_layer, activation_function ("gelu_new" or
/// "gelu_pytorch_tanh": the tanh form; "gelu": exact), tie_word_embeddings
/// (default true), and dtype float32. A setting ember's GPT does not have
/// (layer_norm_epsilon other than 1e-5, n_inner not a multiple of n_embd,
/// unscaled or layer-scaled attention, another activation) is an error
/// naming the key and the value, as is a missing key.
nn::GPTConfig gpt2_config(const std::string& config_json_path);

/// The file's tensors renamed and laid out as the GPT `config` describes
/// names them (the table above), for plan_load. An error naming the file and
/// the tensor for a name GPT-2 does not have, a missing tensor, or a shape
/// that does not fit the config.
SafetensorsContents gpt2_to_ember(const SafetensorsContents& file, const nn::GPTConfig& config,
                                  const std::string& path);

/// A GPT built from dir/config.json with dir/model.safetensors loaded into
/// it (every check of plan_load: nothing is half loaded).
std::unique_ptr<nn::GPT> load_gpt2(const std::string& dir);

}  // namespace ember::train
