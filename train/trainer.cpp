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

}  // namespace

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
  for (const TextField<TrainOptions>& f : train_option_fields().fields()) out.emplace_back(f.key, f.print(options_));
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
  r.check_agreement("Trainer", all);
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

double Replicas::update(optim::Adam& opt, const std::vector<Tensor>& params, double grad_clip) {
  average_gradients();  // every rank: the mean gradient of the whole batch
  const double norm = grad_clip > 0 ? optim::clip_grad_norm_(params, grad_clip) : 0.0;
  opt.step();
  return norm;
}

}  // namespace ember::train
