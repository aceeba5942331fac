#include "train/gpt2.h"

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "tensor/kernels.h"
#include "train/checkpoint.h"

namespace ember::train {

namespace {

using json = nlohmann::json;
constexpr const char* kOp = "load_gpt2";

int64_t int_key(const json& j, const std::string& key, const std::string& path) {
  EMBER_CHECK(j.contains(key), kOp, path << ": config.json has no \"" << key << "\"");
  EMBER_CHECK(j[key].is_number_integer() && j[key].get<int64_t>() > 0, kOp,
              path << ": \"" << key << "\" must be a positive integer, got " << j[key].dump());
  return j[key].get<int64_t>();
}

}  // namespace

nn::GPTConfig gpt2_config(const std::string& path) {
  std::ifstream in(path);
  EMBER_CHECK(in.good(), kOp, "cannot open " << path);
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  EMBER_CHECK(j.is_object(), kOp, path << ": not a JSON object");
  nn::GPTConfig c;
  c.vocab_size = int_key(j, "vocab_size", path);
  c.context_length = int_key(j, j.contains("n_positions") ? "n_positions" : "n_ctx", path);
  c.dim = int_key(j, "n_embd", path);
  c.heads = int_key(j, "n_head", path);
  c.layers = int_key(j, "n_layer", path);
  EMBER_CHECK(c.dim % c.heads == 0, kOp, path << ": n_head " << c.heads << " does not divide n_embd " << c.dim);
  c.dropout = 0;
  c.positional = nn::Positional::Learned;
  c.tie_weights = !j.contains("tie_word_embeddings") || j["tie_word_embeddings"] == true;
  c.dtype = kFloat32;
  const std::string act = j.value("activation_function", std::string("gelu_new"));
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") c.gelu = GeluApprox::Tanh;
  else if (act == "gelu") c.gelu = GeluApprox::None;
  else EMBER_FAIL(kOp, path << ": activation_function \"" << act << "\" is not a GELU ember's GPT has (gelu_new, gelu)");
  if (j.contains("layer_norm_epsilon")) {
    const double eps = j["layer_norm_epsilon"].is_number() ? j["layer_norm_epsilon"].get<double>() : NAN;
    EMBER_CHECK(std::abs(eps - 1e-5) <= 1e-12, kOp,
                path << ": layer_norm_epsilon " << j["layer_norm_epsilon"].dump() << ": ember's LayerNorm uses 1e-5");
  }
  if (j.contains("n_inner") && !j["n_inner"].is_null()) {
    const int64_t inner = int_key(j, "n_inner", path);
    EMBER_CHECK(inner == 4 * c.dim, kOp,
                path << ": n_inner " << inner << ": ember's GPT has an MLP of 4 * n_embd = " << 4 * c.dim);
  }
  EMBER_CHECK(j.value("scale_attn_weights", true) == true, kOp,
              path << ": scale_attn_weights false: ember's attention always scales by 1/sqrt(head dim)");
  EMBER_CHECK(j.value("scale_attn_by_inverse_layer_idx", false) == false, kOp,
              path << ": scale_attn_by_inverse_layer_idx true: ember's attention does not scale by layer");
  c.validate();
  return c;
}

SafetensorsContents gpt2_to_ember(const SafetensorsContents& file, const nn::GPTConfig& c, const std::string& path) {
  const int64_t D = c.dim;
  std::map<std::string, Tensor> in;
  for (const auto& [name, t] : file.tensors) {
    std::string n = name.rfind("transformer.", 0) == 0 ? name.substr(12) : name;
    EMBER_CHECK(in.emplace(n, t).second, kOp, path << ": tensor \"" << n << "\" appears twice");
  }
  auto take = [&](const std::string& name, const Shape& shape) {
    auto it = in.find(name);
    EMBER_CHECK(it != in.end(), kOp, path << ": no tensor \"" << name << "\" (a GPT-2 of " << c.layers << " layers has one)");
    Tensor t = it->second;
    EMBER_CHECK(t.shape() == shape, kOp,
                path << ": tensor \"" << name << "\" has shape " << shape_str(t.shape()) << ", the config's GPT-2 needs "
                     << shape_str(shape));
    in.erase(it);
    return t;
  };
  // A Conv1D's (in, out) weight as a Linear's (out, in), dense
  auto linear = [](const Tensor& w) { return kernel::contiguous(kernel::transpose(w, 0, 1)); };
  SafetensorsContents out;
  auto put = [&](const std::string& name, const Tensor& t) { out.tensors.emplace_back(name, t); };
  put("embed.token.weight", take("wte.weight", {c.vocab_size, D}));
  put("embed.positional.weight", take("wpe.weight", {c.context_length, D}));
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".", b = "blocks." + std::to_string(l) + ".";
    put(b + "ln1.weight", take(h + "ln_1.weight", {D}));
    put(b + "ln1.bias", take(h + "ln_1.bias", {D}));
    Tensor qkv = take(h + "attn.c_attn.weight", {D, 3 * D}), qkv_b = take(h + "attn.c_attn.bias", {3 * D});
    const char* names[3] = {"w_q", "w_k", "w_v"};
    for (int64_t i = 0; i < 3; ++i) {
      put(b + "attn." + names[i] + ".weight", linear(kernel::slice(qkv, 1, i * D, (i + 1) * D, 1)));
      put(b + "attn." + names[i] + ".bias", kernel::contiguous(kernel::slice(qkv_b, 0, i * D, (i + 1) * D, 1)));
    }
    put(b + "attn.w_o.weight", linear(take(h + "attn.c_proj.weight", {D, D})));
    put(b + "attn.w_o.bias", take(h + "attn.c_proj.bias", {D}));
    put(b + "ln2.weight", take(h + "ln_2.weight", {D}));
    put(b + "ln2.bias", take(h + "ln_2.bias", {D}));
    put(b + "fc1.weight", linear(take(h + "mlp.c_fc.weight", {D, 4 * D})));
    put(b + "fc1.bias", take(h + "mlp.c_fc.bias", {4 * D}));
    put(b + "fc2.weight", linear(take(h + "mlp.c_proj.weight", {4 * D, D})));
    put(b + "fc2.bias", take(h + "mlp.c_proj.bias", {D}));
    in.erase(h + "attn.bias");         // the causal mask, a buffer
    in.erase(h + "attn.masked_bias");  // the value masked scores get
  }
  put("ln_f.weight", take("ln_f.weight", {D}));
  put("ln_f.bias", take("ln_f.bias", {D}));
  if (!c.tie_weights) put("head.weight", take("lm_head.weight", {c.vocab_size, D}));
  else in.erase("lm_head.weight");  // tied: the same values as wte (plan_load does not see it)
  EMBER_CHECK(in.empty(), kOp,
              path << ": tensor \"" << in.begin()->first << "\" is not part of a GPT-2 of " << c.layers << " layers");
  return out;
}

std::unique_ptr<nn::GPT> load_gpt2(const std::string& dir) {
  const nn::GPTConfig config = gpt2_config(dir + "/config.json");
  const std::string path = dir + "/model.safetensors";
  SafetensorsContents file = read_safetensors(path);
  SafetensorsContents named = gpt2_to_ember(file, config, path);
  file.tensors.clear();  // the originals are no longer needed
  auto model = std::make_unique<nn::GPT>(config);
  plan_load(*model, named, path).commit();
  return model;
}

}  // namespace ember::train
