// A run's checkpoints: Trainer::save writes one, Trainer::resume reads one
// back in three steps (read, validate, apply), and the helpers that find the
// newest in a run directory.
#include "train/resume.h"

#include "autograd/grad_mode.h"
#include "base/text_fields.h"
#include "tensor/factory.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace ember::train {

namespace {

// Every generator whose state a resumed run needs: the sampler's and each
// Dropout module's.
std::vector<Generator*> generators(nn::GPT& model, BatchSampler& sampler) {
  std::vector<Generator*> gens{&sampler.generator()};
  for (auto& [name, m] : model.named_modules())
    if (auto* d = dynamic_cast<nn::Dropout*>(m)) gens.push_back(&d->generator());
  return gens;
}

// A GPTConfig's text without its seed.
std::string config_without_seed(const std::string& config) {
  std::string out;
  for (const auto& [key, value] : key_values(config, "resume"))
    if (key != "seed") out += (out.empty() ? "" : " ") + key + "=" + value;
  return out;
}

// The fingerprint of tensors' bytes, in order (the state a rank resumed from).
std::string fingerprint_of(const std::vector<Tensor>& tensors) {
  std::string bytes;
  for (const Tensor& t : tensors) {
    const Tensor c = t.contiguous();
    bytes.append(static_cast<const char*>(c.raw_data()), static_cast<size_t>(c.numel()) * dtype_size(c.dtype()));
  }
  return fingerprint(bytes);
}

}  // namespace

RunDir gpt_run_dir(const std::string& dir) { return RunDir(dir, {"model.safetensors", "train_state.safetensors"}); }

void Trainer::save(const std::string& dir, const Metadata& metadata) const {
  // Every rank takes part in collecting the optimizer's state (sharded
  // replicas send their shards to rank 0), before rank 0 checks anything.
  const std::vector<std::pair<std::string, Tensor>> state =
      replicas_ ? replicas_->optimizer_state(*optimizer_) : optimizer_->state();
  if (replicas_ && replicas_->rank() != 0) return;
  const RunDir run = gpt_run_dir(dir);
  const RunLock hold = run.lock();  // no other process saves in between the check and the save
  if (const std::optional<RunSummary> there = run_summary(dir))
    EMBER_CHECK(there->run_id.empty() || there->run_id == run_id_, "save",
                dir << " holds a checkpoint of another run (run " << there->run_id << ", at step " << there->step
                    << "); this is run " << run_id_ << ": saving here would replace it. Save into a directory of its own");
  run.save(steps_done_, [&](const std::string& staging) { write_files(staging, metadata, state); });
}

void Trainer::write_files(const std::string& dir, const Metadata& metadata,
                          const std::vector<std::pair<std::string, Tensor>>& optimizer_state) const {
  TrainState st;
  st.step = steps_done_;
  st.optimizer_steps = optimizer_->steps();
  st.world_size = replicas_ ? replicas_->world_size() : 1;
  st.optimizer = optimizer_state;
  std::vector<Generator*> gens = generators(model_, const_cast<BatchSampler&>(sampler_));
  st.generators = empty({static_cast<int64_t>(2 * gens.size())}, kInt64);
  for (size_t i = 0; i < gens.size(); ++i) {  // the uint64 bit patterns, kept as int64
    st.generators.data_ptr<int64_t>()[2 * i] = static_cast<int64_t>(gens[i]->get_state().state);
    st.generators.data_ptr<int64_t>()[2 * i + 1] = static_cast<int64_t>(gens[i]->get_state().inc);
  }
  st.history = history_;
  st.options = options_.to_string();
  st.run_id = run_id_;
  st.data_id = data_id_;
  write_train_state(dir + "/train_state.safetensors", st);
  Metadata meta = metadata;
  meta["ember.step"] = std::to_string(steps_done_);
  meta["ember.run"] = run_id_;
  meta["ember.config"] = model_.config().to_string();
  train::save(model_, dir + "/model.safetensors", meta);
}

Checkpoint latest_checkpoint(const std::string& dir) {
  const RunDir::Found found = gpt_run_dir(dir).latest();
  return {found.step, found.dir, found.file("model.safetensors"), found.file("train_state.safetensors")};
}

std::optional<Checkpoint> find_checkpoint(const std::string& dir) {
  const std::optional<RunDir::Found> found = gpt_run_dir(dir).newest();
  if (!found) return std::nullopt;
  return Checkpoint{found->step, found->dir, found->file("model.safetensors"), found->file("train_state.safetensors")};
}

std::optional<RunSummary> run_summary(const std::string& dir) {
  const std::optional<Checkpoint> ck = find_checkpoint(dir);
  if (!ck) return std::nullopt;
  const Metadata m = read_safetensors_metadata(ck->train_state);
  RunSummary out;
  out.step = metadata_count(m, "ember.step", ck->train_state);
  if (auto it = m.find("ember.run"); it != m.end()) out.run_id = it->second;
  if (auto it = m.find("ember.train"); it != m.end()) out.options = TrainOptions::from_string(it->second);
  return out;
}

TrainOptions Trainer::saved_options(const std::string& dir) {
  const std::string path = latest_checkpoint(dir).train_state;
  const TrainState st = read_train_state(path);
  EMBER_CHECK(st.options.has_value(), "resume", path << ": no ember.train in the metadata");
  return TrainOptions::from_string(*st.options);
}

void Trainer::resume(const std::string& dir) {
  // 1. Read both files of the newest complete checkpoint (each fully
  // validated as a safetensors file).
  const Checkpoint ck = latest_checkpoint(dir);
  const std::string &state_file = ck.train_state, &model_file = ck.model;
  TrainState st = read_train_state(state_file);
  SafetensorsContents model = read_safetensors(model_file);
  upgrade_gpt_names(model, model_file);  // a checkpoint of format 1 (block0. -> blocks.0.)

  // 2. Validate them against this trainer. Nothing has changed yet.
  const int64_t model_step = metadata_count(model.metadata, "ember.step", model_file);
  EMBER_CHECK(model_step == st.step, "resume",
              dir << ": model.safetensors is at step " << model_step << " but train_state.safetensors at step " << st.step
                  << "; the two files are from different saves");
  std::vector<Generator*> gens = generators(model_, sampler_);
  EMBER_CHECK(st.generators.defined() && st.generators.dtype() == kInt64 &&
                  st.generators.shape() == Shape{static_cast<int64_t>(2 * gens.size())},
              "resume", state_file << ": generator state does not match this model (" << gens.size() << " generators)");
  // The schedule, batches and evaluation depend on every training option:
  // continuing exactly needs the same ones (only how far to train may grow).
  EMBER_CHECK(st.options.has_value(), "resume", state_file << ": no ember.train in the metadata");
  const std::vector<std::string> diff = differing_options(TrainOptions::from_string(*st.options), options_);
  if (!diff.empty()) {
    std::string all;
    for (const std::string& d : diff) all += (all.empty() ? "" : "; ") + d;
    EMBER_FAIL("resume", state_file << ": resume with the run's training options; these differ: " << all);
  }
  EMBER_CHECK(st.step <= options_.steps, "resume",
              dir << ": the checkpoint is at step " << st.step << ", beyond --steps " << options_.steps);
  // One run: the data, the two files, the whole definition (a file of
  // format 1 records none of it, and is taken as it is).
  EMBER_CHECK(!st.data_id || *st.data_id == data_id_, "resume",
              state_file << ": the run trained on other data (tokens fingerprint " << *st.data_id << ", here " << data_id_
                         << "): resume with the run's data, unchanged");
  const auto model_run = model.metadata.find("ember.run");
  EMBER_CHECK(!st.run_id || model_run == model.metadata.end() || model_run->second == *st.run_id, "resume",
              dir << ": model.safetensors is of run " << model_run->second << " but train_state.safetensors of run "
                  << *st.run_id << "; the two files are from different runs");
  LoadPlan weights = plan_load(model_, model, model_file);  // (names the tensor whose shape differs)
  // What the shapes do not show (heads, dropout, positional), from the
  // model's config, but its seed: resume restores every weight and
  // generator, so the seed the model was built with no longer matters.
  if (auto config = model.metadata.find("ember.config"); config != model.metadata.end()) {
    const std::string run_config = config_without_seed(config->second), here = config_without_seed(model_.config().to_string());
    EMBER_CHECK(run_config == here, "resume",
                model_file << ": the model's config differs from the run's (" << run_config << " in the run, " << here
                           << " here)");
  }

  // 3. Apply. The optimizer validates its state before taking it; after
  // that nothing can fail.
  optimizer_->load_state(st.optimizer, st.optimizer_steps, /*require_every_parameter=*/true);
  weights.commit();
  const int64_t* g = st.generators.data_ptr<int64_t>();
  for (size_t i = 0; i < gens.size(); ++i)
    gens[i]->set_state({static_cast<uint64_t>(g[2 * i]), static_cast<uint64_t>(g[2 * i + 1])});
  std::vector<Tensor> state{st.generators};
  for (const auto& [name, t] : st.optimizer) state.push_back(t);
  resumed_state_ = fingerprint_of(state);
  if (st.run_id) run_id_ = *st.run_id;  // the run goes on (a file of format 1 has none: this trainer's, from now on)
  history_ = std::move(st.history);
  steps_done_ = st.step;
  resumed_world_size_ = st.world_size;
  if (replicas_) replicas_->adopt(*optimizer_);
}

}  // namespace ember::train
