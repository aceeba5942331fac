#include "compile/op_table.h"

#include <cctype>
#include <map>
#include <utility>

#include "autograd/autocast.h"
#include "autograd/composed_rule.h"
#include "autograd/ops.h"
#include "base/error.h"

namespace ember::compiler {

namespace {

// The alternative of OpArg that holds a T (a build error if none does).
template <typename T, size_t I = 0>
constexpr size_t alternative() {
  static_assert(I < std::variant_size_v<OpArg>, "an op parameter type that OpArg does not hold");
  if constexpr (std::is_same_v<T, std::variant_alternative_t<I, OpArg>>)
    return I;
  else
    return alternative<T, I + 1>();
}

std::vector<Tensor> as_results(Tensor t) { return {std::move(t)}; }
std::vector<Tensor> as_results(TensorPair p) { return {std::move(p.first), std::move(p.second)}; }
std::vector<Tensor> as_results(std::vector<Tensor> ts) { return ts; }

template <typename R, typename... P, size_t... I>
R call_with(R (*f)(P...), const std::vector<OpArg>& args, std::index_sequence<I...>) {
  return f(std::get<std::decay_t<P>>(args[I])...);
}

// The parameter names of a declaration's list: "(const Shape& dims, bool
// keepdim EMBER_DEFAULT(false))" gives dims, keepdim.
std::vector<std::string> names_of(const std::string& list) {
  std::vector<std::string> names;
  std::string part;
  int depth = 0;
  auto flush = [&] {
    const size_t cut = part.find("EMBER_DEFAULT");
    std::string p = part.substr(0, cut);
    while (!p.empty() && !(std::isalnum(static_cast<unsigned char>(p.back())) || p.back() == '_')) p.pop_back();
    size_t b = p.size();
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(p[b - 1])) || p[b - 1] == '_')) --b;
    if (b < p.size()) names.push_back(p.substr(b));
    part.clear();
  };
  for (char c : list) {
    if (c == '(' || c == '{' || c == '<') ++depth;
    if (c == ')' || c == '}' || c == '>') --depth;
    if ((c == ',' && depth == 1) || (c == ')' && depth == 0))
      flush();
    else if (depth >= 1 && !(c == '(' && depth == 1))
      part += c;
  }
  return names;
}

template <typename R, typename... P>
OpRule make_rule(const char* op, std::vector<std::string> params, R (*f)(P...)) {
  EMBER_CHECK(params.size() == sizeof...(P), "compile", "the rule of " << op << " names " << params.size()
                                                                        << " parameters for " << sizeof...(P));
  OpRule r;
  r.op = op;
  r.params = std::move(params);
  r.types = {alternative<std::decay_t<P>>()...};
  r.call = [f](const std::vector<OpArg>& args) {
    return as_results(call_with(f, args, std::index_sequence_for<P...>{}));
  };
  return r;
}

std::vector<OpRule> make_table() {
  std::vector<OpRule> rules;
  // Every op of tensor/op_list.h, from its own line: x.op(params) is op(x, params).
  auto with_self = [](std::vector<std::string> rest) {
    rest.insert(rest.begin(), "self");
    return rest;
  };
#define EMBER_DEFAULT(v)
#define EMBER_SELF_AND(...) (const Tensor& __VA_OPT__(, ) __VA_ARGS__)
#define EMBER_OP(R, name, params, args) \
  rules.push_back(make_rule(#name, with_self(names_of(#params)), static_cast<R(*) EMBER_SELF_AND params>(&ember::name)));
#include "tensor/op_list.h"
#undef EMBER_OP
#undef EMBER_SELF_AND
#undef EMBER_DEFAULT

  // The ops of autograd/ops.h alone, under the names their OpScope gives.
  using T = const Tensor&;
  auto add = [&](const char* op, std::vector<std::string> params, auto f) {
    rules.push_back(make_rule(op, std::move(params), f));
  };
  add("add", {"self", "other"}, static_cast<Tensor (*)(T, double)>(&operator+));
  add("sub", {"self", "other"}, static_cast<Tensor (*)(T, double)>(&operator-));
  add("mul", {"self", "other"}, static_cast<Tensor (*)(T, double)>(&operator*));
  add("div", {"self", "other"}, static_cast<Tensor (*)(T, double)>(&operator/));
  add("rsub", {"other", "self"}, static_cast<Tensor (*)(double, T)>(&operator-));
  add("rdiv", {"other", "self"}, static_cast<Tensor (*)(double, T)>(&operator/));
  add("cat", {"tensors", "dim"}, &cat);
  add("stack", {"tensors", "dim"}, &stack);
  add("where", {"cond", "self", "other"}, &where);
  add("gelu", {"self", "approx"}, &gelu);
  add("scaled_softmax", {"self", "scale", "causal"}, &scaled_softmax);
  add("tiled_attention", {"q", "k", "v", "causal"}, &detail::tiled_attention_saving);
  add("embedding", {"weight", "ids", "padding_idx", "sparse"}, &embedding);
  add("one_hot", {"ids", "num_classes"}, &one_hot);
  add("layer_norm", {"self", "weight", "bias", "eps"}, &detail::layer_norm_saving);
  add("cross_entropy", {"logits", "targets", "reduction", "ignore_index"}, &detail::cross_entropy_saving);
  // the fused ops' backward kernels, which a captured backward pass calls
  add("layer_norm_backward", {"grad", "self", "weight", "mean", "rstd"}, &layer_norm_backward);
  add("gelu_backward", {"grad", "self", "approx"}, &gelu_backward);
  add("cross_entropy_backward", {"grad", "logits", "targets", "lse", "reduction", "ignore_index"},
      &cross_entropy_backward);
  add("tiled_attention_backward", {"grad", "q", "k", "v", "out", "lse", "causal"}, &tiled_attention_backward);
  // a composed rule's handle on an input (autograd/composed_rule.h): the same values
  add("stand_in", {"self"}, &detail::stand_in);
  // what a tensor's detach() does to a value of the graph (not an op: the tracer writes it)
  add("detach", {"self"}, +[](T x) { return x.detach(); });
  // matmul under autocast: the same op, run with autocast on again
  add("matmul_bf16", {"self", "other"}, +[](T a, T b) {
    AutocastGuard on(true);
    return matmul(a, b);
  });
  for (OpRule& r : rules)  // max(x) and min(x): a max along the flattened x, whose index the backward reads
    r.composite = (r.op == "max" || r.op == "min") && r.types.size() == 1;
  return rules;
}

struct Table {
  std::vector<OpRule> rules = make_table();
  std::multimap<std::string, size_t> by_name;
  Table() {
    for (size_t i = 0; i < rules.size(); ++i) by_name.emplace(rules[i].op, i);
  }
};
const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const OpRule* find_rule(const std::string& op, const std::vector<OpArg>& args) {
  const Table& t = table();
  auto [first, last] = t.by_name.equal_range(op);
  for (auto it = first; it != last; ++it) {
    const OpRule& r = t.rules[it->second];
    if (r.types.size() != args.size()) continue;
    bool same = true;
    for (size_t i = 0; i < args.size() && same; ++i) same = r.types[i] == args[i].index();
    if (same) return &r;
  }
  return nullptr;
}

const std::vector<OpRule>& op_rules() { return table().rules; }

}  // namespace ember::compiler
