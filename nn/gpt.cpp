#include "nn/gpt.h"

#include <algorithm>
#include <cmath>

#include "autograd/grad_mode.h"
#include "base/text_fields.h"
#include "nn/checkpoint.h"
#include "nn/init.h"
#include "nn/loss.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"
#include "tensor/storage.h"

namespace ember::nn {

namespace {
// Every field of a config, in the order to_string writes them (and so in
// the order every checkpoint's "ember.config" has them).
const TextFields<GPTConfig>& config_fields() {
  static const TextFields<GPTConfig> fields(
      "GPTConfig",
      {int_field("vocab_size", &GPTConfig::vocab_size), int_field("context_length", &GPTConfig::context_length),
       int_field("dim", &GPTConfig::dim), int_field("heads", &GPTConfig::heads), int_field("layers", &GPTConfig::layers),
       real_field("dropout", &GPTConfig::dropout),
       choice_field("positional", &GPTConfig::positional,
                    {{"learned", Positional::Learned}, {"sinusoidal", Positional::Sinusoidal}}),
       choice_field("tie_weights", &GPTConfig::tie_weights, {{"0", false}, {"1", true}}),
       uint_field("seed", &GPTConfig::seed),
       choice_field("dtype", &GPTConfig::dtype, {{"float32", kFloat32}, {"float64", kFloat64}})});
  return fields;
}
}  // namespace

std::string GPTConfig::to_string() const { return config_fields().to_string(*this); }

GPTConfig GPTConfig::from_string(const std::string& s) {
  GPTConfig c = config_fields().from_string(s);
  c.validate();
  return c;
}

int64_t GPTConfig::parameter_count() const {
  auto fail = [&] {
    EMBER_FAIL("GPTConfig", "vocab_size " << vocab_size << ", context_length " << context_length << ", dim " << dim
                                          << ", layers " << layers << " make more parameters than int64 can count");
  };
  auto add = [&](int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) fail();
    return r;
  };
  auto mul = [&](int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) fail();
    return r;
  };
  const int64_t D = dim;
  // per block: 2 LayerNorms (2D each), 4 attention Linears (D^2 + D), fc1 (4D^2 + 4D), fc2 (4D^2 + D)
  const int64_t block = add(mul(12, mul(D, D)), mul(13, D));
  int64_t p = mul(vocab_size, D);                                  // token table
  if (positional == Positional::Learned) p = add(p, mul(context_length, D));
  p = add(p, mul(layers, block));
  p = add(p, mul(2, D));                                           // ln_f
  if (!tie_weights) p = add(p, mul(vocab_size, D));                // the head's own (V, D)
  return p;
}

void GPTConfig::validate() const {
  EMBER_CHECK(vocab_size > 0, "GPTConfig", "vocab_size must be positive, got " << vocab_size);
  EMBER_CHECK(context_length > 0, "GPTConfig", "context_length must be positive, got " << context_length);
  EMBER_CHECK(dim > 0, "GPTConfig", "dim must be positive, got " << dim);
  EMBER_CHECK(heads > 0 && dim % heads == 0, "GPTConfig", "heads " << heads << " must be positive and divide dim " << dim);
  EMBER_CHECK(layers >= 0, "GPTConfig", "layers must be >= 0, got " << layers);
  EMBER_CHECK(dropout >= 0 && dropout < 1, "GPTConfig", "dropout must be in [0, 1), got " << dropout);
  EMBER_CHECK(dtype == kFloat32 || dtype == kFloat64, "GPTConfig",
              "dtype must be float32 or float64, got " << dtype_name(dtype));
  const int64_t p = parameter_count();
  const int64_t bytes = checked_mul(p, static_cast<int64_t>(dtype_size(dtype)), "GPTConfig", "the parameters' bytes");
  const int64_t have = allocator::physical_memory_bytes();
  EMBER_CHECK(bytes <= have, "GPTConfig",
              "vocab_size " << vocab_size << ", context_length " << context_length << ", dim " << dim << ", layers "
                            << layers << " make " << p << " parameters (" << static_cast<double>(bytes) / 1e9
                            << " GB), more than this machine's " << static_cast<double>(have) / 1e9 << " GB of memory");
}

GPT::GPT(const GPTConfig& c) : config_(c) {
  c.validate();
  Generator gen(c.seed);  // every weight of the model comes from this one stream, in this order
  const InitOptions init{.dtype = c.dtype, .generator = &gen};
  auto token = std::make_shared<Embedding>(c.vocab_size, c.dim, EmbeddingOptions{.dtype = c.dtype, .generator = &gen});
  std::shared_ptr<PositionalEmbedding> pos;
  if (c.positional == Positional::Learned)
    pos = std::make_shared<LearnedPositionalEmbedding>(c.context_length, c.dim, init);
  else
    pos = std::make_shared<SinusoidalPositionalEmbedding>(c.context_length, c.dim, c.dtype);
  embed = register_module("embed", std::make_shared<EmbeddingComposer>(token, pos));
  drop = register_module("drop", std::make_shared<Dropout>(c.dropout, DropoutOptions{.seed = gen.next_u64()}));
  blocks = register_module("blocks", std::make_shared<ModuleList<TransformerBlock>>());
  for (int64_t l = 0; l < c.layers; ++l) {
    blocks->push_back(std::make_shared<TransformerBlock>(
        c.dim, c.heads, TransformerBlockOptions{.dropout = c.dropout, .causal = true, .dtype = c.dtype, .generator = &gen}));
  }
  ln_f = register_module("ln_f", std::make_shared<LayerNorm>(c.dim, LayerNormOptions{.dtype = c.dtype}));
  head = register_module("head", std::make_shared<LMHead>(c.dim, c.vocab_size, init));
  if (c.tie_weights) tie_weights(*head, *token);

  // GPT-2 initialization: every Linear weight ~ N(0, 0.02), biases 0; the two
  // projections that write into the residual stream (attention output, MLP
  // output) get std 0.02 / sqrt(2 * layers), so the residual's variance does
  // not grow with depth.
  const double resid_std = 0.02 / std::sqrt(2.0 * static_cast<double>(std::max<int64_t>(c.layers, 1)));
  for (auto& blk : *blocks) {
    for (Linear* lin : {blk->attn->w_q.get(), blk->attn->w_k.get(), blk->attn->w_v.get(), blk->attn->w_o.get(),
                        blk->fc1.get(), blk->fc2.get()}) {
      bool residual = lin == blk->attn->w_o.get() || lin == blk->fc2.get();
      init::normal_(lin->weight, 0.0, residual ? resid_std : 0.02, gen);
      if (lin->bias.defined()) init::zeros_(lin->bias);
    }
  }
}

Tensor GPT::forward(const Tensor& ids) {
  ModuleScope scope(*this);
  EMBER_CHECK(ids.dim() == 2, "GPT", "ids must be (B, T), got shape " << shape_str(ids.shape()));
  EMBER_CHECK(ids.size(1) <= config_.context_length, "GPT",
              "sequence length T = " << ids.size(1) << " exceeds the model's context length " << config_.context_length);
  Tensor x = drop->forward(embed->forward(ids));  // (B, T, D)
  for (auto& blk : *blocks) x = checkpoint_activations ? checkpoint(*blk, x) : blk->forward(x);
  return head->forward(ln_f->forward(x));         // (B, T, V)
}

void GPT::set_attention(AttentionKernel kernel) {
  for (auto& blk : *blocks) blk->attn->kernel = kernel;
}
AttentionKernel GPT::attention() const {
  return blocks->size() > 0 ? (*blocks)[0].attn->kernel : AttentionKernel::Tiled;
}

Tensor GPT::loss(const Tensor& ids, const Tensor& targets) { return cross_entropy(forward(ids), targets); }

std::vector<int64_t> GPT::generate(const std::vector<int64_t>& prompt, int64_t max_new_tokens, double temperature,
                                   int64_t top_k, uint64_t seed) {
  EMBER_CHECK(!prompt.empty(), "generate", "the prompt must contain at least one token");
  EMBER_CHECK(std::isfinite(temperature) && temperature >= 0, "generate",
              "temperature must be finite and >= 0 (0: always the most likely token), got " << temperature);
  EMBER_CHECK(top_k >= 0, "generate", "top_k must be >= 0 (0: no limit), got " << top_k);
  EMBER_CHECK(max_new_tokens >= 0, "generate", "max_new_tokens must be >= 0, got " << max_new_tokens);
  for (size_t i = 0; i < prompt.size(); ++i)
    EMBER_CHECK(prompt[i] >= 0 && prompt[i] < config_.vocab_size, "generate",
                "prompt token " << prompt[i] << " at [" << i << "] is outside the vocabulary [0, " << config_.vocab_size << ")");
  NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  Generator gen(seed);
  std::vector<int64_t> out = prompt;
  for (int64_t n = 0; n < max_new_tokens; ++n) {
    // the causal context window: at most the last context_length tokens
    int64_t start = std::max<int64_t>(0, static_cast<int64_t>(out.size()) - config_.context_length);
    std::vector<int64_t> window(out.begin() + start, out.end());
    Tensor ids = tensor(window, {1, static_cast<int64_t>(window.size())});
    Tensor logits = forward(ids).select(1, -1).select(0, 0);  // (V) for the last position
    std::vector<double> l = logits.to_vector<double>();
    for (double v : l)
      EMBER_CHECK(!std::isnan(v) && v != INFINITY, "generate",
                  "the model produced a logit of " << v << " at step " << n << ": its weights are not finite");
    const size_t best = static_cast<size_t>(std::max_element(l.begin(), l.end()) - l.begin());
    if (temperature == 0) {  // greedy: the most likely token (the first on ties)
      out.push_back(static_cast<int64_t>(best));
      continue;
    }
    // Subtract the max before scaling: (v - max) / T <= 0 for any T > 0, so
    // no inf - inf even for a temperature of 1e-320 (which is then greedy).
    const double mx = l[best];
    for (double& v : l) v = (v - mx) / temperature;
    if (top_k > 0 && top_k < static_cast<int64_t>(l.size())) {
      std::vector<double> sorted = l;
      std::nth_element(sorted.begin(), sorted.begin() + (top_k - 1), sorted.end(), std::greater<>());
      double kth = sorted[top_k - 1];
      for (double& v : l)
        if (v < kth) v = -INFINITY;
    }
    double s = 0;
    for (double& v : l) s += (v = std::exp(v));  // the max contributes exp(0) = 1: s >= 1
    // inverse-CDF sampling with one uniform draw
    double u = gen.next_double() * s, acc = 0;
    int64_t pick = static_cast<int64_t>(l.size()) - 1;
    for (size_t i = 0; i < l.size(); ++i) {
      acc += l[i];
      if (u < acc) {
        pick = static_cast<int64_t>(i);
        break;
      }
    }
    out.push_back(pick);
  }
  train(was_training);
  return out;
}

}  // namespace ember::nn
