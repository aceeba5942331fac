// nn/, train/ and inspect/ from Python: the modules (held by shared_ptr,
// as C++ holds them, so a module stays alive while Python or a parent holds
// it), optimizers, the character data, checkpoints and the instruments.
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bindings.h"

namespace ember::python {
namespace {

py::dict to_dict(const std::vector<std::pair<std::string, Tensor>>& named) {
  py::dict d;
  for (const auto& [k, v] : named) d[py::str(k)] = v;
  return d;
}

std::vector<std::pair<std::string, Tensor>> from_dict(const py::dict& d) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto [k, v] : d) out.emplace_back(k.cast<std::string>(), v.cast<Tensor>());
  return out;
}

/// Param groups from Python: a list of tensors, or a list of dicts
/// {"params": [...], "lr": ..., "weight_decay": ...} (PyTorch's form).
std::vector<optim::ParamGroup> groups_of(py::object params, double lr, double weight_decay) {
  std::vector<optim::ParamGroup> groups;
  py::list items(params);
  const bool dicts = items.size() > 0 && py::isinstance<py::dict>(items[0]);
  if (!dicts) {
    groups.push_back({items.cast<std::vector<Tensor>>(), lr, weight_decay});
    return groups;
  }
  for (py::handle h : items) {
    py::dict g = py::reinterpret_borrow<py::dict>(h);
    EMBER_CHECK(g.contains("params"), "optimizer", "a parameter group needs 'params'");
    groups.push_back({py::list(g["params"]).cast<std::vector<Tensor>>(),
                      g.contains("lr") ? g["lr"].cast<double>() : lr,
                      g.contains("weight_decay") ? g["weight_decay"].cast<double>() : weight_decay});
  }
  return groups;
}

template <typename M, typename... Base> using ModuleClass = py::class_<M, Base..., std::shared_ptr<M>>;

}  // namespace

void bind_nn(py::module_& root) {
  py::module_ m = root.def_submodule("nn", "ember::nn: the modules");
  using namespace nn;

  ModuleClass<Module>(m, "Module")
      .def("parameters", &Module::parameters)
      .def("named_parameters", &Module::named_parameters, py::arg("dedup") = true)
      .def("named_buffers", &Module::named_buffers)
      .def("named_modules", [](const Module& mod) {
        std::vector<std::string> names;
        for (const auto& [n, _] : mod.named_modules()) names.push_back(n);
        return names;
      })
      .def("num_parameters", &Module::num_parameters)
      .def("zero_grad", &Module::zero_grad, py::arg("set_to_none") = true)
      .def("train", [](Module& mod, bool on) -> Module& { mod.train(on); return mod; }, py::arg("mode") = true,
           py::return_value_policy::reference)
      .def("eval", [](Module& mod) -> Module& { mod.eval(); return mod; }, py::return_value_policy::reference)
      .def_property_readonly("training", &Module::is_training)
      .def("to", [](Module& mod, DType dt) -> Module& { return mod.to(dt); }, py::arg("dtype"), py::return_value_policy::reference)
      .def("state_dict", [](const Module& mod) { return to_dict(mod.state_dict()); })
      .def("load_state_dict", [](Module& mod, const py::dict& d, bool strict) { mod.load_state_dict(from_dict(d), strict); },
           py::arg("state_dict"), py::arg("strict") = true)
      .def("type_name", &Module::type_name)
      .def("__repr__", &Module::to_string);

  ModuleClass<UnaryModule, Module>(m, "UnaryModule")
      .def("forward", &UnaryModule::forward, py::arg("input"))
      .def("__call__", [](UnaryModule& mod, const Tensor& x) { LongCall c({&x}, "module"); return mod.forward(x); });

  ModuleClass<Linear, UnaryModule>(m, "Linear")
      .def(py::init([](int64_t in, int64_t out, bool bias, DType dt) {
             return std::make_shared<Linear>(in, out, LinearOptions{bias, dt, nullptr});
           }),
           py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true, py::arg("dtype") = kFloat32)
      .def_readonly("weight", &Linear::weight)
      .def_property_readonly("bias", [](const Linear& l) -> py::object { return l.bias.defined() ? py::cast(l.bias) : py::none(); });
  ModuleClass<LayerNorm, UnaryModule>(m, "LayerNorm")
      .def(py::init([](int64_t dim, double eps, DType dt) { return std::make_shared<LayerNorm>(dim, LayerNormOptions{eps, dt}); }),
           py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::arg("dtype") = kFloat32)
      .def_readonly("weight", &LayerNorm::weight)
      .def_readonly("bias", &LayerNorm::bias)
      .def_readonly("eps", &LayerNorm::eps);
  ModuleClass<Dropout, UnaryModule>(m, "Dropout")
      .def(py::init([](double p, std::optional<uint64_t> seed) { return std::make_shared<Dropout>(p, DropoutOptions{seed}); }),
           py::arg("p") = 0.5, py::arg("seed") = py::none());
  ModuleClass<ReLU, UnaryModule>(m, "ReLU").def(py::init<>());
  ModuleClass<Tanh, UnaryModule>(m, "Tanh").def(py::init<>());
  ModuleClass<Sigmoid, UnaryModule>(m, "Sigmoid").def(py::init<>());
  ModuleClass<GELU, UnaryModule>(m, "GELU").def(py::init([](const std::string& approximate) {
    EMBER_CHECK(approximate == "none" || approximate == "tanh", "GELU", "approximate '" << approximate << "' is not 'none' or 'tanh'");
    return std::make_shared<GELU>(approximate == "tanh" ? GeluApprox::Tanh : GeluApprox::None);
  }), py::arg("approximate") = "none");

  ModuleClass<Embedding, Module>(m, "Embedding")
      .def(py::init([](int64_t n, int64_t dim, std::optional<int64_t> padding_idx, DType dt, bool sparse) {
             return std::make_shared<Embedding>(n, dim, EmbeddingOptions{padding_idx, dt, nullptr, sparse});
           }),
           py::arg("num_embeddings"), py::arg("embedding_dim"), py::arg("padding_idx") = py::none(),
           py::arg("dtype") = kFloat32, py::arg("sparse") = false)
      .def_static("from_pretrained", &Embedding::from_pretrained, py::arg("embeddings"), py::arg("freeze") = true,
                  py::arg("padding_idx") = py::none())
      .def("forward", &Embedding::forward, py::arg("input"))
      .def("__call__", &Embedding::forward, py::arg("input"))
      .def_readonly("weight", &Embedding::weight)
      .def_property_readonly("num_embeddings", &Embedding::num_embeddings)
      .def_property_readonly("embedding_dim", &Embedding::embedding_dim)
      .def_property_readonly("padding_idx", &Embedding::padding_idx);
  ModuleClass<PositionalEmbedding, Module>(m, "PositionalEmbedding")
      .def("positions", &PositionalEmbedding::positions, py::arg("start"), py::arg("length"))
      .def("__call__", py::overload_cast<int64_t>(&PositionalEmbedding::forward, py::const_), py::arg("length"))
      .def("__call__", py::overload_cast<const Tensor&>(&PositionalEmbedding::forward, py::const_), py::arg("ids"));
  ModuleClass<LearnedPositionalEmbedding, PositionalEmbedding>(m, "LearnedPositionalEmbedding")
      .def(py::init([](int64_t L, int64_t D) { return std::make_shared<LearnedPositionalEmbedding>(L, D); }),
           py::arg("max_context_length"), py::arg("embedding_dim"))
      .def_readonly("weight", &LearnedPositionalEmbedding::weight);
  ModuleClass<SinusoidalPositionalEmbedding, PositionalEmbedding>(m, "SinusoidalPositionalEmbedding")
      .def(py::init<int64_t, int64_t, DType>(), py::arg("max_context_length"), py::arg("embedding_dim"),
           py::arg("dtype") = kFloat32)
      .def_readonly("table", &SinusoidalPositionalEmbedding::table);
  ModuleClass<EmbeddingComposer, Module>(m, "EmbeddingComposer")
      .def(py::init<std::shared_ptr<Embedding>, std::shared_ptr<PositionalEmbedding>>(), py::arg("token"), py::arg("positional"))
      .def("__call__", &EmbeddingComposer::forward, py::arg("ids"), py::arg("start") = 0)
      .def_readonly("token", &EmbeddingComposer::token)
      .def_readonly("positional", &EmbeddingComposer::positional);
  ModuleClass<LMHead, Module>(m, "LMHead")
      .def(py::init([](int64_t D, int64_t V) { return std::make_shared<LMHead>(D, V); }), py::arg("embedding_dim"), py::arg("vocab_size"))
      .def("__call__", &LMHead::forward, py::arg("hidden"))
      .def_readonly("weight", &LMHead::weight)
      .def_property_readonly("is_tied", &LMHead::is_tied);
  m.def("tie_weights", &tie_weights, py::arg("head"), py::arg("embedding"));

  ModuleClass<MultiHeadAttention, Module>(m, "MultiHeadAttention")
      .def(py::init([](int64_t dim, int64_t heads, bool causal, bool bias, DType dt) {
             MultiHeadAttentionOptions o;
             o.causal = causal;
             o.bias = bias;
             o.dtype = dt;
             return std::make_shared<MultiHeadAttention>(dim, heads, o);
           }),
           py::arg("embed_dim"), py::arg("num_heads"), py::arg("causal") = false, py::arg("bias") = true,
           py::arg("dtype") = kFloat32)
      .def("__call__", [](MultiHeadAttention& a, const Tensor& x, std::optional<Tensor> mask) {
        return a.forward(x, mask ? *mask : Tensor());
      }, py::arg("x"), py::arg("mask") = py::none())
      .def_readonly("w_q", &MultiHeadAttention::w_q)
      .def_readonly("w_k", &MultiHeadAttention::w_k)
      .def_readonly("w_v", &MultiHeadAttention::w_v)
      .def_readonly("w_o", &MultiHeadAttention::w_o);
  ModuleClass<TransformerBlock, UnaryModule>(m, "TransformerBlock")
      .def(py::init([](int64_t dim, int64_t heads, double dropout, bool causal) {
             TransformerBlockOptions o;
             o.dropout = dropout;
             o.causal = causal;
             return std::make_shared<TransformerBlock>(dim, heads, o);
           }),
           py::arg("dim"), py::arg("heads"), py::arg("dropout") = 0.0, py::arg("causal") = true);
  m.def("scaled_dot_product_attention", [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> mask, bool causal) {
    Attention a = scaled_dot_product_attention(q, k, v, mask ? *mask : Tensor(), causal);
    return py::make_tuple(a.output, a.weights);
  }, py::arg("query"), py::arg("key"), py::arg("value"), py::arg("mask") = py::none(), py::arg("is_causal") = false);

  py::class_<GPTConfig>(m, "GPTConfig")
      .def(py::init([](py::kwargs kw) {
        GPTConfig c;
        for (auto [k, v] : kw) {
          const std::string key = k.cast<std::string>();
          if (key == "vocab_size") c.vocab_size = v.cast<int64_t>();
          else if (key == "context_length") c.context_length = v.cast<int64_t>();
          else if (key == "dim") c.dim = v.cast<int64_t>();
          else if (key == "heads") c.heads = v.cast<int64_t>();
          else if (key == "layers") c.layers = v.cast<int64_t>();
          else if (key == "dropout") c.dropout = v.cast<double>();
          else if (key == "tie_weights") c.tie_weights = v.cast<bool>();
          else if (key == "seed") c.seed = v.cast<uint64_t>();
          else if (key == "positional") {
            const std::string p = v.cast<std::string>();
            EMBER_CHECK(p == "learned" || p == "sinusoidal", "GPTConfig", "positional '" << p << "' is not 'learned' or 'sinusoidal'");
            c.positional = p == "learned" ? Positional::Learned : Positional::Sinusoidal;
          } else EMBER_FAIL("GPTConfig", "no field '" << key << "'");
        }
        c.validate();
        return c;
      }))
      .def_readwrite("vocab_size", &GPTConfig::vocab_size)
      .def_readwrite("context_length", &GPTConfig::context_length)
      .def_readwrite("dim", &GPTConfig::dim)
      .def_readwrite("heads", &GPTConfig::heads)
      .def_readwrite("layers", &GPTConfig::layers)
      .def_readwrite("dropout", &GPTConfig::dropout)
      .def_readwrite("tie_weights", &GPTConfig::tie_weights)
      .def_readwrite("seed", &GPTConfig::seed)
      .def("parameter_count", &GPTConfig::parameter_count)
      .def("__repr__", &GPTConfig::to_string);
  ModuleClass<GPT, Module>(m, "GPT")
      .def(py::init<const GPTConfig&>(), py::arg("config"))
      .def("__call__", [](GPT& g, const Tensor& ids) { py::gil_scoped_release r; return g.forward(ids); }, py::arg("ids"))
      .def("loss", [](GPT& g, const Tensor& ids, const Tensor& targets) {
        py::gil_scoped_release r;
        return g.loss(ids, targets);
      }, py::arg("ids"), py::arg("targets"))
      .def("generate", [](GPT& g, const std::vector<int64_t>& prompt, int64_t n, double temperature, int64_t top_k, uint64_t seed) {
        py::gil_scoped_release release;
        return g.generate(prompt, n, temperature, top_k, seed);
      }, py::arg("prompt"), py::arg("max_new_tokens"), py::arg("temperature") = 1.0, py::arg("top_k") = 0, py::arg("seed") = 0)
      .def_property_readonly("config", &GPT::config)
      .def_readonly("embed", &GPT::embed)
      .def_readonly("ln_f", &GPT::ln_f)
      .def_readonly("head", &GPT::head);

  // Weights in fewer bits (nn/quantize.h): int8 with a scale per group, or bfloat16.
  m.def("quantize", [](GPT& g, const std::string& dtype, int64_t group, const std::string& activations) {
    QuantizeOptions o;
    EMBER_CHECK(dtype == "int8" || dtype == "bfloat16", "quantize", "dtype '" << dtype << "' is not 'int8' or 'bfloat16'");
    EMBER_CHECK(activations == "int8" || activations == "float32", "quantize",
                "activations '" << activations << "' is not 'int8' or 'float32'");
    o.format = dtype == "int8" ? gemm::WeightFormat::Int8 : gemm::WeightFormat::BFloat16;
    o.group = group;
    o.mode = activations == "int8" ? gemm::Int8Mode::Int8Activations : gemm::Int8Mode::FloatActivations;
    quantize(g, o);
  }, py::arg("model"), py::arg("dtype") = "int8", py::arg("group") = 32, py::arg("activations") = "int8");
  m.def("quantization_of", [](const Module& mod) { return quantization_of(mod); }, py::arg("model"));

  m.def("mse_loss", [](const Tensor& a, const Tensor& b, const std::string& reduction) {
    EMBER_CHECK(reduction == "mean" || reduction == "sum" || reduction == "none", "mse_loss", "reduction '" << reduction << "'");
    return mse_loss(a, b, reduction == "mean" ? Reduction::Mean : reduction == "sum" ? Reduction::Sum : Reduction::None);
  }, py::arg("input"), py::arg("target"), py::arg("reduction") = "mean");
  m.def("cross_entropy", [](const Tensor& logits, const Tensor& targets, const std::string& reduction, int64_t ignore_index) {
    EMBER_CHECK(reduction == "mean" || reduction == "sum" || reduction == "none", "cross_entropy", "reduction '" << reduction << "'");
    LongCall c({&logits}, "cross_entropy");
    return cross_entropy(logits, targets, reduction == "mean" ? Reduction::Mean : reduction == "sum" ? Reduction::Sum : Reduction::None,
                         ignore_index);
  }, py::arg("input"), py::arg("target"), py::arg("reduction") = "mean", py::arg("ignore_index") = -100);
  m.def("layer_norm", [](const Tensor& x, const Tensor& w, const Tensor& b, double eps) { return layer_norm(x, w, b, eps); },
        py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("eps") = 1e-5);
  m.def("linear", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b) { return linear(x, w, b ? *b : Tensor()); },
        py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
  m.def("embedding", [](const Tensor& ids, const Tensor& w, std::optional<int64_t> padding_idx) { return embedding(w, ids, padding_idx); },
        py::arg("input"), py::arg("weight"), py::arg("padding_idx") = py::none());
  m.def("gelu", [](const Tensor& x, const std::string& approximate) {
    EMBER_CHECK(approximate == "none" || approximate == "tanh", "gelu", "approximate '" << approximate << "' is not 'none' or 'tanh'");
    return gelu(x, approximate == "tanh" ? GeluApprox::Tanh : GeluApprox::None);
  }, py::arg("input"), py::arg("approximate") = "none");
  m.def("dropout", [](const Tensor& x, double p, Generator* g) { return dropout(x, p, g ? *g : default_generator()); },
        py::arg("input"), py::arg("p") = 0.5, py::arg("generator") = nullptr);

  // ---- train/: optimizers, the character data, checkpoints ----
  py::module_ optim_m = root.def_submodule("optim", "ember::optim: optimizers, gradient clipping, learning-rate schedules");
  using namespace ember::optim;
  py::class_<Optimizer>(optim_m, "Optimizer")
      .def("step", [](Optimizer& o) { py::gil_scoped_release r; o.step(); })
      .def("zero_grad", &Optimizer::zero_grad, py::arg("set_to_none") = true)
      .def("set_lr", &Optimizer::set_lr, py::arg("lr"))
      .def_property_readonly("steps", &Optimizer::steps)
      .def_property_readonly("param_groups", [](Optimizer& o) {
        py::list out;
        for (const ParamGroup& g : o.groups()) {
          py::dict d;
          d["params"] = g.params;
          d["lr"] = g.lr;
          d["weight_decay"] = g.weight_decay;
          out.append(d);
        }
        return out;
      })
      .def("state", [](const Optimizer& o) { return to_dict(o.state()); });
  py::class_<SGD, Optimizer>(optim_m, "SGD")
      .def(py::init([](py::object params, double lr, double momentum, bool nesterov, double wd) {
             return std::make_unique<SGD>(groups_of(params, lr, wd), momentum, nesterov);
           }),
           py::arg("params"), py::arg("lr"), py::arg("momentum") = 0.0, py::arg("nesterov") = false, py::arg("weight_decay") = 0.0);
  py::class_<Adam, Optimizer>(optim_m, "Adam")
      .def(py::init([](py::object params, double lr, std::pair<double, double> betas, double eps, double wd) {
             return std::make_unique<Adam>(groups_of(params, lr, wd), betas.first, betas.second, eps);
           }),
           py::arg("params"), py::arg("lr") = 1e-3, py::arg("betas") = std::pair{0.9, 0.999}, py::arg("eps") = 1e-8,
           py::arg("weight_decay") = 0.0);
  py::class_<AdamW, Adam>(optim_m, "AdamW")
      .def(py::init([](py::object params, double lr, std::pair<double, double> betas, double eps, double wd) {
             return std::make_unique<AdamW>(groups_of(params, lr, wd), betas.first, betas.second, eps);
           }),
           py::arg("params"), py::arg("lr") = 1e-3, py::arg("betas") = std::pair{0.9, 0.999}, py::arg("eps") = 1e-8,
           py::arg("weight_decay") = 1e-2);
  py::class_<WarmupCosineLR>(optim_m, "WarmupCosineLR")
      .def(py::init<double, double, int64_t, int64_t>(), py::arg("max_lr"), py::arg("min_lr"), py::arg("warmup_steps"),
           py::arg("total_steps"))
      .def("lr", &WarmupCosineLR::lr, py::arg("step"));
  optim_m.def("clip_grad_norm_", [](const std::vector<Tensor>& params, double max_norm) {
    py::gil_scoped_release r;
    return clip_grad_norm_(params, max_norm);
  }, py::arg("parameters"), py::arg("max_norm"));

  py::module_ data = root.def_submodule("data", "ember::train: the character data of the lessons");
  py::class_<train::CharTokenizer>(data, "CharTokenizer")
      .def_static("from_text", &train::CharTokenizer::from_text, py::arg("text"))
      .def_static("from_vocab", &train::CharTokenizer::from_vocab, py::arg("vocab"))
      .def("encode", &train::CharTokenizer::encode, py::arg("text"))
      .def("decode", &train::CharTokenizer::decode, py::arg("ids"))
      .def_property_readonly("vocab_size", &train::CharTokenizer::vocab_size)
      .def("vocab", &train::CharTokenizer::vocab);
  py::class_<train::BatchSampler>(data, "BatchSampler")
      .def(py::init<std::vector<int64_t>, int64_t, int64_t, double, uint64_t>(), py::arg("tokens"), py::arg("batch"),
           py::arg("context"), py::arg("val_fraction"), py::arg("seed"))
      .def("sample", [](train::BatchSampler& s, bool validation) { auto [x, y] = s.sample(validation); return py::make_tuple(x, y); },
           py::arg("validation") = false)
      .def("sample_with", [](train::BatchSampler& s, bool validation, Generator& g) {
        auto [x, y] = s.sample(validation, g);
        return py::make_tuple(x, y);
      }, py::arg("validation"), py::arg("generator"))
      .def_property_readonly("train_size", &train::BatchSampler::train_size)
      .def_property_readonly("val_size", &train::BatchSampler::val_size);
  data.def("read_text_file", &train::read_text_file, py::arg("path"));

  root.def("save", [](const Module& mod, const std::string& path, std::map<std::string, std::string> metadata) {
    train::save(mod, path, metadata);
  }, py::arg("module"), py::arg("path"), py::arg("metadata") = std::map<std::string, std::string>{},
     "Writes the module's state to a safetensors file (whole or not at all).");
  root.def("load", [](Module& mod, const std::string& path, bool strict) { return train::load(mod, path, strict); },
           py::arg("module"), py::arg("path"), py::arg("strict") = true,
           "Reads a safetensors file into the module (checked first: an error leaves the module as it was); returns the metadata.");

  // ---- inspect/: the instruments ----
  py::module_ ins = root.def_submodule("inspect", "ember::inspect: the instruments");
  py::class_<inspect::Profiler>(ins, "Profiler")
      .def(py::init<>())
      .def("stop", &inspect::Profiler::stop_watching)
      .def("table", [](const inspect::Profiler& p, const std::string& by, size_t limit) {
        EMBER_CHECK(by == "op" || by == "module", "Profiler.table", "by '" << by << "' is not 'op' or 'module'");
        return p.table(by == "op" ? inspect::Profiler::By::Op : inspect::Profiler::By::Module, limit);
      }, py::arg("by") = "op", py::arg("limit") = 25)
      .def("report", &inspect::Profiler::report, py::arg("op_limit") = 25, py::arg("module_limit") = 25)
      .def("write_chrome_trace", &inspect::Profiler::write_chrome_trace, py::arg("path"))
      .def("__enter__", [](inspect::Profiler& p) -> inspect::Profiler& { return p; }, py::return_value_policy::reference)
      .def("__exit__", [](inspect::Profiler& p, py::args) { p.stop_watching(); });
  py::class_<inspect::BackwardTrace>(ins, "BackwardTrace")
      .def(py::init<>())
      .def("stop", &inspect::BackwardTrace::stop_watching)
      .def("text", [](const inspect::BackwardTrace& t) {
        std::ostringstream os;
        t.print(os);
        return os.str();
      })
      .def("to_html", &inspect::BackwardTrace::to_html, py::arg("path"))
      .def("name_leaves", [](inspect::BackwardTrace& t, const py::dict& d) { t.name_leaves(from_dict(d)); }, py::arg("named"))
      .def_property_readonly("complete", &inspect::BackwardTrace::complete)
      .def("__enter__", [](inspect::BackwardTrace& t) -> inspect::BackwardTrace& { return t; }, py::return_value_policy::reference)
      .def("__exit__", [](inspect::BackwardTrace& t, py::args) { t.stop_watching(); });
}

}  // namespace ember::python
