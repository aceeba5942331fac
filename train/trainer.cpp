#include "train/trainer.h"

#include <algorithm>
#include <cmath>

#include "autograd/grad_mode.h"
#include "nn/text_fields.h"
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

// The run directory of a GPT run: each checkpoint is its model and its training state.
RunDir run_dir(const std::string& dir) { return RunDir(dir, {"model.safetensors", "train_state.safetensors"}); }

// Every option, in the order to_string writes them (and every train_state's
// "ember.train" has them).
const nn::TextFields<TrainOptions>& option_fields() {
  using O = TrainOptions;
  static const nn::TextFields<TrainOptions> fields(
      "TrainOptions",
      {nn::int_field("steps", &O::steps), nn::int_field("batch", &O::batch), nn::real_field("lr", &O::lr, 15),
       nn::real_field("min_lr", &O::min_lr, 15), nn::int_field("warmup", &O::warmup),
       nn::int_field("lr_decay_steps", &O::lr_decay_steps), nn::real_field("weight_decay", &O::weight_decay, 15),
       nn::real_field("grad_clip", &O::grad_clip, 15), nn::int_field("eval_every", &O::eval_every),
       nn::int_field("eval_batches", &O::eval_batches), nn::real_field("val_fraction", &O::val_fraction, 15),
       nn::uint_field("seed", &O::seed)});
  return fields;
}

}  // namespace

std::string TrainOptions::to_string() const { return option_fields().to_string(*this); }

TrainOptions TrainOptions::from_string(const std::string& s) { return option_fields().from_string(s); }

std::vector<std::string> differing_options(const TrainOptions& run, const TrainOptions& given) {
  std::vector<std::string> out;
  for (const nn::TextField<TrainOptions>& f : option_fields().fields()) {
    if (f.key == "steps") continue;
    const std::string a = f.print(run), b = f.print(given);
    if (a != b) out.push_back(f.key + ": " + a + " in the run, " + b + " given");
  }
  return out;
}

Trainer::Trainer(nn::GPT& model, std::vector<int64_t> tokens, TrainOptions o)
    : model_(model),
      options_(o),
      sampler_(std::move(tokens), o.batch, model.config().context_length, o.val_fraction, o.seed),
      optimizer_(std::make_unique<optim::AdamW>(param_groups(model, o), 0.9, 0.95, 1e-8)),
      schedule_(o.lr, o.min_lr, std::min(o.warmup, o.lr_decay_steps > 0 ? o.lr_decay_steps : o.steps),
                o.lr_decay_steps > 0 ? o.lr_decay_steps : o.steps) {
  EMBER_CHECK(o.steps > 0 && o.eval_every > 0 && o.eval_batches > 0, "Trainer",
              "steps " << o.steps << ", eval_every " << o.eval_every << " and eval_batches " << o.eval_batches
                       << " must be positive");
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

void Trainer::set_replicas(Replicas& r) {
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
  loss.backward();
  if (replicas_) replicas_->average_gradients();  // every rank: the mean gradient of the whole batch
  std::vector<Tensor> params = model_.parameters();
  double norm = options_.grad_clip > 0 ? optim::clip_grad_norm_(params, options_.grad_clip) : 0.0;
  optimizer_->step();
  ++steps_done_;
  const double loss_value = replicas_ ? replicas_->average(loss.item<double>()) : loss.item<double>();
  StepLog log{steps_done_, loss_value, lr, norm, std::nullopt};
  if (evaluates && (steps_done_ % options_.eval_every == 0 || done())) log.val_loss = evaluate();
  history_.push_back(log);
  return log;
}

void Trainer::save(const std::string& dir, const Metadata& metadata) const {
  EMBER_CHECK(replicas_ == nullptr || replicas_->rank() == 0, "save",
              "rank " << replicas_->rank() << " of " << replicas_->world_size()
                      << " called save; only rank 0 saves (it alone has the validation losses)");
  run_dir(dir).save(steps_done_, [&](const std::string& staging) { write_files(staging, metadata); });
}

void Trainer::write_files(const std::string& dir, const Metadata& metadata) const {
  TrainState st;
  st.step = steps_done_;
  st.optimizer_steps = optimizer_->steps();
  st.world_size = replicas_ ? replicas_->world_size() : 1;
  st.optimizer = optimizer_->state();
  std::vector<Generator*> gens = generators(model_, const_cast<BatchSampler&>(sampler_));
  st.generators = empty({static_cast<int64_t>(2 * gens.size())}, kInt64);
  for (size_t i = 0; i < gens.size(); ++i) {  // the uint64 bit patterns, kept as int64
    st.generators.data_ptr<int64_t>()[2 * i] = static_cast<int64_t>(gens[i]->get_state().state);
    st.generators.data_ptr<int64_t>()[2 * i + 1] = static_cast<int64_t>(gens[i]->get_state().inc);
  }
  st.history = history_;
  st.options = options_.to_string();
  write_train_state(dir + "/train_state.safetensors", st);
  Metadata meta = metadata;
  meta["ember.step"] = std::to_string(steps_done_);
  train::save(model_, dir + "/model.safetensors", meta);
}

Checkpoint latest_checkpoint(const std::string& dir) {
  const RunDir::Found found = run_dir(dir).latest();
  return {found.step, found.dir, found.file("model.safetensors"), found.file("train_state.safetensors")};
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
  LoadPlan weights = plan_load(model_, model, model_file);

  // 3. Apply. The optimizer validates its state before taking it; after
  // that nothing can fail.
  optimizer_->load_state(st.optimizer, st.optimizer_steps, /*require_every_parameter=*/true);
  weights.commit();
  const int64_t* g = st.generators.data_ptr<int64_t>();
  for (size_t i = 0; i < gens.size(); ++i)
    gens[i]->set_state({static_cast<uint64_t>(g[2 * i]), static_cast<uint64_t>(g[2 * i + 1])});
  history_ = std::move(st.history);
  steps_done_ = st.step;
  resumed_world_size_ = st.world_size;
}

}  // namespace ember::train
