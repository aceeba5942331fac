// The tiny GPT of docs/book/07_training_a_gpt.md: the model and the step that
// train_gpt trains by default and fewer_bits trains twice (float32, then
// bfloat16 autocast). Each program sets its own number of steps.
#pragma once

#include "ember.h"

namespace ember::examples {

inline void tiny_gpt_defaults(nn::GPTConfig& cfg, train::TrainOptions& opt) {
  cfg.context_length = 64;
  cfg.dim = 128;
  cfg.heads = 4;
  cfg.layers = 3;
  opt.batch = 16;
  opt.lr = 3e-3;
}

}  // namespace ember::examples
