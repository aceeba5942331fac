#include "train/trainer.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "autograd/grad_mode.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"
#include "tensor/parse.h"

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

// A non-negative integer from a file's metadata; an error naming the file and the key.
int64_t metadata_count(const Metadata& m, const std::string& key, const std::string& file) {
  auto it = m.find(key);
  EMBER_CHECK(it != m.end(), "resume", file << ": no " << key << " in the metadata");
  int64_t v = parse_int64(it->second, "resume", file + ": metadata " + key);
  EMBER_CHECK(v >= 0, "resume", file << ": metadata " << key << " = " << v << " is negative");
  return v;
}

// Every option that shapes the run, as text (saved with the training state).
std::string options_string(const TrainOptions& o) {
  std::ostringstream os;
  os.precision(15);
  os << "steps=" << o.steps << " batch=" << o.batch << " lr=" << o.lr << " min_lr=" << o.min_lr << " warmup=" << o.warmup
     << " weight_decay=" << o.weight_decay << " grad_clip=" << o.grad_clip << " eval_every=" << o.eval_every
     << " eval_batches=" << o.eval_batches << " val_fraction=" << o.val_fraction << " seed=" << o.seed;
  return os.str();
}

Tensor u64_tensor(const std::vector<uint64_t>& v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kInt64);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<int64_t>()[i] = static_cast<int64_t>(v[i]);  // bit pattern kept
  return t;
}

}  // namespace

Trainer::Trainer(nn::GPT& model, std::vector<int64_t> tokens, TrainOptions o)
    : model_(model),
      options_(o),
      sampler_(std::move(tokens), o.batch, model.config().context_length, o.val_fraction, o.seed),
      optimizer_(std::make_unique<optim::AdamW>(param_groups(model, o), 0.9, 0.95, 1e-8)),
      schedule_(o.lr, o.min_lr, std::min(o.warmup, o.steps), o.steps) {
  EMBER_CHECK(o.steps > 0 && o.eval_every > 0 && o.eval_batches > 0, "Trainer",
              "steps " << o.steps << ", eval_every " << o.eval_every << " and eval_batches " << o.eval_batches
                       << " must be positive");
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
  const double lr = schedule_.lr(steps_done_);
  optimizer_->set_lr(lr);
  auto [x, y] = sampler_.sample();
  Tensor loss = model_.loss(x, y);
  optimizer_->zero_grad();
  loss.backward();
  std::vector<Tensor> params = model_.parameters();
  double norm = options_.grad_clip > 0 ? optim::clip_grad_norm_(params, options_.grad_clip) : 0.0;
  optimizer_->step();
  ++steps_done_;
  StepLog log{steps_done_, loss.item<double>(), lr, norm, std::nullopt};
  if (steps_done_ % options_.eval_every == 0 || done()) log.val_loss = evaluate();
  history_.push_back(log);
  return log;
}

void Trainer::save(const std::string& dir, const Metadata& metadata) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  EMBER_CHECK(!ec, "save", dir << ": cannot create the directory: " << ec.message());
  Metadata meta = metadata;
  meta["ember.step"] = std::to_string(steps_done_);
  // The training state first: if the model write then fails, the step
  // numbers differ and resume refuses the pair.
  NamedTensors state;
  for (auto& [name, t] : optimizer_->state()) state.emplace_back("optim." + name, t);
  std::vector<uint64_t> gen_state;
  for (Generator* g : generators(model_, const_cast<BatchSampler&>(sampler_))) {
    gen_state.push_back(g->get_state().state);
    gen_state.push_back(g->get_state().inc);
  }
  state.emplace_back("generators", u64_tensor(gen_state));
  Tensor hist = empty({static_cast<int64_t>(history_.size()), 5}, kFloat64);
  for (size_t i = 0; i < history_.size(); ++i) {
    const StepLog& h = history_[i];
    double* row = hist.data_ptr<double>() + i * 5;
    row[0] = static_cast<double>(h.step);
    row[1] = h.loss;
    row[2] = h.lr;
    row[3] = h.grad_norm;
    row[4] = h.val_loss ? *h.val_loss : NAN;
  }
  state.emplace_back("history", hist);
  write_safetensors(dir + "/train_state.safetensors", state,
                    {{"ember.step", std::to_string(steps_done_)},
                     {"ember.optimizer.steps", std::to_string(optimizer_->steps())},
                     {"ember.train", options_string(options_)}});
  train::save(model_, dir + "/model.safetensors", meta);
}

namespace {
// What train_state.safetensors holds, read and checked for form (not yet
// against a trainer).
struct TrainState {
  int64_t step = 0, optimizer_steps = 0;
  NamedTensors optimizer;  // "<group>.<index>.<slot>"
  Tensor generators;       // (2 * number of generators) int64: state, inc pairs
  Tensor history;          // (steps, 5) float64: step, loss, lr, grad_norm, val_loss (NaN: none)
  std::optional<std::string> options;
};

TrainState read_train_state(const std::string& path) {
  SafetensorsContents st = read_safetensors(path);
  TrainState out;
  out.step = metadata_count(st.metadata, "ember.step", path);
  out.optimizer_steps =
      st.metadata.count("ember.optimizer.steps") ? metadata_count(st.metadata, "ember.optimizer.steps", path) : 0;
  if (auto it = st.metadata.find("ember.train"); it != st.metadata.end()) out.options = it->second;
  for (auto& [name, t] : st.tensors) {
    if (name.rfind("optim.", 0) == 0) out.optimizer.emplace_back(name.substr(6), t);
    else if (name == "generators") out.generators = t;
    else if (name == "history") out.history = t;
    else EMBER_FAIL("resume", path << ": unexpected tensor \"" << name << "\"");
  }
  EMBER_CHECK(out.history.defined() && out.history.dtype() == kFloat64 && out.history.dim() == 2 &&
                  out.history.size(1) == 5 && out.history.size(0) == out.step,
              "resume", path << ": the history does not match step " << out.step);
  return out;
}
}  // namespace

void Trainer::resume(const std::string& dir) {
  // 1. Read both files (each fully validated as a safetensors file).
  const std::string state_file = dir + "/train_state.safetensors", model_file = dir + "/model.safetensors";
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
  // continuing exactly needs the same ones.
  EMBER_CHECK(!st.options || *st.options == options_string(options_), "resume",
              state_file << ": the run was trained with \"" << *st.options << "\" but these options are \""
                         << options_string(options_) << "\"; resume with the same training options");
  EMBER_CHECK(st.step <= options_.steps, "resume",
              dir << ": the checkpoint is at step " << st.step << ", beyond --steps " << options_.steps);
  LoadPlan weights = plan_load(model_, model, model_file);

  // 3. Apply. The optimizer validates its state before taking it; after
  // that nothing can fail.
  optimizer_->load_state(st.optimizer, st.optimizer_steps);
  weights.commit();
  const int64_t* g = st.generators.data_ptr<int64_t>();
  for (size_t i = 0; i < gens.size(); ++i)
    gens[i]->set_state({static_cast<uint64_t>(g[2 * i]), static_cast<uint64_t>(g[2 * i + 1])});
  history_.clear();
  for (int64_t i = 0; i < st.history.size(0); ++i) {
    const double* row = st.history.data_ptr<double>() + i * 5;
    history_.push_back({static_cast<int64_t>(row[0]), row[1], row[2], row[3],
                        std::isnan(row[4]) ? std::nullopt : std::optional<double>(row[4])});
  }
  steps_done_ = st.step;
}

}  // namespace ember::train
