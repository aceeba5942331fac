#include "nn/gpt.h"

#include <algorithm>
#include <cmath>
#include <optional>

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
       choice_field("dtype", &GPTConfig::dtype, {{"float32", kFloat32}, {"float64", kFloat64}}),
       // written only when not exact, so a config without it reads as it always did
       [] {
         TextField<GPTConfig> f = choice_field("gelu", &GPTConfig::gelu, {{"erf", GeluApprox::None}, {"tanh", GeluApprox::Tanh}});
         f.print = [](const GPTConfig& c) { return c.gelu == GeluApprox::Tanh ? std::string("tanh") : std::string(); };
         return f;
       }()});
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
        c.dim, c.heads,
        TransformerBlockOptions{.dropout = c.dropout, .causal = true, .gelu = c.gelu, .dtype = c.dtype, .generator = &gen}));
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

namespace {

void check_options(const SampleOptions& o, const char* op) {
  EMBER_CHECK(std::isfinite(o.temperature) && o.temperature >= 0, op,
              "temperature must be finite and >= 0 (0: always the most likely token), got " << o.temperature);
  EMBER_CHECK(o.top_k >= 0, op, "top_k must be >= 0 (0: no limit), got " << o.top_k);
  EMBER_CHECK(o.top_p > 0 && o.top_p <= 1, op, "top_p must be in (0, 1] (1: no limit), got " << o.top_p);
}

// The token drawn from logits l (modified in place), options already checked.
int64_t draw(std::vector<double>& l, const SampleOptions& o, Generator& gen, int64_t step, const char* op) {
  for (double v : l)
    EMBER_CHECK(!std::isnan(v) && v != INFINITY, op,
                "the model produced a logit of " << v << " at step " << step << ": its weights are not finite");
  const size_t best = static_cast<size_t>(std::max_element(l.begin(), l.end()) - l.begin());
  if (o.temperature == 0) return static_cast<int64_t>(best);  // greedy: the first most likely
  // Subtract the max before scaling: (v - max) / T <= 0 for any T > 0, so
  // no inf - inf even for a temperature of 1e-320 (which is then greedy).
  const double mx = l[best];
  for (double& v : l) v = (v - mx) / o.temperature;
  if (o.top_k > 0 && o.top_k < static_cast<int64_t>(l.size())) {
    std::vector<double> sorted = l;
    std::nth_element(sorted.begin(), sorted.begin() + (o.top_k - 1), sorted.end(), std::greater<>());
    const double kth = sorted[static_cast<size_t>(o.top_k - 1)];
    for (double& v : l)
      if (v < kth) v = -INFINITY;
  }
  double s = 0;
  for (double& v : l) s += (v = std::exp(v));  // the max contributes exp(0) = 1: s >= 1
  if (o.top_p < 1) {
    // The nucleus: the most likely tokens (the lower id first on ties) until
    // their probability reaches top_p; the token that reaches it is kept.
    std::vector<size_t> order(l.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return l[a] > l[b]; });
    double kept = 0;
    size_t n = 0;
    while (n < order.size() && (n == 0 || kept < o.top_p * s)) kept += l[order[n++]];
    for (size_t i = n; i < order.size(); ++i) l[order[i]] = 0;
    s = kept;
  }
  // inverse-CDF sampling with one uniform draw
  const double u = gen.next_double() * s;
  double acc = 0;
  for (size_t i = 0; i < l.size(); ++i) {
    acc += l[i];
    if (u < acc) return static_cast<int64_t>(i);
  }
  // rounding left u at or past the last sum: the last token with weight
  for (size_t i = l.size(); i-- > 0;)
    if (l[i] > 0) return static_cast<int64_t>(i);
  return static_cast<int64_t>(best);
}

// Eval mode for a scope, the previous mode after (an error included).
class EvalScope {
 public:
  explicit EvalScope(Module& m) : m_(m), was_(m.is_training()) { m.eval(); }
  ~EvalScope() { m_.train(was_); }
  EvalScope(const EvalScope&) = delete;
  EvalScope& operator=(const EvalScope&) = delete;

 private:
  Module& m_;
  bool was_;
};

}  // namespace

int64_t sample_next(const Tensor& logits, const SampleOptions& options, Generator& gen, int64_t step) {
  check_options(options, "sample_next");
  EMBER_CHECK(logits.dim() == 1 && logits.numel() > 0 && is_floating(logits.dtype()), "sample_next",
              "logits must be a non-empty floating (V) vector, got " << dtype_name(logits.dtype()) << " "
                                                                    << shape_str(logits.shape()));
  std::vector<double> l = logits.to_vector<double>();
  return draw(l, options, gen, step, "sample_next");
}

KVCache GPT::make_cache(int64_t batch) const {
  return KVCache(config_.layers, batch, config_.heads, config_.context_length, config_.dim / config_.heads,
                 config_.dtype);
}

Tensor GPT::forward(const Tensor& ids, KVCache& cache) {
  ModuleScope scope(*this);
  EMBER_CHECK(ids.dim() == 2, "GPT", "ids must be (B, T), got shape " << shape_str(ids.shape()));
  EMBER_CHECK(cache.layers() == config_.layers && cache.capacity() == config_.context_length &&
                  cache.dtype() == config_.dtype && cache.batch() == ids.size(0),
              "GPT", "the cache (" << cache.layers() << " layers, capacity " << cache.capacity() << ", "
                                   << dtype_name(cache.dtype()) << ", batch " << cache.batch()
                                   << ") was not made for this model and ids " << shape_str(ids.shape()) << " ("
                                   << config_.layers << " layers, context length " << config_.context_length << ", "
                                   << dtype_name(config_.dtype) << "): use make_cache(" << ids.size(0) << ")");
  const int64_t T = ids.size(1), past = cache.length();
  EMBER_CHECK(T <= config_.context_length - past, "GPT",
              T << (T == 1 ? " new token after the " : " new tokens after the ") << past
                << " in the cache: more than the model's context length "
                << config_.context_length << ": reset the cache, or recompute a window of the last tokens");
  Tensor x = drop->forward(embed->forward(ids, past));  // (B, T, D), positions past..past+T-1
  for (size_t l = 0; l < blocks->size(); ++l) x = (*blocks)[l].forward(x, cache, static_cast<int64_t>(l));
  cache.advance(T);
  return head->forward(ln_f->forward(x));  // (B, T, V)
}

std::vector<int64_t> GPT::generate(const std::vector<int64_t>& prompt, int64_t max_new_tokens, double temperature,
                                   int64_t top_k, uint64_t seed) {
  return generate(prompt, max_new_tokens, SampleOptions{.temperature = temperature, .top_k = top_k, .seed = seed});
}

std::vector<int64_t> GPT::generate(const std::vector<int64_t>& prompt, int64_t max_new_tokens,
                                   const SampleOptions& options) {
  const char* op = "generate";
  EMBER_CHECK(!prompt.empty(), op, "the prompt must contain at least one token");
  check_options(options, op);
  EMBER_CHECK(max_new_tokens >= 0, op, "max_new_tokens must be >= 0, got " << max_new_tokens);
  const int64_t V = config_.vocab_size, L = config_.context_length;
  for (size_t i = 0; i < prompt.size(); ++i)
    EMBER_CHECK(prompt[i] >= 0 && prompt[i] < V, op,
                "prompt token " << prompt[i] << " at [" << i << "] is outside the vocabulary [0, " << V << ")");
  for (size_t i = 0; i < options.stop.size(); ++i)
    EMBER_CHECK(options.stop[i] >= 0 && options.stop[i] < V, op,
                "stop token " << options.stop[i] << " at [" << i << "] is outside the vocabulary [0, " << V << ")");
  NoGradGuard no_grad;
  EvalScope eval_mode(*this);
  Generator gen(options.seed);
  std::vector<int64_t> out = prompt;
  std::optional<KVCache> cache;
  if (options.cache && max_new_tokens > 0) cache.emplace(make_cache(1));
  for (int64_t n = 0; n < max_new_tokens; ++n) {
    const int64_t len = static_cast<int64_t>(out.size());
    Tensor logits;
    if (cache && len <= L) {  // the tokens the cache does not hold yet: the prompt, then the last token
      std::vector<int64_t> fresh(out.begin() + cache->length(), out.end());
      logits = forward(tensor(fresh, {1, static_cast<int64_t>(fresh.size())}), *cache);
    } else {  // the sliding window: the last L tokens, recomputed
      std::vector<int64_t> window(out.begin() + std::max<int64_t>(0, len - L), out.end());
      logits = forward(tensor(window, {1, static_cast<int64_t>(window.size())}));
    }
    std::vector<double> l = logits.select(1, -1).select(0, 0).to_vector<double>();  // (V) of the last position
    const int64_t pick = draw(l, options, gen, n, op);
    out.push_back(pick);
    if (std::find(options.stop.begin(), options.stop.end(), pick) != options.stop.end()) break;
  }
  return out;
}

}  // namespace ember::nn
