#include "train/checkpoint.h"

#include <map>
#include <set>

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
  ModuleTensors mt = module_tensors(module);
  std::map<std::string, Tensor> in_file(file.tensors.begin(), file.tensors.end());
  LoadPlan plan;
  std::set<std::string> used;
  for (const auto& [name, dst] : mt.unique) {
    auto it = in_file.find(name);
    if (it == in_file.end()) {
      EMBER_CHECK(!strict, "load", path << ": tensor \"" << name << "\" of the model is missing from the file");
      continue;
    }
    const Tensor& src = it->second;
    EMBER_CHECK(src.shape() == dst.shape() && src.dtype() == dst.dtype(), "load",
                path << ": tensor \"" << name << "\" has shape " << shape_str(src.shape()) << " " << dtype_name(src.dtype())
                     << " in the file but " << shape_str(dst.shape()) << " " << dtype_name(dst.dtype()) << " in the model");
    plan.copies.emplace_back(dst, src);
    used.insert(name);
  }
  if (strict) {
    for (const auto& [name, _] : file.tensors)
      EMBER_CHECK(used.count(name), "load", path << ": the file has tensor \"" << name << "\" that the model does not have");
  }
  auto tied = file.metadata.find("ember.tied");
  std::string file_ties = tied == file.metadata.end() ? "" : tied->second;
  EMBER_CHECK(!strict || file_ties == ties_str(mt.ties), "load",
              path << ": the file's tied weights \"" << file_ties << "\" differ from the model's \"" << ties_str(mt.ties)
                   << "\"; build the model with the same tying");
  return plan;
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
