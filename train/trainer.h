/// @file
/// The training loop of examples/train_gpt, as a library piece so that tests
/// can check what matters: the loss goes down, and training N steps straight
/// equals training k steps, saving, resuming and training N - k more, bit for bit.
///
/// One step: sample a batch, forward, loss, zero grads, backward, clip the
/// gradient norm, set the learning rate from the schedule, AdamW step.
///
/// Saving and resuming (Trainer::save, Trainer::resume) are defined in
/// train/resume.cpp, with the helpers that find a run's checkpoints
/// (train/resume.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "train/checkpoint.h"
#include "train/data.h"
#include "train/optim.h"
#include "train/run_dir.h"
#include "train/train_options.h"
#include "train/train_state.h"  // StepLog, what train_state.safetensors holds

namespace ember::train {

/// Named values ({"lr", "0.003"}, ...): what several processes must agree on.
using Settings = std::vector<std::pair<std::string, std::string>>;

/// What a Trainer needs to be one of several processes that train one model
/// together (data parallelism; distributed::DataParallel implements it over MPI).
/// Each process (rank) computes the gradient of its shard of every batch;
/// average_gradients() then gives every rank the mean over the ranks, so all
/// of them take the same optimizer step.
class Replicas {
 public:
  virtual ~Replicas() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual void average_gradients() = 0;
  virtual double average(double value) = 0;  // mean over the ranks
  virtual bool any(bool mine) = 0;           // true everywhere if true on some rank
  /// Collective: every rank passes its values of the same settings; unless
  /// they are equal on every rank, an ember::Error on every rank alike,
  /// naming each setting that differs and its value on each rank, under
  /// `op`: who asks (the Trainer for its options, DataParallel for its
  /// parameters' layout).
  virtual void check_agreement(const char* op, const Settings& settings) = 0;

  /// One optimizer step after backward, from this rank's gradients; returns
  /// the global gradient norm before clipping (0 when grad_clip is 0). The
  /// default is data parallelism: average_gradients(), clip_grad_norm_ over
  /// params, opt.step(). distributed::Zero overrides it to update only its
  /// shard of the parameters.
  virtual double update(optim::Adam& opt, const std::vector<Tensor>& params, double grad_clip);
  /// Called when opt's state may have changed under the replicas (the
  /// trainer attaching them, a resume): replicas that shard the optimizer's
  /// state take their part of it from opt (and leave opt without it).
  virtual void adopt(optim::Adam& opt) { (void)opt; }
  /// At the start of a step, with the optimizer's zero_grad: replicas that
  /// keep gradients of their own (distributed::Zero's shard) drop them.
  virtual void zero_grad() {}
  /// opt's whole state, as Optimizer::state() names it, for a checkpoint.
  /// Collective for replicas that shard it (every rank calls it; rank 0
  /// gets the whole state, the others an empty list).
  virtual std::vector<std::pair<std::string, Tensor>> optimizer_state(const optim::Optimizer& opt) { return opt.state(); }
};

class Trainer {
 public:
  Trainer(nn::GPT& model, std::vector<int64_t> tokens, TrainOptions options);

  /// Trains as one of replicas.world_size() processes: each step takes this
  /// rank's shard of the batch (options.batch stays the whole batch, so the
  /// run is the same whatever the number of ranks, up to float round-off),
  /// the gradients are averaged before clipping, and the logged loss is the
  /// mean over the ranks. Only rank 0 evaluates (the others' history has no
  /// validation loss) and saves. Refused when the batch does not split into
  /// equal shards, and with dropout (each rank would draw the same masks for
  /// different rows). The replicas must outlive the trainer. First of all,
  /// every rank must agree on agreement() and on `also` (what else must be
  /// equal: train_gpt adds the vocabulary), or every rank throws the same
  /// error (Replicas::check_agreement): ranks that differ in any of them
  /// would take different steps while the gradients keep them in lockstep.
  void set_replicas(Replicas& replicas, const Settings& also = {});
  /// What the ranks of one run must share: every training option (steps and
  /// the batches' seed included), every field of the model's config but its
  /// seed (DataParallel gives every rank rank 0's weights), the data
  /// (data_id()), the steps done and the state resumed from (a fingerprint
  /// of the optimizer's state and the generators; "none" for a fresh run).
  Settings agreement() const;

  /// The run's identity, 16 hex digits: a fingerprint of what defines the
  /// numbers the run computes — the model's config, every training option
  /// but `steps` (a run may be continued further than planned) and the data.
  /// It is not drawn at random: two runs with the same definition are the
  /// same run (and for the same thread count compute the same bits), so
  /// that a resumed run's files equal an uninterrupted one's, byte for byte.
  /// Both files of every checkpoint record it ("ember.run"); save() refuses a
  /// directory that holds another run's checkpoint, and resume() checks what
  /// defines the run (options, data, config) and goes on as the saved run.
  const std::string& run_id() const { return run_id_; }
  /// The data's identity: the fingerprint of the token ids (the corpus as the
  /// model sees it), recorded as "ember.data_hash".
  const std::string& data_id() const { return data_id_; }

  /// One update. The first call also evaluates the untrained model: the
  /// history starts with a step-0 row holding only its validation loss.
  StepLog step();
  bool done() const { return steps_done_ >= options_.steps; }
  /// Mean loss over options.eval_batches validation batches; the batches are
  /// the same at every call (their own fixed generator), so values compare.
  double evaluate();
  int64_t steps_done() const { return steps_done_; }
  /// Tokens of the training part; the rest, to the end, is the validation part.
  int64_t train_tokens() const { return sampler_.train_size(); }
  const std::vector<StepLog>& history() const { return history_; }
  const TrainOptions& options() const { return options_; }

  /// Saves a checkpoint of the run into the run directory dir. In a job of
  /// several ranks every rank calls it and rank 0 writes (it alone has the
  /// validation losses; with sharded replicas the others send it their
  /// shards of the optimizer's state first). The files are the same
  /// whatever the replicas: any number of ranks, sharded or not, resumes them.
  /// (train/run_dir.h: complete or absent at every instant, also if the
  /// process dies mid-save):
  ///   dir/checkpoints/step-00000200/model.safetensors  the model, with `metadata`
  ///   dir/checkpoints/step-00000200/train_state.safetensors  optimizer, step, generators, history
  ///   dir/latest -> checkpoints/step-00000200          (replaced in one rename)
  ///   dir/model.safetensors -> latest/model.safetensors  (and train_state.safetensors)
  /// Older checkpoints (and the leftovers of killed saves) are removed. A
  /// step already saved is kept. The directory is held (RunDir::lock) while
  /// it is checked and saved into, and must not hold another run's
  /// checkpoints (an ember::Error naming both runs: the save would replace
  /// them).
  void save(const std::string& dir, const Metadata& metadata) const;
  /// Restores the newest complete checkpoint in dir (train/resume.h:
  /// latest_checkpoint), in
  /// three steps: read both files, validate
  /// everything against this trainer, then apply. An error in the first two
  /// leaves the model and the trainer exactly as they were. Every option
  /// except `steps` must equal the run's (the error names those that differ);
  /// `steps` may be larger, to train the run further. The data and the
  /// model's config (but its seed: every weight and generator is restored)
  /// must be the run's too, and both files of one run; the trainer then goes
  /// on as that run (run_id()). A model of checkpoint format 1 is read
  /// through upgrade_gpt_names.
  void resume(const std::string& dir);
  /// The training options and the model metadata a checkpoint directory was
  /// saved with (to continue it without repeating every flag).
  static TrainOptions saved_options(const std::string& dir);
  /// How many processes trained the checkpoint that resume() read (1 for a
  /// run of one process). The same number continues bit for bit; another
  /// continues the same run within float round-off.
  int64_t resumed_world_size() const { return resumed_world_size_; }

 private:
  // a checkpoint's two files into dir, with the optimizer's whole state
  void write_files(const std::string& dir, const Metadata& metadata,
                   const std::vector<std::pair<std::string, Tensor>>& optimizer_state) const;

  nn::GPT& model_;
  TrainOptions options_;
  std::string data_id_;  // (before sampler_, which takes the tokens)
  BatchSampler sampler_;
  std::unique_ptr<optim::AdamW> optimizer_;
  optim::WarmupCosineLR schedule_;
  int64_t steps_done_ = 0;
  std::vector<StepLog> history_;
  Replicas* replicas_ = nullptr;  // null: one process
  Shard shard_;
  int64_t resumed_world_size_ = 1;
  std::string run_id_;
  std::string resumed_state_ = "none";  // agreement(): what resume() restored
};

}  // namespace ember::train
