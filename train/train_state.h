/// @file
/// What a checkpoint's train_state.safetensors holds beside the model: all
/// that a resumed run needs to go on bit for bit where the saved one stopped.
///
///   optim.GROUP.INDEX.SLOT  the optimizer's state (AdamW: exp_avg, exp_avg_sq, step)
///   generators  (2 n) int64       each generator's (state, inc), in the trainer's order
///   history     (steps + 1, 5) float64   step, loss, lr, grad_norm, val_loss (NaN: none)
///   metadata    ember.step, ember.optimizer.steps, ember.train (the training
///               options as text), ember.world_size (only when several
///               processes trained), ember.run and ember.data_hash (the run's
///               identity and its data's, Trainer::run_id), ember.format
///
/// read_train_state checks the file's form; whether it fits a given trainer
/// (its model, its generators, its options) is the trainer's to check.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "train/safetensors.h"

namespace ember::train {

/// The checkpoint format this ember writes, in "ember.format" of both files:
///   1  (no ember.format) GPT blocks named block0., block1., ...
///   2  GPT blocks in a ModuleList: blocks.0., blocks.1., ...; the run's identity recorded
///   3  format 2 with weights in fewer bits (nn/quantize.h): int8 "weight"
///      buffers (I8) with "weight_scale" beside them, or bfloat16 ones, and
///      "ember.quantization" saying which; written only for such a model
/// load_gpt and Trainer::resume read all three (train/checkpoint.h migrates 1);
/// a higher one, written by a newer ember, is refused by name, as an ember
/// that reads only up to 2 refuses a quantized checkpoint.
inline constexpr int64_t kCheckpointFormat = 2;
inline constexpr int64_t kQuantizedFormat = 3;  // the highest format this ember reads
inline constexpr const char* kQuantizationKey = "ember.quantization";
inline constexpr const char* kFormatKey = "ember.format";

/// 16 hex digits of a 64-bit FNV-1a hash of the bytes: the identities a
/// checkpoint records (of a run, of its data). Tells runs apart; it is not
/// a defence against a forged file.
std::string fingerprint(const void* data, size_t bytes);
inline std::string fingerprint(const std::string& s) { return fingerprint(s.data(), s.size()); }

/// One row of a run's history: what one step did.
struct StepLog {
  int64_t step;                // the number of updates done; 0: the untrained model
  double loss;                 // training loss of this step's batch (NaN at step 0)
  double lr;                   // NaN at step 0
  double grad_norm;            // before clipping (NaN at step 0)
  std::optional<double> val_loss;
};

struct TrainState {
  int64_t step = 0;             // updates done
  int64_t optimizer_steps = 0;  // the optimizer's own count
  int64_t world_size = 1;       // processes that trained it
  NamedTensors optimizer;       // "<group>.<index>.<slot>"
  Tensor generators;            // (2 n) int64: state, inc pairs
  std::vector<StepLog> history; // the step-0 row, then one per step
  std::optional<std::string> options;  // TrainOptions::to_string() (absent in files older than it)
  std::optional<std::string> run_id;   // Trainer::run_id() (absent in files of format 1)
  std::optional<std::string> data_id;  // the fingerprint of the tokens (absent in files of format 1)
  int64_t format = kCheckpointFormat;  // what the file says (1 when it says nothing)
};

/// Writes the state to path atomically (train/safetensors.h).
void write_train_state(const std::string& path, const TrainState& state);
/// Reads path and checks its form: the counts are non-negative integers, the
/// tensors are the ones above, and the history has one row per step after the
/// step-0 row. An ember::Error (op "resume") naming the file otherwise.
TrainState read_train_state(const std::string& path);

/// A non-negative integer from a file's metadata: an ember::Error (op
/// "resume") naming the file and the key when it is missing or not one.
int64_t metadata_count(const Metadata& metadata, const std::string& key, const std::string& file);
/// A checkpoint file's format (ember.format; 1 when absent): an ember::Error
/// naming the file when it is not one this ember reads.
int64_t checkpoint_format(const Metadata& metadata, const std::string& file);

}  // namespace ember::train
