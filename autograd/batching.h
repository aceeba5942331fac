/// @file
/// Batching rules: how each op runs on a batch of inputs at once (vmap/).
///
/// vmap(f) runs f once per sample in meaning, and once in fact: on tensors
/// with one more dimension, the batch, at the front. Each op f calls is
/// given its arguments with the batch in front of some of them (those that
/// differ from sample to sample) and must return what a loop over the
/// samples would return, stacked. For most ops that is the op itself with a
/// small change to its arguments; the change is the op's batching rule:
///
///   elementwise       exp(x): the batch rides along, nothing to change
///   broadcasting      a + b: give the batched inputs the same number of
///                     dims (pad with size-1 dims after the batch), so the
///                     batch never meets a sample's own dim
///   a dim argument    sum(x, {0}): the sample's dim 0 is the batch's dim 1
///   a shape argument  reshape(x, {6}): the batch's shape is {B, 6}
///   matmul            a batched product: pad, and broadcasting does the rest
///
/// Each rule is written beside its op, in its family's file of autograd/ops/
/// (unary.cpp, binary.cpp, ...), under the op's backward and forward rules;
/// the family's add_..._batching_rules() lists them by the name the op's
/// OpScope gives. An op without a rule is run once
/// per sample by vmap (its fallback, which warns once, naming the op).
///
/// A rule sees one call: the op's arguments, which tensors carry the batch
/// (always as their dim 0), the batch size, the shapes a single sample's
/// results have, and the op itself (to call with new arguments). It returns
/// the results with the batch as dim 0, or says that one of them is the
/// same for every sample (a rule may return a result without the batch).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/op_args.h"
#include "tensor/tensor.h"

namespace ember::batching {

struct Call {
  std::string op;                 // as OpScope names it
  std::vector<OpArg> args;        // in the op's order
  /// Per argument: its dim 0 is the batch. A list of tensors (cat's) is
  /// batched as a whole: vmap gives each of its tensors the batch.
  std::vector<bool> batched;
  int64_t size = 0;               // the batch size (may be 0)
  std::vector<Shape> sample_shapes;  // each result's shape for one sample
  /// The op itself (compile/op_table.h's rule for it).
  const std::function<std::vector<Tensor>(const std::vector<OpArg>&)>* op_fn = nullptr;

  /// The op on arguments of the same types (some of them now batched).
  std::vector<Tensor> run(const std::vector<OpArg>& a) const { return (*op_fn)(a); }

  const Tensor& tensor(size_t i) const { return std::get<Tensor>(args[i]); }
  /// The number of dims argument i has for one sample.
  int64_t rank(size_t i) const { return tensor(i).dim() - (batched[i] ? 1 : 0); }
};

struct Result {
  std::vector<Tensor> values;
  std::vector<bool> batched;  // per value: its dim 0 is the batch (else the same for every sample)
};

using Rule = Result (*)(const Call&);

/// A rule may also return no values at all: "not for these arguments", and
/// vmap loops over the batch for that call (argmax of a 0-d sample).
/// The rule of `op`, or null (vmap then loops over the batch).
Rule find_rule(const std::string& op);
/// Every op that has a rule, sorted (for the registry check and the book).
std::vector<std::string> ops_with_rules();

// ---- what rules are made of ----

/// The results of run(args), each with the batch as dim 0.
Result batched(std::vector<Tensor> values);
/// A batched x, given `rank` dims per sample by size-1 dims after the batch:
/// (B, 3) to rank 3 is (B, 1, 1, 3). An unbatched x is returned as it is
/// (broadcasting aligns it from the right already).
Tensor pad(const Tensor& x, bool is_batched, int64_t rank);
/// x with the batch in front: itself if batched, else x expanded to (B, *x).
Tensor with_batch(const Tensor& x, bool is_batched, int64_t size);
/// A sample's dim d (negative counts from the end of `rank` dims) in the
/// batched tensor: d wrapped, plus one.
int64_t shift(int64_t d, int64_t rank);
/// Each of dims shifted; empty (every dim) becomes every sample dim 1..rank.
Shape shift_all(const Shape& dims, int64_t rank);
/// (B, *shape).
Shape with_batch(const Shape& shape, int64_t size);
/// x with dim `from` moved to `to`, the others in their order (a permute).
Tensor movedim(const Tensor& x, int64_t from, int64_t to);

/// Elementwise (and any op whose only tensor argument changes nothing but
/// its values: to, clone, gelu, tril): call the op as it is.
Result same(const Call& c);
/// Broadcasting ops (add, where, pow): every batched tensor padded to the
/// sample rank of the result, then the op.
Result broadcast(const Call& c);
/// Ops whose argument 1 is a dim of their first tensor (softmax(x, d),
/// narrow(x, d, start, length)): that dim shifted.
Result shifted_dim(const Call& c);
/// An op over a dim of a sample that is one number (0-d: sum, softmax, max
/// over dim 0 or -1): the batch (B) viewed as (B, 1), the op over dim 1
/// (the dims argument, at position `dims_at`, made {1} or 1), the results
/// reshaped to the samples' shapes. The same kernel over one element.
Result of_one_element(const Call& c, size_t dims_at);
/// Ops whose result's shape is named by the call (reshape, flatten, squeeze):
/// the op's input reshaped to (B, *sample shape of the result).
Result reshaped(const Call& c);

namespace detail {
/// The table, filled by one plain call per family (its file in autograd/ops/).
struct Rules {
  std::vector<std::pair<std::string, Rule>> entries;
  void add(const std::string& op, Rule r) { entries.emplace_back(op, r); }
  void add(std::initializer_list<const char*> ops, Rule r) {
    for (const char* op : ops) add(op, r);
  }
};
void add_unary_batching_rules(Rules& r);
void add_binary_batching_rules(Rules& r);
void add_select_batching_rules(Rules& r);
void add_reduce_batching_rules(Rules& r);
void add_view_batching_rules(Rules& r);
void add_join_batching_rules(Rules& r);
void add_matmul_batching_rules(Rules& r);
void add_index_batching_rules(Rules& r);
void add_layer_norm_batching_rules(Rules& r);
void add_cross_entropy_batching_rules(Rules& r);
void add_attention_batching_rules(Rules& r);
}  // namespace detail

}  // namespace ember::batching
