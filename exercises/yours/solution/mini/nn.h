// Stage 7 of your framework: modules and parameters
// (docs/book/build_your_own/07_modules.md).
//
// A Module owns parameters (Vars that require grad) and other modules, each
// under a name, so that a model can list every parameter it trains — once,
// with a dotted name ("head.weight") — for an optimizer to update and for a
// checkpoint to save. Four modules, and the three Var ops they need:
//
//   mini::Generator gen(0);
//   mini::Embedding tok(65, 32, gen);            // a (65, 32) table of token vectors
//   mini::LearnedPositions pos(8, 32, gen);      // a (8, 32) table, a row per position
//   mini::Linear head(32, 65, gen);              // y = x Wᵀ + b
//   Var h = add(tok.forward(ids, {B, T}), pos.forward(T));   // (B, T, 32)
//   Var logits = head.forward(h);                // (B, T, 65)
//
// Weight tying: the head's weight *is* the token table (head.weight =
// tok.weight, one Var, one node): every row of it gets gradient from the
// head, and the rows looked up get more from the lookup.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mini/matmul.h"
#include "mini/random.h"

namespace mini {

// ---- the Var ops modules need ----

/// Rows `ids` of table (V, D), in a Var of shape ids_shape + (D). Its
/// backward adds each row of grad into the row of the table it was read
/// from: a row read twice gets both parts, a row never read 0, and the row
/// padding_idx (when >= 0) nothing. Refuses an id outside [0, V), an
/// ids_shape of another number of ids, and a table that is not 2-d.
Var embedding(const Var& table, const std::vector<int64_t>& ids, const Shape& ids_shape, int64_t padding_idx = -1);
/// x's elements in row-major order with another shape of as many elements
/// (a view when x is contiguous, else a copy); backward: grad reshaped back.
Var reshape(const Var& x, const Shape& shape);
/// x with dims d0 and d1 swapped (a view); backward: grad swapped back.
Var transpose(const Var& x, int64_t d0, int64_t d1);

// ---- modules ----

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;  // it holds pointers to its own members
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;

  /// Every parameter of this module and of its children, depth first in the
  /// order they were registered, each with its dotted name; a parameter
  /// that two modules share (tied) appears once, under its first name.
  std::vector<std::pair<std::string, Var>> named_parameters() const;
  std::vector<Var> parameters() const;
  /// Forgets the gradient of every parameter.
  void zero_grad() const;

 protected:
  /// Registers the member `v` (a Var that requires grad) as the parameter
  /// `name`. The module reads the member when asked, so that a later
  /// assignment to it (tying) is seen.
  void register_parameter(const std::string& name, Var& v);
  /// Registers the member module `m` as the child `name`.
  void register_module(const std::string& name, Module& m);

 private:
  std::vector<std::pair<std::string, Var*>> parameters_;
  std::vector<std::pair<std::string, Module*>> children_;
};

/// y = x Wᵀ + b, x (..., in) to y (..., out); W (out, in), b (out), both
/// uniform in ±1/sqrt(in) at first (PyTorch's and ember's rule).
class Linear : public Module {
 public:
  Linear(int64_t in, int64_t out, Generator& gen, bool bias = true);
  Var forward(const Var& x) const;
  Var weight, bias;  // bias: requires no grad and is not a parameter when there is none
  bool has_bias;
};

/// A table of V vectors of D numbers, normal with deviation 0.02 at first;
/// the row padding_idx (when >= 0) all zeros, and it never learns.
class Embedding : public Module {
 public:
  Embedding(int64_t V, int64_t D, Generator& gen, int64_t padding_idx = -1);
  /// The rows ids (of shape ids_shape): ids_shape + (D).
  Var forward(const std::vector<int64_t>& ids, const Shape& ids_shape) const;
  Var weight;  // (V, D)
  int64_t padding_idx;
};

/// A learned vector for each position 0 ... max_length - 1 (normal, 0.02).
class LearnedPositions : public Module {
 public:
  LearnedPositions(int64_t max_length, int64_t D, Generator& gen);
  /// The rows of positions 0 ... T - 1: (T, D). Refuses T above max_length.
  Var forward(int64_t T) const;
  Var weight;  // (max_length, D)
};

/// The fixed sin/cos table of "Attention Is All You Need": no parameters.
///   angle(p, i) = p / 10000^(2·⌊i/2⌋ / D);  table[p, i] = sin(angle) for even i, cos(angle) for odd i
class SinusoidalPositions : public Module {
 public:
  SinusoidalPositions(int64_t max_length, int64_t D);
  /// The rows of positions 0 ... T - 1: (T, D), requiring no grad. Refuses T above max_length.
  Var forward(int64_t T) const;
  Tensor table;  // (max_length, D)
};

}  // namespace mini
