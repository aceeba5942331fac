/// @file
/// vmap: a function of one sample, run on a batch of samples in one go.
///
///   Function f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].matmul(in[1])}; };
///   auto fb = vmap(f, {.in_dims = {0, not_mapped}});   // x (B, n) mapped over, W (n, m) shared
///   Tensor ys = fb({xs, W})[0];                         // (B, m): row b is f({xs[b], W})
///
/// The third function transform beside grad and jvp (JAX's trio): grad
/// changes what a function computes (its derivative), vmap changes how many
/// times (once per sample) without a loop. The two compose: vmap of a
/// function that calls grad() gives one gradient per sample (vmap/functional.h
/// builds Jacobians the same way).
///
/// How (chapter 14): vmap runs f once on the first sample, with compile/'s
/// tracer watching, which writes down the ops f calls (compile/capture.h).
/// Then it runs that list again on the whole batch: each call through its
/// op's batching rule (autograd/batching.h), which knows which arguments
/// carry the batch (in front, as dim 0) and changes the call so that the
/// op does every sample at once. A call none of whose inputs carries the
/// batch runs as it is, once. An op without a rule runs once per sample (a
/// loop over the batch, stacked), with a warning naming it, printed once.
///
/// What f may not do under vmap, each an ember::Error naming it:
///   * write in place (add_, fill_, copy_, index_add_): a write into one
///     sample's tensor would be a write into the batch's;
///   * draw random numbers, unless the options say how: Different (each
///     sample draws its own: vmap then calls f once per sample) or Same
///     (one draw, shared by the batch);
///   * read values (item(), to_vector()) to decide what to do next: that
///     would decide for one sample what every sample does;
///   * backward() (use grad(), which returns the gradients), or anything
///     else compile/'s capture refuses.
/// A function with grad() inside runs with autograd off, as a compiled one
/// does: its results are values, without a graph of their own. A jvp()
/// inside works too: under the tracer it takes J v from two backward passes
/// (autograd/functional.h), so vmap of jvp gives per-sample JVPs, or with
/// the direction alone mapped, the columns of a Jacobian.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

/// A function of tensors to tensors: what vmap takes and returns.
using BatchFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// An input not mapped over: the same tensor for every sample.
inline constexpr std::nullopt_t not_mapped = std::nullopt;

/// Random draws inside a vmapped function (PyTorch's randomness= option).
enum class Randomness {
  Error,      // refused, with an error naming the choice
  Different,  // each sample draws its own numbers: f runs once per sample
  Same,       // one draw, the same numbers for every sample
};

struct VmapOptions {
  /// Per input, the dim that holds the batch (negative counts from the end),
  /// or not_mapped. Empty: every input mapped along its dim 0.
  std::vector<std::optional<int64_t>> in_dims = {};
  /// Per output, the dim its batch goes to (negative counts from the end of
  /// the result). Empty: dim 0 for every output.
  std::vector<int64_t> out_dims = {};
  Randomness randomness = Randomness::Error;
};

/// f over a batch: out[k] stacks f(sample b)[k] along out_dims[k], for b in
/// 0..B-1, where sample b takes index b of each mapped input along its
/// in_dim (B: their common size, which may be 0) and every unmapped input
/// as it is. An output that depends on no mapped input is repeated B times.
/// Errors (ember::Error, naming vmap): in_dims or out_dims of the wrong
/// length, a dim out of range, mapped inputs of different sizes, no input
/// mapped, and what f may not do (above).
BatchFn vmap(BatchFn f, VmapOptions options = {});

namespace batching_stats {
/// How many calls the last vmap on this thread ran by a rule, ran once
/// unbatched, and looped over the batch (for the book and the tests).
struct Counts {
  int by_rule = 0;
  int unbatched = 0;
  int looped = 0;
};
Counts last();
}  // namespace batching_stats

}  // namespace ember
