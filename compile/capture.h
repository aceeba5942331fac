/// @file
/// Capture: run a function once and write down the ops it calls.
///
/// capture(fn, inputs) runs fn on inputs, eagerly, with a tracer watching
/// (an AutogradObserver that asks OpScope for every call's arguments and
/// results). Each op the function calls directly becomes a Call of the graph;
/// the ops an op calls inside itself do not (the graph calls the op again).
/// Tensors the function reads without computing them (a module's weights, a
/// mask it builds) become constants: the graph holds them and reads their
/// values when it runs, so a weight updated in place is seen.
///
/// A grad() inside the function is captured too: while the tracer watches,
/// backward rules take their composed form, made of ember ops (the form
/// create_graph uses), so the backward pass is written down as calls like
/// the forward one: the joint graph of forward and backward, which the
/// passes then simplify and fuse together.
///
/// What a graph cannot hold is refused with an ember::Error naming it, and
/// the function's run stops there (no graph breaks: a function that is half
/// graph and half eager would hide where the time goes, and a learner sees
/// exactly which line to move out of the function):
///   * .item() or to_vector() outside an op: the value would decide what the
///     function does next (data-dependent control flow);
///   * a random draw (dropout, randn): the graph would repeat this run's
///     numbers (unless the options say that is what the function does: one
///     that seeds a generator of its own the same way at every call);
///   * an in-place write (fill_, add_, copy_, index_add_): the graph is pure;
///   * backward(), which writes .grad (use grad(), which returns them);
///   * a kernel run outside any op (ember::kernel::..., or a backward rule
///     that computes with one): the graph could not remake its value;
///   * an op with no rule in compile/op_table.h;
///   * a view of a traced value made outside ember's ops.
/// A value of the function that C++ reads some other way (data_ptr()) is not
/// seen: the graph keeps what that run computed. And the numbers the
/// function hands to ops (a dim, a start, a scale) are part of the graph,
/// as the shapes are: a function whose C++ numbers change from call to call
/// at the same shapes must take them as tensors.
#pragma once

#include <functional>
#include <vector>

#include "compile/graph.h"

namespace ember::compiler {

/// A function of tensors to tensors: what compile() takes.
using Function = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct Capture {
  Graph graph;
  std::vector<Tensor> results;  // what fn returned on the run that captured it
};

struct CaptureOptions {
  /// The numbers fn draws become constants of the graph, instead of a
  /// refusal. Right only for a function that draws the same numbers at every
  /// call (it builds its own Generator with a fixed seed).
  bool draws_are_constants = false;
  /// The transform that captures, as its errors name it: "compile", or
  /// "vmap" (vmap/vmap.h, which captures a function to batch it).
  const char* transform = "compile";
};

/// Runs fn(inputs) once and returns its graph and its results.
Capture capture(const Function& fn, const std::vector<Tensor>& inputs, const CaptureOptions& options = {});

}  // namespace ember::compiler
