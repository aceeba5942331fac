#include "train/checkpoint.h"

#include <map>
#include <set>
#include <sstream>

#include "autograd/grad_mode.h"
#include "nn/quantize_model.h"
#include "tensor/kernels.h"
#include "train/train_state.h"

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
  const std::string quantization = nn::quantization_of(module);
  meta[kFormatKey] = std::to_string(quantization.empty() ? kCheckpointFormat : kQuantizedFormat);
  if (!quantization.empty()) meta[kQuantizationKey] = quantization;
  else meta.erase(kQuantizationKey);
  write_safetensors(path, mt.unique, meta);
}

void LoadPlan::commit() const {
  NoGradGuard no_grad;
  for (const auto& [dst, src] : copies) kernel::copy_(dst, src, "load");
}

LoadPlan plan_load(const nn::Module& module, const SafetensorsContents& file, const std::string& path, bool strict) {
  // weights in fewer bits (format 3) go only into a model quantized the same way
  const auto q = file.metadata.find(kQuantizationKey);
  std::string in_file;
  if (q != file.metadata.end()) {
    try {
      in_file = nn::QuantizeOptions::from_string(q->second).to_string();
    } catch (const Error& e) {
      EMBER_FAIL("load", path << ": " << e.what());
    }
    // symmetric int8 lies in [-127, 127]: -128 has no opposite (the products refuse it)
    for (const auto& [name, t] : file.tensors) {
      if (t.dtype() != kInt8) continue;
      const Tensor c = t.contiguous();
      const int8_t* v = c.data_ptr<int8_t>();
      for (int64_t i = 0; i < c.numel(); ++i)
        EMBER_CHECK(v[i] != -128, "load", path << ": tensor \"" << name << "\" holds -128 at element " << i
                                               << ": quantized weights lie in [-127, 127]");
    }
  }
  const std::string in_model = nn::quantization_of(module);
  EMBER_CHECK(in_file == in_model, "load",
              path << " holds " << (in_file.empty() ? std::string("float weights") : "weights quantized as " + in_file)
                   << " but the model's are " << (in_model.empty() ? std::string("float") : "quantized as " + in_model)
                   << (in_file.empty() ? "" : ": nn::quantize the model the same way first, or load it with train::load_gpt"));
  // A tied tensor is stored once; the file's "ember.tied" (alias=name;...)
  // says under which other names it is known, so a model that keeps those
  // tensors apart still finds a value for each. A file without the key
  // (e.g. a PyTorch state dict) may hold the tied matrix under one name or
  // under both; match_state_dict accepts both when the values agree.
  (void)checkpoint_format(file.metadata, path);  // refuses a format this ember cannot read
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
  nn::refresh_quantized(module);  // a quantized layer's float32 weight follows its buffers now
  return file.metadata;
}

// ---- GPT checkpoints ----
Metadata gpt_metadata(const nn::GPTConfig& config, const Tokenizer& tokenizer) {
  Metadata m = tokenizer.metadata();
  m[kConfigKey] = config.to_string();
  return m;
}

GPTInfo gpt_info(const Metadata& metadata, const std::string& path) {
  auto config = metadata.find(kConfigKey);
  EMBER_CHECK(config != metadata.end(), "load_gpt",
              path << " has no \"" << kConfigKey << "\" in its metadata: was it written by train_gpt?");
  GPTInfo info{nn::GPTConfig::from_string(config->second), Tokenizer::from_metadata(metadata, path)};
  EMBER_CHECK(info.tokenizer.vocab_size() == info.config.vocab_size, "load_gpt",
              path << ": the tokenizer has " << info.tokenizer.vocab_size() << " " << info.tokenizer.unit()
                   << " but the model " << info.config.vocab_size);
  return info;
}

namespace {
// Format 1 -> 2: "block7.attn.w_q.weight" -> "blocks.7.attn.w_q.weight".
std::string format1_name(const std::string& name) {
  size_t digits = 5;
  while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') ++digits;
  if (name.rfind("block", 0) != 0 || digits == 5 || digits >= name.size() || name[digits] != '.') return name;
  return "blocks." + name.substr(5);
}
}  // namespace

void upgrade_gpt_names(SafetensorsContents& file, const std::string& path) {
  if (checkpoint_format(file.metadata, path) >= 2) return;
  for (auto& [name, t] : file.tensors) name = format1_name(name);
  if (auto tied = file.metadata.find("ember.tied"); tied != file.metadata.end()) {
    std::string out, pair;
    std::stringstream pairs(tied->second);
    while (std::getline(pairs, pair, ';')) {
      const size_t eq = pair.find('=');
      if (eq != std::string::npos) pair = format1_name(pair.substr(0, eq)) + "=" + format1_name(pair.substr(eq + 1));
      out += (out.empty() ? "" : ";") + pair;
    }
    tied->second = out;
  }
  file.metadata[kFormatKey] = std::to_string(kCheckpointFormat);  // what the contents are now
}

LoadedGPT load_gpt(const std::string& path) {
  SafetensorsContents file = read_safetensors(path);  // validated once, CRC included
  upgrade_gpt_names(file, path);
  GPTInfo info = gpt_info(file.metadata, path);
  auto model = std::make_unique<nn::GPT>(info.config);
  const auto q = file.metadata.find(kQuantizationKey);
  if (q != file.metadata.end()) {
    nn::QuantizeOptions options;
    try {
      options = nn::QuantizeOptions::from_string(q->second);
    } catch (const Error& e) {
      EMBER_FAIL("load", path << ": " << e.what());
    }
    nn::quantize(*model, options);  // the layers the file's buffers fill
  }
  plan_load(*model, file, path).commit();
  nn::refresh_quantized(*model);
  return {std::move(model), std::move(info.tokenizer), std::move(file.metadata)};
}

}  // namespace ember::train
