/// @file
/// A GPT run directory's checkpoints: finding the newest, naming its run.
/// Trainer::save and Trainer::resume (train/trainer.h) are defined in
/// train/resume.cpp, beside them.
#pragma once

#include <optional>
#include <string>

#include "train/run_dir.h"
#include "train/train_options.h"

namespace ember::train {

/// A complete checkpoint of a run directory that Trainer::save wrote.
struct Checkpoint {
  int64_t step = 0;
  std::string dir, model, train_state;  // the step directory and its two files
};
/// The newest complete checkpoint in run_dir (RunDir::latest): the highest
/// step directory under checkpoints/ (or, for a directory saved before step
/// directories existed, its two files, as step 0). Error naming run_dir when
/// there is none.
Checkpoint latest_checkpoint(const std::string& run_dir);
/// The same, or nothing when run_dir holds no complete checkpoint.
std::optional<Checkpoint> find_checkpoint(const std::string& run_dir);

/// What a GPT run directory holds of a run, read from the headers of its
/// newest checkpoint (no tensor is read): to name a run in a message.
struct RunSummary {
  int64_t step = 0;
  std::string run_id;  // "" for a checkpoint of format 1
  std::optional<TrainOptions> options;
};
std::optional<RunSummary> run_summary(const std::string& run_dir);
/// The run directory of a GPT run (train/run_dir.h): its checkpoints hold
/// model.safetensors and train_state.safetensors.
RunDir gpt_run_dir(const std::string& dir);

}  // namespace ember::train
