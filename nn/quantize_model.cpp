// A whole model's weights in fewer bits (nn/quantize_model.h): the walks
// over a model's layers.
#include "nn/quantize_model.h"

namespace ember::nn {

// Every weight is quantized first and the layers take them only after: a
// weight refused (a NaN in the last block) leaves the whole model as it was.
void quantize(GPT& model, const QuantizeOptions& options) {
  EMBER_CHECK(model.config().dtype == kFloat32, "quantize",
              "the model is " << dtype_name(model.config().dtype) << "; quantize a float32 model");
  const std::string already = quantization_of(model);
  EMBER_CHECK(already.empty(), "quantize", "the model is quantized already (" << already << ")");
  std::vector<std::pair<Linear*, std::shared_ptr<QuantizedWeight>>> layers;
  for (auto& blk : *model.blocks)
    for (Linear* lin : {blk->attn->w_q.get(), blk->attn->w_k.get(), blk->attn->w_v.get(), blk->attn->w_o.get(),
                        blk->fc1.get(), blk->fc2.get()})
      layers.emplace_back(lin, std::make_shared<QuantizedWeight>(lin->weight, options, "Linear"));
  Embedding& token = *model.embed->token;
  auto table = std::make_shared<QuantizedWeight>(token.weight, options, "Embedding");
  std::shared_ptr<QuantizedWeight> head;
  if (!model.head->is_tied()) head = std::make_shared<QuantizedWeight>(model.head->weight, options, "LMHead");
  for (auto& [lin, q] : layers) lin->use_quantized(q);
  token.use_quantized(table);
  if (head) model.head->use_quantized(head);
  else model.head->quantize(options, &token);
}

void quantize_linears(Module& model, const QuantizeOptions& options) {
  const std::string already = quantization_of(model);
  EMBER_CHECK(already.empty(), "quantize", "the model is quantized already (" << already << ")");
  std::vector<std::pair<Linear*, std::shared_ptr<QuantizedWeight>>> layers;
  for (auto& [name, m] : model.named_modules())
    if (auto* lin = dynamic_cast<Linear*>(m)) layers.emplace_back(lin, std::make_shared<QuantizedWeight>(lin->weight, options, "Linear"));
  for (auto& [lin, q] : layers) lin->use_quantized(q);
}

void refresh_quantized(const Module& model) {
  for (auto& [_, q] : quantized_weights(model)) q->dequantized();
}

std::vector<std::pair<std::string, std::shared_ptr<QuantizedWeight>>> quantized_weights(const Module& model) {
  std::vector<std::pair<std::string, std::shared_ptr<QuantizedWeight>>> out;
  for (auto& [name, m] : model.named_modules()) {
    std::shared_ptr<QuantizedWeight> q;
    if (auto* lin = dynamic_cast<Linear*>(m)) q = lin->quantized;
    else if (auto* emb = dynamic_cast<Embedding*>(m)) q = emb->quantized;
    else if (auto* head = dynamic_cast<LMHead*>(m)) q = head->quantized;
    if (q) out.emplace_back(name, q);
  }
  return out;
}

void set_int8_mode(const Module& model, gemm::Int8Mode mode) {
  for (auto& [_, q] : quantized_weights(model)) q->set_mode(mode);
}
void set_reference(const Module& model, bool reference) {
  for (auto& [_, q] : quantized_weights(model)) q->reference = reference;
}

std::string quantization_of(const Module& model) {
  std::string found;
  for (auto& [name, q] : quantized_weights(model)) {
    const std::string s = q->options().to_string();
    EMBER_CHECK(found.empty() || found == s, "quantize",
                "the model mixes quantizations (" << found << ", and " << s << " at " << name << ")");
    found = s;
  }
  return found;
}

}  // namespace ember::nn
