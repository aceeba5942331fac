// Stage 7: modules and parameters (docs/book/build_your_own/07_modules.md).
// Each MINI_TODO asks a question; replace it with your code, then run
//   bash scripts/build_your_own.sh 7
#include "mini/nn.h"

#include <cmath>
#include <string>
#include <unordered_set>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)": a shape, for the messages of your refusals (given).
[[maybe_unused]] std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

Var embedding(const Var& table, const std::vector<int64_t>& ids, const Shape& ids_shape, int64_t padding_idx) {
  (void)table;
  (void)ids;
  (void)ids_shape;
  (void)padding_idx;
  MINI_TODO("the forward copies rows; in the backward, where does row k of grad go, what if two ids are the same, "
            "and what does a row nobody read get?");
}

Var reshape(const Var& x, const Shape& shape) {
  (void)x;
  (void)shape;
  MINI_TODO("which of stage 2's views applies, and when can it not? What shape must grad take on its way back?");
}

Var transpose(const Var& x, int64_t d0, int64_t d1) {
  (void)x;
  (void)d0;
  (void)d1;
  MINI_TODO("what undoes a transpose?");
}

// ---- Module (registering is given) ----

void Module::register_parameter(const std::string& name, Var& v) {
  MINI_CHECK(v.requires_grad(), "register_parameter", "\"" << name << "\" requires no grad: a parameter is trained");
  parameters_.emplace_back(name, &v);
}

void Module::register_module(const std::string& name, Module& m) { children_.emplace_back(name, &m); }

std::vector<std::pair<std::string, Var>> Module::named_parameters() const {
  MINI_TODO("in which order, under which names? Two members holding one Var (tied): what makes them the same "
            "parameter, and how many times must an optimizer see it?");
}

std::vector<Var> Module::parameters() const {
  MINI_TODO("named_parameters without the names");
}

void Module::zero_grad() const {
  MINI_TODO("every parameter's gradient, forgotten");
}

// ---- the modules ----

Linear::Linear(int64_t in, int64_t out, Generator& gen, bool bias)
    : weight(Tensor({}, {0})), bias(Tensor({}, {0})), has_bias(bias) {
  (void)in;
  (void)out;
  (void)gen;
  MINI_TODO("which shapes, which starting numbers (the header says), and what must the module be told about them?");
}

Var Linear::forward(const Var& x) const {
  (void)x;
  MINI_TODO("x is (..., in) and W is (out, in): which product gives (..., out)?");
}

Embedding::Embedding(int64_t V, int64_t D, Generator& gen, int64_t padding_idx)
    : weight(Tensor({}, {0})), padding_idx(padding_idx) {
  (void)V;
  (void)D;
  (void)gen;
  MINI_TODO("a normal table with deviation 0.02; what is special about the padding row, from the start?");
}

Var Embedding::forward(const std::vector<int64_t>& ids, const Shape& ids_shape) const {
  (void)ids;
  (void)ids_shape;
  MINI_TODO("which op does this module wrap?");
}

LearnedPositions::LearnedPositions(int64_t max_length, int64_t D, Generator& gen) : weight(Tensor({}, {0})) {
  (void)max_length;
  (void)D;
  (void)gen;
  MINI_TODO("how is this table different from a token table, if at all?");
}

Var LearnedPositions::forward(int64_t T) const {
  (void)T;
  MINI_TODO("which rows, and what do the rows beyond T learn from this step?");
}

SinusoidalPositions::SinusoidalPositions(int64_t max_length, int64_t D) : table({}, {0}) {
  (void)max_length;
  (void)D;
  MINI_TODO("the header gives the formula: compute it in double, once");
}

Var SinusoidalPositions::forward(int64_t T) const {
  (void)T;
  MINI_TODO("the first T rows: does anything learn them?");
}

}  // namespace mini
