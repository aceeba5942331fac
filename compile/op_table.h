/// @file
/// How to call each op again from its recorded arguments: the capture rules.
///
/// A traced call is an op's name and its arguments as values (OpScope hands
/// them over, autograd/op_args.h). To run the graph, each call must find the
/// op's function again: the overload whose parameter types are the
/// arguments' types. The table is made from the ops' own declarations: every
/// op of tensor/op_list.h gets its rule from its line there (name, parameter
/// names and types), and the ops declared in autograd/ops.h alone (the
/// operators' scalar forms, cat, where, the layers' building blocks) are
/// listed once in compile/op_table.cpp. An op with no rule cannot be captured:
/// the tracer refuses it by name.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/op_args.h"
#include "tensor/tensor.h"

namespace ember::compiler {

struct OpRule {
  std::string op;
  std::vector<std::string> params;  // every parameter's name, tensors included
  std::vector<size_t> types;        // each parameter's alternative of OpArg
  std::function<std::vector<Tensor>(const std::vector<OpArg>& args)> call;
  /// Made of other ops, and its backward reads what they compute (max(x)
  /// over all elements: the winner's index): the tracer writes down the ops
  /// it calls instead of the op.
  bool composite = false;
};

/// The rule for `op` called with arguments of these types, or null.
const OpRule* find_rule(const std::string& op, const std::vector<OpArg>& args);
/// Every rule, in the table's order (for the registry check and the book).
const std::vector<OpRule>& op_rules();

}  // namespace ember::compiler
