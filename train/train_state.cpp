#include "train/train_state.h"

#include <cmath>
#include <cstdio>

#include "base/parse.h"
#include "tensor/factory.h"

namespace ember::train {

namespace {
constexpr int64_t kHistoryColumns = 5;  // step, loss, lr, grad_norm, val_loss

Tensor history_tensor(const std::vector<StepLog>& history) {
  Tensor t = empty({static_cast<int64_t>(history.size()), kHistoryColumns}, kFloat64);
  for (size_t i = 0; i < history.size(); ++i) {
    const StepLog& h = history[i];
    double* row = t.data_ptr<double>() + i * kHistoryColumns;
    row[0] = static_cast<double>(h.step);
    row[1] = h.loss;
    row[2] = h.lr;
    row[3] = h.grad_norm;
    row[4] = h.val_loss ? *h.val_loss : NAN;
  }
  return t;
}

// Row i is step i (row 0: the untrained model): a step read from the file is
// checked against that before it becomes an integer.
std::vector<StepLog> history_rows(const Tensor& t, const std::string& path) {
  std::vector<StepLog> out;
  for (int64_t i = 0; i < t.size(0); ++i) {
    const double* row = t.data_ptr<double>() + i * kHistoryColumns;
    EMBER_CHECK(row[0] == static_cast<double>(i), "resume",
                path << ": history row " << i << " is of step " << row[0] << ", not step " << i);
    out.push_back({i, row[1], row[2], row[3],
                   std::isnan(row[4]) ? std::nullopt : std::optional<double>(row[4])});
  }
  return out;
}
}  // namespace

std::string fingerprint(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

int64_t checkpoint_format(const Metadata& m, const std::string& file) {
  if (!m.count(kFormatKey)) return 1;
  const int64_t v = metadata_count(m, kFormatKey, file);
  EMBER_CHECK(v >= 1 && v <= kQuantizedFormat, "load",
              file << " is of checkpoint format " << v << ", which this ember does not read (it reads formats 1 to "
                   << kQuantizedFormat << (v > kQuantizedFormat ? "; the file was written by a newer ember)" : ")"));
  return v;
}

int64_t metadata_count(const Metadata& m, const std::string& key, const std::string& file) {
  auto it = m.find(key);
  EMBER_CHECK(it != m.end(), "resume", file << ": no " << key << " in the metadata");
  int64_t v = parse_int64(it->second, "resume", file + ": metadata " + key);
  EMBER_CHECK(v >= 0, "resume", file << ": metadata " << key << " = " << v << " is negative");
  return v;
}

void write_train_state(const std::string& path, const TrainState& s) {
  NamedTensors tensors;
  for (const auto& [name, t] : s.optimizer) tensors.emplace_back("optim." + name, t);
  tensors.emplace_back("generators", s.generators);
  tensors.emplace_back("history", history_tensor(s.history));
  Metadata meta = {{"ember.step", std::to_string(s.step)}, {"ember.optimizer.steps", std::to_string(s.optimizer_steps)}};
  if (s.options) meta["ember.train"] = *s.options;
  if (s.run_id) meta["ember.run"] = *s.run_id;
  if (s.data_id) meta["ember.data_hash"] = *s.data_id;
  meta[kFormatKey] = std::to_string(kCheckpointFormat);
  // (absent for one process, so that its files stay as they were)
  if (s.world_size > 1) meta["ember.world_size"] = std::to_string(s.world_size);
  write_safetensors(path, tensors, meta);
}

TrainState read_train_state(const std::string& path) {
  SafetensorsContents st = read_safetensors(path);
  TrainState out;
  out.step = metadata_count(st.metadata, "ember.step", path);
  out.optimizer_steps =
      st.metadata.count("ember.optimizer.steps") ? metadata_count(st.metadata, "ember.optimizer.steps", path) : 0;
  if (auto it = st.metadata.find("ember.train"); it != st.metadata.end()) out.options = it->second;
  if (st.metadata.count("ember.world_size")) out.world_size = metadata_count(st.metadata, "ember.world_size", path);
  if (auto it = st.metadata.find("ember.run"); it != st.metadata.end()) out.run_id = it->second;
  if (auto it = st.metadata.find("ember.data_hash"); it != st.metadata.end()) out.data_id = it->second;
  out.format = checkpoint_format(st.metadata, path);
  Tensor history;
  for (auto& [name, t] : st.tensors) {
    if (name.rfind("optim.", 0) == 0) out.optimizer.emplace_back(name.substr(6), t);
    else if (name == "generators") out.generators = t;
    else if (name == "history") history = t;
    else EMBER_FAIL("resume", path << ": unexpected tensor \"" << name << "\"");
  }
  // One row per step, after the step-0 row of the untrained model.
  EMBER_CHECK(history.defined() && history.dtype() == kFloat64 && history.dim() == 2 &&
                  history.size(1) == kHistoryColumns && history.size(0) - 1 == out.step,
              "resume", path << ": the history does not match step " << out.step);
  out.history = history_rows(history, path);
  return out;
}

}  // namespace ember::train
