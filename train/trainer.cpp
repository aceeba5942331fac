#include "train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <sstream>

#include "autograd/grad_mode.h"
#include "tensor/factory.h"
#include "tensor/io.h"
#include "tensor/machine/faults.h"
#include "tensor/storage.h"
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

Tensor u64_tensor(const std::vector<uint64_t>& v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kInt64);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<int64_t>()[i] = static_cast<int64_t>(v[i]);  // bit pattern kept
  return t;
}

}  // namespace

// ---- options as text ----
namespace {
// One entry per option: its key, how to print it and how to read it back.
struct OptionField {
  const char* key;
  std::function<std::string(const TrainOptions&)> get;
  std::function<void(TrainOptions&, const std::string&)> set;
};
template <typename T>
std::string text_of(T v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}
const std::vector<OptionField>& option_fields() {
  auto i64 = [](int64_t TrainOptions::*m, const char* k) {
    return OptionField{k, [m](const TrainOptions& o) { return text_of(o.*m); },
                       [m, k](TrainOptions& o, const std::string& v) { o.*m = parse_int64(v, "TrainOptions", k); }};
  };
  auto f64 = [](double TrainOptions::*m, const char* k) {
    return OptionField{k, [m](const TrainOptions& o) { return text_of(o.*m); },
                       [m, k](TrainOptions& o, const std::string& v) { o.*m = parse_double(v, "TrainOptions", k); }};
  };
  static const std::vector<OptionField> fields = {
      i64(&TrainOptions::steps, "steps"),
      i64(&TrainOptions::batch, "batch"),
      f64(&TrainOptions::lr, "lr"),
      f64(&TrainOptions::min_lr, "min_lr"),
      i64(&TrainOptions::warmup, "warmup"),
      i64(&TrainOptions::lr_decay_steps, "lr_decay_steps"),
      f64(&TrainOptions::weight_decay, "weight_decay"),
      f64(&TrainOptions::grad_clip, "grad_clip"),
      i64(&TrainOptions::eval_every, "eval_every"),
      i64(&TrainOptions::eval_batches, "eval_batches"),
      f64(&TrainOptions::val_fraction, "val_fraction"),
      {"seed", [](const TrainOptions& o) { return text_of(o.seed); },
       [](TrainOptions& o, const std::string& v) { o.seed = parse_uint64(v, "TrainOptions", "seed"); }},
  };
  return fields;
}
}  // namespace

std::string TrainOptions::to_string() const {
  std::string s;
  for (const OptionField& f : option_fields()) {
    if (!s.empty()) s += ' ';
    s += f.key;
    s += '=';
    s += f.get(*this);
  }
  return s;
}

TrainOptions TrainOptions::from_string(const std::string& s) {
  TrainOptions o;
  std::istringstream is(s);
  std::string kv;
  while (is >> kv) {
    const size_t eq = kv.find('=');
    EMBER_CHECK(eq != std::string::npos, "TrainOptions", "malformed entry \"" << kv << "\" in \"" << s << "\"");
    const std::string key = kv.substr(0, eq);
    auto f = std::find_if(option_fields().begin(), option_fields().end(), [&](const OptionField& x) { return key == x.key; });
    EMBER_CHECK(f != option_fields().end(), "TrainOptions", "unknown key \"" << key << "\"");
    f->set(o, kv.substr(eq + 1));
  }
  return o;
}

std::vector<std::string> differing_options(const TrainOptions& run, const TrainOptions& given) {
  std::vector<std::string> out;
  for (const OptionField& f : option_fields()) {
    if (std::string(f.key) == "steps") continue;
    const std::string a = f.get(run), b = f.get(given);
    if (a != b) out.push_back(std::string(f.key) + ": " + a + " in the run, " + b + " given");
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
  // What one step needs, roughly, before it is tried: parameters, gradients
  // and AdamW's two moments (4 copies), plus the activations saved for
  // backward (the closed form of examples/inside_a_step) and the logits with
  // their gradient. In doubles: the point is a clear error, not an exact sum.
  const nn::GPTConfig& c = model.config();
  const double B = static_cast<double>(o.batch), T = static_cast<double>(c.context_length),
               D = static_cast<double>(c.dim), item = static_cast<double>(dtype_size(c.dtype));
  const double need = item * (4.0 * static_cast<double>(model.num_parameters()) +
                              B * T * (static_cast<double>(c.layers) * (16 * D + 2 + static_cast<double>(c.heads) * T) +
                                       2 * D + 1 + 3 * static_cast<double>(c.vocab_size)));
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

namespace {
namespace fs = std::filesystem;

std::string step_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%08lld", static_cast<long long>(step));
  return buf;
}

// "step-00000200" -> 200; anything else (a staging directory, a stray file) -> -1.
int64_t step_of(const std::string& name) {
  if (name.size() < 6 || name.rfind("step-", 0) != 0 || name.size() > 5 + 18) return -1;
  int64_t v = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}

// Removes a path and everything under it (one file-system step).
void remove_tree(const fs::path& p) {
  testing::fs_step();
  std::error_code ec;
  fs::remove_all(p, ec);  // best effort: a leftover is removed again next time
}

// What killed saves leave: staging directories (".step-*") under
// checkpoints/ and temporary links or files (".<name>.tmp.*") in the run dir.
void remove_leftovers(const fs::path& run, const fs::path& checkpoints) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(checkpoints, ec))
    if (e.path().filename().string().rfind(".step-", 0) == 0) remove_tree(e.path());
  for (const auto& e : fs::directory_iterator(run, ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 1 && n[0] == '.' && n.find(".tmp.") != std::string::npos) remove_tree(e.path());
  }
}
}  // namespace

Checkpoint latest_checkpoint(const std::string& run_dir) {
  const fs::path run(run_dir), checkpoints = run / "checkpoints";
  std::error_code ec;
  Checkpoint best;
  best.step = -1;
  if (fs::is_directory(checkpoints, ec)) {
    for (const auto& e : fs::directory_iterator(checkpoints, ec)) {
      const int64_t step = step_of(e.path().filename().string());
      if (step > best.step && fs::is_regular_file(e.path() / "model.safetensors", ec) &&
          fs::is_regular_file(e.path() / "train_state.safetensors", ec))
        best = {step, e.path().string(), (e.path() / "model.safetensors").string(),
                (e.path() / "train_state.safetensors").string()};
    }
    EMBER_CHECK(best.step >= 0, "resume", run_dir << ": no complete checkpoint in " << checkpoints.string());
    return best;
  }
  // A run saved before step directories: its two files side by side (the
  // step is read from them).
  EMBER_CHECK(fs::is_directory(run, ec), "resume", run_dir << ": not a directory");
  return {0, run_dir, (run / "model.safetensors").string(), (run / "train_state.safetensors").string()};
}

void Trainer::save(const std::string& dir, const Metadata& metadata) const {
  EMBER_CHECK(replicas_ == nullptr || replicas_->rank() == 0, "save",
              "rank " << replicas_->rank() << " of " << replicas_->world_size()
                      << " called save; only rank 0 saves (it alone has the validation losses)");
  const fs::path run(dir), checkpoints = run / "checkpoints";
  std::error_code ec;
  fs::create_directories(checkpoints, ec);
  EMBER_CHECK(!ec, "save", checkpoints.string() << ": cannot create the directory: " << ec.message());
  remove_leftovers(run, checkpoints);
  const std::string name = step_name(steps_done_);
  const fs::path final_dir = checkpoints / name;
  if (!fs::is_directory(final_dir, ec)) write_checkpoint(checkpoints.string(), name, metadata);
  // Point `latest` at it, and keep the stable names pointing through latest.
  replace_symlink_atomically("checkpoints/" + name, (run / "latest").string(), "save");
  for (const char* file : {"model.safetensors", "train_state.safetensors"}) {
    const fs::path link = run / file;
    if (!fs::is_symlink(link, ec) || fs::read_symlink(link, ec) != fs::path("latest") / file)
      replace_symlink_atomically(std::string("latest/") + file, link.string(), "save");
  }
  // The older checkpoints are no longer needed: the new pair is complete and current.
  for (const auto& e : fs::directory_iterator(checkpoints, ec)) {
    const int64_t step = step_of(e.path().filename().string());
    if (step >= 0 && step != steps_done_) remove_tree(e.path());
  }
}

void Trainer::write_checkpoint(const std::string& checkpoints_dir, const std::string& name,
                               const Metadata& metadata) const {
  // Both files into a hidden staging directory; renamed to its step name
  // only once both are on disk.
  const fs::path checkpoints(checkpoints_dir);
  const fs::path staging = checkpoints / ("." + name + "." + std::to_string(::getpid()));
  std::error_code ec;
  testing::fs_step();
  fs::create_directory(staging, ec);
  EMBER_CHECK(!ec, "save", staging.string() << ": cannot create the directory: " << ec.message());
  try {
    write_pair(staging.string(), metadata);
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  fsync_directory(staging.string());
  testing::fs_step();
  fs::rename(staging, checkpoints / name, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove_all(staging, ec);
    EMBER_FAIL("save", (checkpoints / name).string() << ": rename failed: " << why);
  }
  fsync_directory(checkpoints.string());
}

void Trainer::write_pair(const std::string& dir, const Metadata& metadata) const {
  Metadata meta = metadata;
  meta["ember.step"] = std::to_string(steps_done_);
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
  Metadata state_meta = {{"ember.step", std::to_string(steps_done_)},
                         {"ember.optimizer.steps", std::to_string(optimizer_->steps())},
                         {"ember.train", options_.to_string()}};
  // (absent for one process, so that its files stay as they were)
  if (replicas_ && replicas_->world_size() > 1) state_meta["ember.world_size"] = std::to_string(replicas_->world_size());
  write_safetensors(dir + "/train_state.safetensors", state, state_meta);
  train::save(model_, dir + "/model.safetensors", meta);
}

namespace {
// What train_state.safetensors holds, read and checked for form (not yet
// against a trainer).
struct TrainState {
  int64_t step = 0, optimizer_steps = 0, world_size = 1;
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
  if (st.metadata.count("ember.world_size")) out.world_size = metadata_count(st.metadata, "ember.world_size", path);
  for (auto& [name, t] : st.tensors) {
    if (name.rfind("optim.", 0) == 0) out.optimizer.emplace_back(name.substr(6), t);
    else if (name == "generators") out.generators = t;
    else if (name == "history") out.history = t;
    else EMBER_FAIL("resume", path << ": unexpected tensor \"" << name << "\"");
  }
  // One row per step, after the step-0 row of the untrained model.
  EMBER_CHECK(out.history.defined() && out.history.dtype() == kFloat64 && out.history.dim() == 2 &&
                  out.history.size(1) == 5 && out.history.size(0) == out.step + 1,
              "resume", path << ": the history does not match step " << out.step);
  return out;
}
}  // namespace

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
  history_.clear();
  for (int64_t i = 0; i < st.history.size(0); ++i) {
    const double* row = st.history.data_ptr<double>() + i * 5;
    history_.push_back({static_cast<int64_t>(row[0]), row[1], row[2], row[3],
                        std::isnan(row[4]) ? std::nullopt : std::optional<double>(row[4])});
  }
  steps_done_ = st.step;
  resumed_world_size_ = st.world_size;
}

}  // namespace ember::train
