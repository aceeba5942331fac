#include "train/trainer.h"

#include <algorithm>
#include <cmath>

#include "autograd/grad_mode.h"
#include "base/text_fields.h"
#include "tensor/factory.h"
#include "tensor/storage.h"
#include "train/run_dir.h"
#include "train/step_memory.h"

namespace ember::train {

namespace {

// AdamW groups: weight decay on matrices only; embeddings (incl. a tied
// head), LayerNorm weights and biases are not decayed.
std::vector<optim::ParamGroup> param_groups(const nn::GPT& model, const TrainOptions& o) {
  optim::ParamGroup decay{{}, o.lr, o.weight_decay}, no_decay{{}, o.lr, 0.0};
  for (const auto& [name, p] : model.named_parameters()) {
    bool is_matrix = p.dim() >= 2 && name.rfind("embed.", 0) != 0;
    (is_matrix ? decay : no_decay).params.push_back(p);
  }
  return {decay, no_decay};
}

// Every generator whose state a resumed run needs: the sampler's and each
// Dropout module's.
std::vector<Generator*> generators(nn::GPT& model, BatchSampler& sampler) {
  std::vector<Generator*> gens{&sampler.generator()};
  for (auto& [name, m] : model.named_modules())
    if (auto* d = dynamic_cast<nn::Dropout*>(m)) gens.push_back(&d->generator());
  return gens;
}


// Every option, in the order to_string writes them (and every train_state's
// "ember.train" has them).
const TextFields<TrainOptions>& option_fields() {
  using O = TrainOptions;
  static const TextFields<TrainOptions> fields(
      "TrainOptions",
      {int_field("steps", &O::steps), int_field("batch", &O::batch), real_field("lr", &O::lr),
       real_field("min_lr", &O::min_lr), int_field("warmup", &O::warmup),
       int_field("lr_decay_steps", &O::lr_decay_steps), real_field("weight_decay", &O::weight_decay),
       real_field("grad_clip", &O::grad_clip), int_field("eval_every", &O::eval_every),
       int_field("eval_batches", &O::eval_batches), real_field("val_fraction", &O::val_fraction),
       uint_field("seed", &O::seed)});
  return fields;
}

// "key=value ..." of every option but steps: what defines a run's numbers,
// however far it is trained.
std::string options_without_steps(const TrainOptions& o) {
  std::string out;
  for (const TextField<TrainOptions>& f : option_fields().fields())
    if (f.key != "steps") out += (out.empty() ? "" : " ") + f.key + "=" + f.print(o);
  return out;
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

std::string TrainOptions::to_string() const { return option_fields().to_string(*this); }

TrainOptions TrainOptions::from_string(const std::string& s) { return option_fields().from_string(s); }

std::vector<std::string> differing_options(const TrainOptions& run, const TrainOptions& given) {
  std::vector<std::string> out;
  for (const TextField<TrainOptions>& f : option_fields().fields()) {
    if (f.key == "steps") continue;
    const std::string a = f.print(run), b = f.print(given);
    if (a != b) out.push_back(f.key + ": " + a + " in the run, " + b + " given");
  }
  return out;
}

Trainer::Trainer(nn::GPT& model, std::vector<int64_t> tokens, TrainOptions o)
    : model_(model),
      options_(o),
      data_id_(fingerprint(tokens.data(), tokens.size() * sizeof(int64_t))),
      sampler_(std::move(tokens), o.batch, model.config().context_length, o.val_fraction, o.seed),
      optimizer_(std::make_unique<optim::AdamW>(param_groups(model, o), 0.9, 0.95, 1e-8)),
      schedule_(o.lr, o.min_lr, std::min(o.warmup, o.lr_decay_steps > 0 ? o.lr_decay_steps : o.steps),
                o.lr_decay_steps > 0 ? o.lr_decay_steps : o.steps) {
  EMBER_CHECK(o.steps > 0 && o.eval_every > 0 && o.eval_batches > 0, "Trainer",
              "steps " << o.steps << ", eval_every " << o.eval_every << " and eval_batches " << o.eval_batches
                       << " must be positive");
  EMBER_CHECK(std::isfinite(o.lr) && o.lr > 0 && std::isfinite(o.min_lr) && o.min_lr >= 0 && std::isfinite(o.weight_decay) &&
                  o.weight_decay >= 0 && std::isfinite(o.grad_clip) && o.grad_clip >= 0 && o.warmup >= 0 &&
                  o.lr_decay_steps >= 0,
              "Trainer",
              "lr " << o.lr << " must be positive; min_lr " << o.min_lr << ", weight_decay " << o.weight_decay
                    << ", grad_clip " << o.grad_clip << ", warmup " << o.warmup << " and lr_decay_steps "
                    << o.lr_decay_steps << " finite and >= 0");
  run_id_ = fingerprint("ember run\nconfig " + model.config().to_string() + "\noptions " + options_without_steps(o) +
                        "\ndata " + data_id_);
  // What one step needs before it is tried (train/step_memory.h), plus the
  // gradient of the logits, which backward makes first while all of that is
  // alive. The point is a clear error, not an exact sum.
  const nn::GPTConfig& c = model.config();
  const double logits_grad = static_cast<double>(dtype_size(c.dtype)) * static_cast<double>(o.batch) *
                             static_cast<double>(c.context_length) * static_cast<double>(c.vocab_size);
  const double need = static_cast<double>(step_memory(model, o.batch).total()) + logits_grad;
  const double have = static_cast<double>(allocator::physical_memory_bytes());
  EMBER_CHECK(need <= have, "Trainer",
              "batch " << o.batch << " x context " << c.context_length << " (dim " << c.dim << ", " << c.layers
                       << " layers) needs about " << need / 1e9 << " GB for one training step; this machine has "
                       << have / 1e9 << " GB");
}

Settings Trainer::agreement() const {
  Settings out;
  for (const TextField<TrainOptions>& f : option_fields().fields()) out.emplace_back(f.key, f.print(options_));
  // The model's config but its seed: DataParallel gives every rank rank 0's
  // weights (and dropout, the other use of the seed, is refused with several
  // ranks); the batches' seed is an option, compared above.
  for (const auto& [key, value] : key_values(model_.config().to_string(), "Trainer"))
    if (key != "seed") out.emplace_back("model " + key, value);
  out.emplace_back("data (fingerprint of the tokens)", data_id_);
  out.emplace_back("steps done", std::to_string(steps_done_));
  out.emplace_back("resumed state (fingerprint)", resumed_state_);
  return out;
}

void Trainer::set_replicas(Replicas& r, const Settings& also) {
  Settings all = agreement();
  all.insert(all.end(), also.begin(), also.end());
  r.check_agreement(all);
  const int n = r.world_size();
  EMBER_CHECK(options_.batch % n == 0, "Trainer",
              "batch " << options_.batch << " does not split into " << n << " equal shards, one per rank; give a multiple of "
                       << n);
  EMBER_CHECK(n == 1 || model_.config().dropout == 0, "Trainer",
              "dropout " << model_.config().dropout << " with " << n
                         << " ranks: every rank would draw the same dropout masks for different rows; train on one "
                            "process or without dropout");
  replicas_ = &r;
  shard_ = {r.rank(), n};
  r.adopt(*optimizer_);  // (sharded replicas take their part of a resumed state)
}

double Trainer::evaluate() {
  NoGradGuard no_grad;
  const bool was_training = model_.is_training();
  model_.eval();
  Generator val_gen(options_.seed + 0x5eed);
  double total = 0;
  for (int64_t b = 0; b < options_.eval_batches; ++b) {
    auto [x, y] = sampler_.sample(/*validation=*/options_.val_fraction > 0, val_gen);
    total += model_.loss(x, y).item<double>();
  }
  model_.train(was_training);
  return total / static_cast<double>(options_.eval_batches);
}

StepLog Trainer::step() {
  EMBER_CHECK(!done(), "Trainer", "all " << options_.steps << " steps are done");
  const bool evaluates = replicas_ == nullptr || replicas_->rank() == 0;
  if (history_.empty())  // the untrained model
    history_.push_back({0, NAN, NAN, NAN, evaluates ? std::optional<double>(evaluate()) : std::nullopt});
  const double lr = schedule_.lr(steps_done_);
  optimizer_->set_lr(lr);
  auto [x, y] = replicas_ ? sampler_.sample(false, sampler_.generator(), shard_) : sampler_.sample();
  Tensor loss = model_.loss(x, y);
  optimizer_->zero_grad();
  if (replicas_) replicas_->zero_grad();
  loss.backward();
  std::vector<Tensor> params = model_.parameters();
  double norm = 0;
  if (replicas_) {
    norm = replicas_->update(*optimizer_, params, options_.grad_clip);  // from the mean gradient of the whole batch
  } else {
    norm = options_.grad_clip > 0 ? optim::clip_grad_norm_(params, options_.grad_clip) : 0.0;
    optimizer_->step();
  }
  ++steps_done_;
  const double loss_value = replicas_ ? replicas_->average(loss.item<double>()) : loss.item<double>();
  StepLog log{steps_done_, loss_value, lr, norm, std::nullopt};
  if (evaluates && (steps_done_ % options_.eval_every == 0 || done())) log.val_loss = evaluate();
  history_.push_back(log);
  return log;
}

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

double Replicas::update(optim::Adam& opt, const std::vector<Tensor>& params, double grad_clip) {
  average_gradients();  // every rank: the mean gradient of the whole batch
  const double norm = grad_clip > 0 ? optim::clip_grad_norm_(params, grad_clip) : 0.0;
  opt.step();
  return norm;
}

}  // namespace ember::train
