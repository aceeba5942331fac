// The op registry: every differentiable op, registered once, with sample
// inputs that exercise its corner cases (broadcasting, non-contiguous views,
// zero-size dims, 0-d tensors, repeated ids).
//
// Two programs read it:
//   * tests/autograd_registry_test.cpp gradchecks every sample of every op,
//     and fails if some Node type exists that no entry declares — so a new op
//     cannot land without a gradient test;
//   * examples/gradcheck_tour.cpp prints the same checks as a table.
//
// The entries for autograd/ops.h live in op_registry.cpp. Other layers (nn/)
// add theirs from their own files with a static initializer:
//
//   static const bool linear_registered = (ember::register_op({...}), true);
//
// (A static library only links an object file that something references; an
// nn file whose only content is a registration must be referenced to count.)
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember {

// One set of inputs for an op. Floating inputs are float64 leaves that
// require grad (unless the sample is about a constant operand); ids and
// masks are int64/bool and are not differentiated.
struct OpSample {
  std::string label;           // what the sample is about: "broadcast", "non-contiguous", "zero-size", ...
  std::vector<Tensor> inputs;
};

struct OpInfo {
  std::string name;                // "mul"; unique; also the test name
  std::vector<std::string> nodes;  // Node types the op records, e.g. {"MulBackward"}
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  std::function<std::vector<OpSample>(Generator&)> samples;
  // Only ops that pass through float32 (to) need looser settings.
  GradcheckOptions gradcheck = {};
};

// Every registered op: the built-in ones first, then those added by
// register_op in registration order. The reference stays valid until the
// next register_op call.
const std::vector<OpInfo>& op_registry();

// Adds an op; error if the name is already taken or a field is missing.
void register_op(OpInfo info);

}  // namespace ember
