/// @file
/// ember::compile(fn): a function of tensors, captured once per input
/// signature and run from its graph after that. (compile/ lives in
/// ember::compiler; the function is ember::compile, as torch.compile.)
///
///   compiler::Compiled f = compile([&](const std::vector<Tensor>& in) {
///     return std::vector<Tensor>{gelu(in[0] + in[1]).sum({-1})};
///   });
///   std::vector<Tensor> y = f({x, b});   // first call: captured (and run eagerly)
///   y = f({x2, b2});                     // same shapes and dtypes: the graph runs
///
/// A graph is kept per signature: the inputs' shapes and dtypes, and which
/// inputs are the same tensor. A call with a new signature captures again
/// (the function's C++ may branch on shapes, like a jaxpr per shape). What
/// cannot be captured is refused by name (compile/capture.h).
///
/// EMBER_COMPILE_DEBUG=1 prints each graph to stderr as it is made (2: also
/// before and after each pass, compile/passes.h).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compile/capture.h"
#include "compile/graph.h"

namespace ember::compiler {

struct CompileOptions {
  /// Elementwise chains run as generated kernels (compile/fusion.h); false:
  /// the graph runs its calls one by one (no compiler needed).
  bool fuse = true;
};

class Compiled {
 public:
  explicit Compiled(Function fn, CompileOptions options = {});

  /// fn(inputs): from the graph of this signature, captured on first use.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);
  /// The graph that runs for inputs like these (captured now if there is none).
  const Graph& graph_for(const std::vector<Tensor>& inputs);
  /// How many signatures have been captured.
  size_t captures() const;

 private:
  struct Entry {
    Graph graph;
  };
  // The graph for `inputs`; when it captures, fills `first` with fn's results
  // (one undefined tensor if fn returned none).
  const Entry& entry(const std::vector<Tensor>& inputs, std::vector<Tensor>* first);

  Function fn_;
  CompileOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Entry>> graphs_;  // by signature
};

/// "f32[4, 8] f32[8] =0": the inputs' dtypes and shapes, and "=i" for an
/// input that is input i again.
std::string signature(const std::vector<Tensor>& inputs);

}  // namespace ember::compiler

namespace ember {
/// fn, captured per signature and run from its graph (compiler::Compiled).
compiler::Compiled compile(compiler::Function fn, compiler::CompileOptions options = {});
}  // namespace ember
