// The gradcheck registry: every differentiable op and module of ember,
// listed once, with sample inputs that exercise its corner cases
// (broadcasting, non-contiguous views, zero-size dims, 0-d tensors, repeated
// ids). It is test code, a target of its own (ember_gradcheck_samples), not
// part of the library. Two programs read it:
//   * tests/autograd_registry_test.cpp gradchecks every sample of every op,
//     and fails if some Node type in ember's sources is declared by no entry,
//     so a new op cannot land without a gradient test;
//   * examples/gradcheck_tour.cpp prints the same checks as a table.
//
// How entries get in (the one rule): by plain function calls, never by static
// initializers. Each family file (samples_<family>.cpp, mirroring
// autograd/ops/<family>.cpp and nn/<family>.cpp) defines one
// add_<family>_samples(ops) function; registry.cpp calls them all, in a fixed
// order, the first time op_registry() is read. Code outside ember that wants
// its own op checked calls register_op() before it reads op_registry().
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/gradcheck.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::samples {

// One set of inputs for an op. Floating inputs are float64 leaves that
// require grad (unless the sample is about a constant operand); ids and
// masks are int64/bool and are not differentiated.
struct OpSample {
  std::string label;  // what the sample is about: "broadcast", "non-contiguous", "zero-size", ...
  std::vector<Tensor> inputs;
};

struct OpInfo {
  std::string name;                // "mul", "nn.Linear"; unique; also the test name
  std::vector<std::string> nodes;  // Node types the op records, e.g. {"MulBackward"}
  // Node types that only its backward records, with create_graph (a linear
  // op's TransposedBackward); tests/autograd_registry_test.cpp finds them there.
  std::vector<std::string> grad_nodes = {};
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  std::function<std::vector<OpSample>(Generator&)> samples;
  // Only ops that pass through float32 (to) need looser settings.
  GradcheckOptions gradcheck = {};
  // Empty: the op's second derivatives pass gradgradcheck on every sample.
  // Otherwise why its backward cannot be differentiated: the test then checks
  // that backward(create_graph) refuses it with an error naming a node.
  std::string no_second_order = {};
  // Values a one-input op must give in float64, {x, f(x)}: closed forms, at
  // the points where a formula goes wrong (gradcheck confirms a derivative,
  // but only of the values the op computes). Checked to 1e-15, relative.
  std::vector<std::pair<double, double>> values = {};
};

// Every registered op: ember's families in order, then those added by
// register_op. The reference stays valid until the next register_op call.
const std::vector<OpInfo>& op_registry();

// Adds an op; error if the name is already taken or a field is missing.
void register_op(OpInfo info);

// The family tables (samples_<family>.cpp), called once by op_registry().
void add_view_samples(std::vector<OpInfo>& ops);
void add_join_samples(std::vector<OpInfo>& ops);
void add_binary_samples(std::vector<OpInfo>& ops);
void add_unary_samples(std::vector<OpInfo>& ops);
void add_select_samples(std::vector<OpInfo>& ops);
void add_reduce_samples(std::vector<OpInfo>& ops);
void add_matmul_samples(std::vector<OpInfo>& ops);
void add_index_samples(std::vector<OpInfo>& ops);
void add_fused_samples(std::vector<OpInfo>& ops);  // layer_norm, cross_entropy
void add_nn_embedding_samples(std::vector<OpInfo>& ops);
void add_nn_layer_samples(std::vector<OpInfo>& ops);
void add_nn_recurrent_samples(std::vector<OpInfo>& ops);
void add_nn_attention_samples(std::vector<OpInfo>& ops);

}  // namespace ember::samples
