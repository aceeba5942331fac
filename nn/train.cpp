#include "nn/train.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "autograd/grad_mode.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember::nn {

namespace {

// AdamW groups: weight decay on matrices only; embeddings (incl. a tied
// head), LayerNorm weights and biases are not decayed.
std::vector<optim::ParamGroup> param_groups(const GPT& model, const TrainOptions& o) {
  optim::ParamGroup decay{{}, o.lr, o.weight_decay}, no_decay{{}, o.lr, 0.0};
  for (const auto& [name, p] : model.named_parameters()) {
    bool is_matrix = p.dim() >= 2 && name.rfind("embed.", 0) != 0;
    (is_matrix ? decay : no_decay).params.push_back(p);
  }
  return {decay, no_decay};
}

// Every generator whose state a resumed run needs: the sampler's and each
// Dropout module's.
std::vector<Generator*> generators(GPT& model, BatchSampler& sampler) {
  std::vector<Generator*> gens{&sampler.generator()};
  for (auto& [name, m] : model.named_modules())
    if (auto* d = dynamic_cast<Dropout*>(m)) gens.push_back(&d->generator());
  return gens;
}

// A metadata integer; an ember::Error naming the file and the key otherwise
// (std::stoll alone would throw std::invalid_argument past the caller).
int64_t metadata_int(const Metadata& m, const std::string& key, const std::string& file) {
  auto it = m.find(key);
  EMBER_CHECK(it != m.end(), "resume", file << ": no " << key << " in the metadata");
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(it->second, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  EMBER_CHECK(used > 0 && used == it->second.size() && v >= 0, "resume",
              file << ": metadata " << key << " = \"" << it->second << "\" is not a non-negative integer");
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

Trainer::Trainer(GPT& model, std::vector<int64_t> tokens, TrainOptions o)
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
  nn::save(model_, dir + "/model.safetensors", meta);
}

void Trainer::resume(const std::string& dir) {
  SafetensorsContents st = read_safetensors(dir + "/train_state.safetensors");
  // Validate everything before changing anything.
  const std::string state_file = dir + "/train_state.safetensors", model_file = dir + "/model.safetensors";
  int64_t steps = metadata_int(st.metadata, "ember.step", state_file);
  int64_t opt_steps = st.metadata.count("ember.optimizer.steps") ? metadata_int(st.metadata, "ember.optimizer.steps", state_file) : 0;
  NamedTensors optim_state;
  Tensor gens, hist;
  for (auto& [name, t] : st.tensors) {
    if (name.rfind("optim.", 0) == 0) optim_state.emplace_back(name.substr(6), t);
    else if (name == "generators") gens = t;
    else if (name == "history") hist = t;
    else EMBER_FAIL("resume", dir << "/train_state.safetensors: unexpected tensor \"" << name << "\"");
  }
  std::vector<Generator*> gs = generators(model_, sampler_);
  EMBER_CHECK(gens.defined() && gens.dtype() == kInt64 && gens.shape() == Shape{static_cast<int64_t>(2 * gs.size())}, "resume",
              dir << "/train_state.safetensors: generator state does not match this model (" << gs.size() << " generators)");
  EMBER_CHECK(hist.defined() && hist.dtype() == kFloat64 && hist.dim() == 2 && hist.size(1) == 5 && hist.size(0) == steps,
              "resume", dir << "/train_state.safetensors: the history does not match step " << steps);
  // The schedule, batches and evaluation depend on every training option:
  // continuing exactly needs the same ones.
  auto saved_options = st.metadata.find("ember.train");
  EMBER_CHECK(saved_options == st.metadata.end() || saved_options->second == options_string(options_), "resume",
              state_file << ": the run was trained with \"" << saved_options->second << "\" but these options are \""
                         << options_string(options_) << "\"; resume with the same training options");
  EMBER_CHECK(steps <= options_.steps, "resume",
              dir << ": the checkpoint is at step " << steps << ", beyond --steps " << options_.steps);
  // Model (validated, staged and committed by load), then the rest.
  // Snapshot of every tensor load may write (parameters and buffers).
  std::vector<Tensor> live, before;
  for (auto& [name, t] : model_.named_parameters()) live.push_back(t);
  for (auto& [name, t] : model_.named_buffers()) live.push_back(t);
  for (const Tensor& t : live) before.push_back(kernel::to(t, t.dtype()));
  Metadata model_meta = nn::load(model_, model_file);
  try {
    int64_t model_steps = metadata_int(model_meta, "ember.step", model_file);
    EMBER_CHECK(model_steps == steps, "resume",
                dir << ": model.safetensors is at step " << model_steps << " but train_state.safetensors at step " << steps
                    << "; the two files are from different saves");
    try {
      optimizer_->load_state(optim_state, opt_steps);
    } catch (const std::logic_error& e) {  // a malformed state name (std::stoul)
      EMBER_FAIL("resume", state_file << ": malformed optimizer state: " << e.what());
    }
  } catch (...) {
    NoGradGuard no_grad;  // put the model back as it was
    for (size_t i = 0; i < live.size(); ++i) kernel::copy_(live[i], before[i], "resume");
    throw;
  }
  for (size_t i = 0; i < gs.size(); ++i)
    gs[i]->set_state({static_cast<uint64_t>(gens.data_ptr<int64_t>()[2 * i]), static_cast<uint64_t>(gens.data_ptr<int64_t>()[2 * i + 1])});
  history_.clear();
  for (int64_t i = 0; i < hist.size(0); ++i) {
    const double* row = hist.data_ptr<double>() + i * 5;
    history_.push_back({static_cast<int64_t>(row[0]), row[1], row[2], row[3],
                        std::isnan(row[4]) ? std::nullopt : std::optional<double>(row[4])});
  }
  steps_done_ = steps;
}

}  // namespace ember::nn
