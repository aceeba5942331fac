#include "train/checkpoint.h"

#include <map>
#include <set>
#include <sstream>

#include "autograd/grad_mode.h"
#include "tensor/kernels.h"

namespace ember::train {

namespace {
// Every (name, tensor) of the module, each tensor once, and the
// "alias=name" pairs of the tied repeats.
struct ModuleTensors {
  NamedTensors unique;  // parameters then buffers
  std::vector<std::pair<std::string, std::string>> ties;
};
ModuleTensors module_tensors(const nn::Module& m) {
  ModuleTensors out;
  std::map<const TensorImpl*, std::string> first;
  for (const auto& [name, t] : m.named_parameters(/*dedup=*/false)) {
    auto [it, fresh] = first.emplace(t.impl(), name);
    if (fresh) out.unique.emplace_back(name, t);
    else out.ties.emplace_back(name, it->second);
  }
  for (const auto& [name, t] : m.named_buffers()) out.unique.emplace_back(name, t);
  return out;
}
bool has_name(const nn::Module& m, const std::string& name) {
  for (const auto& [n, _] : m.state_dict())
    if (n == name) return true;
  return false;
}
std::string ties_str(const std::vector<std::pair<std::string, std::string>>& ties) {
  std::string s;
  for (const auto& [alias, name] : ties) s += (s.empty() ? "" : ";") + alias + "=" + name;
  return s;
}
}  // namespace

void save(const nn::Module& module, const std::string& path, const Metadata& metadata) {
  ModuleTensors mt = module_tensors(module);
  Metadata meta = metadata;
  meta["ember.tied"] = ties_str(mt.ties);
  write_safetensors(path, mt.unique, meta);
}

void LoadPlan::commit() const {
  NoGradGuard no_grad;
  for (const auto& [dst, src] : copies) kernel::copy_(dst, src, "load");
}

LoadPlan plan_load(const nn::Module& module, const SafetensorsContents& file, const std::string& path, bool strict) {
  // A tied tensor is stored once; the file's "ember.tied" (alias=name;...)
  // says under which other names it is known, so a model that keeps those
  // tensors apart still finds a value for each. A file without the key
  // (e.g. a PyTorch state dict) may hold the tied matrix under one name or
  // under both; match_state_dict accepts both when the values agree.
  NamedTensors state = file.tensors;
  std::map<std::string, Tensor> by_name(file.tensors.begin(), file.tensors.end());
  auto tied = file.metadata.find("ember.tied");
  if (tied != file.metadata.end() && !tied->second.empty()) {
    std::stringstream pairs(tied->second);
    std::string pair;
    while (std::getline(pairs, pair, ';')) {
      const size_t eq = pair.find('=');
      EMBER_CHECK(eq != std::string::npos, "load", path << ": malformed ember.tied entry \"" << pair << "\"");
      const std::string alias = pair.substr(0, eq), name = pair.substr(eq + 1);
      auto it = by_name.find(name);
      EMBER_CHECK(it != by_name.end(), "load",
                  path << ": ember.tied says \"" << alias << "\" is \"" << name << "\", which the file does not hold");
      // Only where the module knows the alias: otherwise strict would call it unexpected.
      if (!by_name.count(alias) && has_name(module, alias)) state.emplace_back(alias, it->second);
    }
  }
  return {module.match_state_dict(state, strict, path, "load")};
}

Metadata load(nn::Module& module, const std::string& path, bool strict) {
  SafetensorsContents file = read_safetensors(path);  // fully validated
  plan_load(module, file, path, strict).commit();
  return file.metadata;
}

// ---- GPT checkpoints ----
Metadata gpt_metadata(const nn::GPTConfig& config, const CharTokenizer& tokenizer) {
  return {{kConfigKey, config.to_string()}, {kVocabKey, tokenizer.vocab()}};
}

GPTInfo gpt_info(const Metadata& metadata, const std::string& path) {
  auto get = [&](const char* key) {
    auto it = metadata.find(key);
    EMBER_CHECK(it != metadata.end(), "load_gpt",
                path << " has no \"" << key << "\" in its metadata: was it written by train_gpt?");
    return it->second;
  };
  GPTInfo info{nn::GPTConfig::from_string(get(kConfigKey)), CharTokenizer::from_vocab(get(kVocabKey))};
  EMBER_CHECK(info.tokenizer.vocab_size() == info.config.vocab_size, "load_gpt",
              path << ": the vocabulary has " << info.tokenizer.vocab_size() << " characters but the model "
                   << info.config.vocab_size);
  return info;
}

LoadedGPT load_gpt(const std::string& path) {
  SafetensorsContents file = read_safetensors(path);  // validated once, CRC included
  GPTInfo info = gpt_info(file.metadata, path);
  auto model = std::make_unique<nn::GPT>(info.config);
  plan_load(*model, file, path).commit();
  return {std::move(model), std::move(info.tokenizer), std::move(file.metadata)};
}

}  // namespace ember::train
