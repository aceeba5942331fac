// Stage 6 of your framework: derive it yourself
// (docs/book/build_your_own/06_derived.md).
//
// Four functions every Transformer uses, each one op with one node whose
// backward you write from the derivation on paper: no chain of stage 4's
// ops inside, so the gradient is one formula, and the memory one saved
// input.
//
//   softmax(x)[..., i]     = e^(x_i - m) / sum_j e^(x_j - m),  m = max_j x_j   (along the last dim)
//   log_softmax(x)[..., i] = x_i - m - log sum_j e^(x_j - m)
//   cross_entropy(logits, t) = mean over rows n of -log_softmax(logits)[n, t_n]
//   layer_norm(x, gamma, beta)[..., i] = (x_i - mu) / sqrt(var + eps) * gamma_i + beta_i
//        over the last dim, var the biased variance (divided by D, as PyTorch's)
//   gelu(x) = x * Phi(x) = x/2 * (1 + erf(x / sqrt 2))     (the exact form)
//
// Subtracting the row's max m changes nothing in exact arithmetic and keeps
// e^x finite: e^1000 is inf in a double, e^0 is 1.
#pragma once

#include <cstdint>
#include <vector>

#include "mini/autograd.h"

namespace mini {

/// Softmax along the last dim (x: at least 1 dim). Refuses a 0-d x.
Var softmax(const Var& x);
/// log(softmax(x)) along the last dim, computed without a log of 0 where
/// softmax underflows. Refuses a 0-d x.
Var log_softmax(const Var& x);
/// The mean over the rows n of logits (N, C) of -log_softmax(logits)[n, targets[n]].
/// Refuses logits that are not 2-d, a number of targets that is not N (or
/// none at all), and a target outside [0, C), naming the row and the value.
Var cross_entropy(const Var& logits, const std::vector<int64_t>& targets);
/// Layer norm over the last dim of x (..., D); gamma and beta of shape (D).
/// Refuses a 0-d x and a gamma or beta of another shape.
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, double eps = 1e-5);
/// GELU, the exact form x Phi(x).
Var gelu(const Var& x);

}  // namespace mini
