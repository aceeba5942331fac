/// @file
/// The options of a GPT training run (train/trainer.h), as text and back:
/// saved with every checkpoint, compared on resume and across ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/text_fields.h"

namespace ember::train {

struct TrainOptions {
  int64_t steps = 1000;
  int64_t batch = 32;
  double lr = 3e-3;            // peak learning rate
  double min_lr = 3e-4;        // at the end of the cosine decay
  int64_t warmup = 50;         // linear warmup steps
  int64_t lr_decay_steps = 0;  // where the cosine reaches min_lr (0: at `steps`); after it, min_lr
  double weight_decay = 0.1;   // AdamW, on matrices only
  double grad_clip = 1.0;      // max global gradient norm (0: off)
  int64_t eval_every = 100;    // validation loss every N steps (and at the last)
  int64_t eval_batches = 8;    // batches per validation estimate
  double val_fraction = 0.1;
  uint64_t seed = 0;           // batches (the model has its own seed)

  /// "steps=1000 batch=32 ..." (saved with the training state) and back.
  std::string to_string() const;
  static TrainOptions from_string(const std::string& s);
};

/// The options that define a run, as "key: A in the run, B given" lines for
/// every key whose value differs between `run` and `given` (`steps` is left
/// out: a run may be continued further than it was planned).
std::vector<std::string> differing_options(const TrainOptions& run, const TrainOptions& given);

/// Every option, in the order to_string writes them.
const TextFields<TrainOptions>& train_option_fields();
/// "key=value ..." of every option but `steps`: what defines a run's
/// numbers, however far it is trained.
std::string options_without_steps(const TrainOptions& o);

}  // namespace ember::train
