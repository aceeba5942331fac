// Stage 7, the reference solution: the three Var ops as records with their
// backward, a Module that walks its registered members, and four modules.
#include "mini/nn.h"

#include <cmath>
#include <string>
#include <unordered_set>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)"
std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

// A leaf that requires grad, of `shape`, with numbers from `draw`.
template <typename Draw>
Var parameter(const Shape& shape, Draw draw) {
  std::vector<double> v(static_cast<size_t>(numel(shape)));
  for (double& x : v) x = draw();
  return Var(Tensor(std::move(v), shape), true);
}

}  // namespace

Var embedding(const Var& table, const std::vector<int64_t>& ids, const Shape& ids_shape, int64_t padding_idx) {
  MINI_CHECK(table.shape().size() == 2, "embedding", "a table of shape " << str(table.shape()) << ": it must be (V, D)");
  const int64_t V = table.shape()[0], D = table.shape()[1];
  MINI_CHECK(numel(ids_shape) == static_cast<int64_t>(ids.size()), "embedding",
             ids.size() << " ids for the shape " << str(ids_shape) << " of " << numel(ids_shape));
  for (size_t k = 0; k < ids.size(); ++k)
    MINI_CHECK(ids[k] >= 0 && ids[k] < V, "embedding",
               "id " << ids[k] << " (number " << k << ") is not a row of a table of shape " << str(table.shape()));
  Shape out_shape = ids_shape;
  out_shape.push_back(D);
  std::vector<double> out;
  out.reserve(ids.size() * static_cast<size_t>(D));
  for (int64_t id : ids)
    for (int64_t j = 0; j < D; ++j) out.push_back(table.data().at({id, j}));
  return record(Tensor(std::move(out), out_shape), "embedding", {table},
                [ids, V, D, padding_idx](const Tensor& g) {
                  // each row of g goes back to the row it was read from; rows read twice add up
                  Tensor d(std::vector<double>(static_cast<size_t>(V * D), 0.0), {V, D});
                  const std::vector<double> gv = g.values();
                  for (size_t k = 0; k < ids.size(); ++k) {
                    if (ids[k] == padding_idx) continue;  // the padding row never learns
                    for (int64_t j = 0; j < D; ++j) d.at({ids[k], j}) += gv[k * static_cast<size_t>(D) + static_cast<size_t>(j)];
                  }
                  return std::vector<Tensor>{d};
                });
}

Var reshape(const Var& x, const Shape& shape) {
  MINI_CHECK(numel(shape) == x.data().numel(), "reshape",
             "x of shape " << str(x.shape()) << " has " << x.data().numel() << " elements, the shape " << str(shape)
                           << " " << numel(shape));
  return record(x.data().contiguous().view(shape), "reshape", {x},
                [from = x.shape()](const Tensor& g) { return std::vector<Tensor>{g.contiguous().view(from)}; });
}

Var transpose(const Var& x, int64_t d0, int64_t d1) {
  return record(x.data().transpose(d0, d1), "transpose", {x},
                [d0, d1](const Tensor& g) { return std::vector<Tensor>{g.transpose(d0, d1)}; });
}

// ---- Module ----

void Module::register_parameter(const std::string& name, Var& v) {
  MINI_CHECK(v.requires_grad(), "register_parameter", "\"" << name << "\" requires no grad: a parameter is trained");
  parameters_.emplace_back(name, &v);
}

void Module::register_module(const std::string& name, Module& m) { children_.emplace_back(name, &m); }

std::vector<std::pair<std::string, Var>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Var>> out;
  std::unordered_set<const GradNode*> seen;  // a tied parameter: one node, listed once
  // depth first: this module's own parameters, then each child's, with the child's name in front
  std::vector<std::pair<std::string, const Module*>> stack{{"", this}};
  while (!stack.empty()) {
    const auto [prefix, m] = stack.back();
    stack.pop_back();
    for (const auto& [name, v] : m->parameters_)
      if (seen.insert(v->node().get()).second) out.emplace_back(prefix + name, *v);
    for (auto it = m->children_.rbegin(); it != m->children_.rend(); ++it)  // reversed: the first pops first
      stack.emplace_back(prefix + it->first + ".", it->second);
  }
  return out;
}

std::vector<Var> Module::parameters() const {
  std::vector<Var> out;
  for (auto& [name, v] : named_parameters()) out.push_back(v);
  return out;
}

void Module::zero_grad() const {
  for (const Var& v : parameters()) v.zero_grad();
}

// ---- the modules ----

Linear::Linear(int64_t in, int64_t out, Generator& gen, bool bias)
    : weight(Tensor({}, {0})), bias(Tensor({}, {0})), has_bias(bias) {
  MINI_CHECK(in >= 1 && out >= 1, "Linear", "in " << in << ", out " << out << ": each at least 1");
  const double bound = 1 / std::sqrt(static_cast<double>(in));
  weight = parameter({out, in}, [&] { return gen.uniform(-bound, bound); });
  register_parameter("weight", weight);
  if (has_bias) {
    this->bias = parameter({out}, [&] { return gen.uniform(-bound, bound); });
    register_parameter("bias", this->bias);
  }
}

Var Linear::forward(const Var& x) const {
  const Var y = matmul(x, transpose(weight, 0, 1));  // (..., in) by (in, out)
  return has_bias ? add(y, bias) : y;
}

Embedding::Embedding(int64_t V, int64_t D, Generator& gen, int64_t padding_idx)
    : weight(Tensor({}, {0})), padding_idx(padding_idx) {
  MINI_CHECK(V >= 1 && D >= 1, "Embedding", "V " << V << ", D " << D << ": each at least 1");
  MINI_CHECK(padding_idx < V, "Embedding", "padding_idx " << padding_idx << " is not a row of " << V);
  weight = parameter({V, D}, [&] { return 0.02 * gen.normal(); });
  if (padding_idx >= 0)
    for (int64_t j = 0; j < D; ++j) weight.data().at({padding_idx, j}) = 0;
  register_parameter("weight", weight);
}

Var Embedding::forward(const std::vector<int64_t>& ids, const Shape& ids_shape) const {
  return embedding(weight, ids, ids_shape, padding_idx);
}

LearnedPositions::LearnedPositions(int64_t max_length, int64_t D, Generator& gen) : weight(Tensor({}, {0})) {
  MINI_CHECK(max_length >= 1 && D >= 1, "LearnedPositions", "max_length " << max_length << ", D " << D << ": each at least 1");
  weight = parameter({max_length, D}, [&] { return 0.02 * gen.normal(); });
  register_parameter("weight", weight);
}

Var LearnedPositions::forward(int64_t T) const {
  const int64_t L = weight.shape()[0];
  MINI_CHECK(T >= 0 && T <= L, "LearnedPositions", "T = " << T << " positions, of a table of " << L);
  std::vector<int64_t> ids(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) ids[static_cast<size_t>(t)] = t;
  return embedding(weight, ids, {T});
}

SinusoidalPositions::SinusoidalPositions(int64_t max_length, int64_t D) : table({}, {0}) {
  MINI_CHECK(max_length >= 1 && D >= 1, "SinusoidalPositions", "max_length " << max_length << ", D " << D << ": each at least 1");
  std::vector<double> v(static_cast<size_t>(max_length * D));
  for (int64_t p = 0; p < max_length; ++p)
    for (int64_t i = 0; i < D; ++i) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, static_cast<double>(2 * (i / 2)) / static_cast<double>(D));
      v[static_cast<size_t>(p * D + i)] = i % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  table = Tensor(std::move(v), {max_length, D});
}

Var SinusoidalPositions::forward(int64_t T) const {
  const int64_t L = table.shape()[0];
  MINI_CHECK(T >= 0 && T <= L, "SinusoidalPositions", "T = " << T << " positions, of a table of " << L);
  return Var(table.slice(0, 0, T));
}

}  // namespace mini
