/// @file
/// The graph a captured function becomes: ember's small IR.
///
/// A graph is a list of calls of ember ops, in the order the function made
/// them, over numbered values:
///
///   graph(%0: f32[4, 8], %1: f32[8]):
///     %2: f32[4, 8] = add(%0, %1)
///     %3: f32[4, 8] = gelu(%2, approx=none)
///     %4: f32[4] = sum(%3, dims=[1], keepdim=false)
///     return %4
///
/// Each value is an input of the function, a constant (a tensor the function
/// read but did not compute: a module's weight, a mask it made), or a result
/// of a call. A call names the op as OpScope does and keeps every argument:
/// values by number, the rest (dims, scalars, flags) as they were. Shapes and
/// dtypes are those of the capture; a graph is made for one set of input
/// shapes and dtypes (compile/compile.h keeps one per set).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "autograd/op_args.h"
#include "tensor/tensor.h"

namespace ember::compiler {

struct OpRule;  // compile/op_table.h
struct Fused;   // below

/// Where a value comes from.
enum class Origin {
  Input,     // an argument of the function, in order
  Constant,  // a tensor it read but did not compute: held by the graph, read when it runs
  Result,    // a result of a call
};

struct Value {
  Shape shape;
  DType dtype = DType::Float32;
  Origin origin = Origin::Result;
  /// A constant the function made itself (ones, zeros, tensor(...)): eager
  /// makes a new one at every call, so a graph that returns it returns a copy.
  bool made = false;
};

/// A value of the graph, %id.
struct ValueRef {
  int id = -1;
  bool operator==(const ValueRef&) const = default;
};
/// A list of values (cat's tensors).
struct ValueList {
  std::vector<int> ids;
  bool operator==(const ValueList&) const = default;
};
/// One argument of a call: OpArg with its tensors replaced by values.
using Arg = std::variant<ValueRef, ValueList, double, int64_t, bool, Shape, DType, std::optional<double>,
                         std::optional<int64_t>, GeluApprox, Reduction>;

struct Call {
  std::string op;            // as OpScope names it: "mul", "sum", "layer_norm"
  std::vector<Arg> args;     // in the order of the op's parameters
  std::vector<int> results;  // one value, two for max(x, d)
  std::string module;        // the module it ran in ("blocks.0.attn"), "" for none
  const OpRule* rule = nullptr;  // how to run it (compile/op_table.h)
  std::shared_ptr<const Fused> fused;  // op "fused": the group it runs (compile/fusion.h)
};

/// A generated kernel: fn(inputs, outputs, blocks, begin, end) computes
/// elements [begin, end) of every output (compile/codegen.h).
using KernelFn = void (*)(const void* const* inputs, void* const* outputs, const void* const* blocks, int64_t begin,
                          int64_t end);

/// How a fused kernel reads one of its inputs, for an output element j.
enum class Reads {
  Whole,    // the input has the output's shape: x[j]
  One,      // one element, broadcast everywhere: x[0]
  Rows,     // the output's trailing dims (a bias): x[j % size]
  Columns,  // the leading dims, then size-1 dims: x[j / stride] (a per-row scale)
  Copied,   // any other broadcast: expanded to the output's shape first, then Whole
};

/// A sum that ends a fused chain: the kernel adds up one of its values as
/// it computes it, in the order eager's sum adds (compile/fusion.h).
enum class SumOver {
  Rows,     // the trailing dims: `outer` rows of `inner` elements, one sum each
  Columns,  // the leading dims: `inner` columns, each a sum over `outer` rows
};
struct FusedSum {
  SumOver over = SumOver::Rows;
  int value = -1;   // the value of the group it sums
  int result = -1;  // the sum: the group's last member's result
  Shape shape;      // the result's
  int64_t outer = 0, inner = 0;
};

/// Elementwise calls of one output shape and float dtype, run as one
/// kernel over blocks of elements that stay in L1 (compile/fusion.h); and
/// perhaps a sum of one of their values at the end.
struct Fused {
  std::vector<Call> members;  // the calls it replaces, in order (the sum last)
  std::vector<int> inputs;    // the values it reads from outside: the fused call's arguments
  std::vector<Reads> reads;   // how, one per input
  std::vector<int64_t> read_sizes;  // Rows: the input's size; Columns: the output elements per input element
  Shape shape;
  DType dtype = DType::Float32;
  std::optional<FusedSum> sum;
  std::string name;    // "fused[add,gelu,mul]": what the instruments call it
  std::string source;  // its C++ (compile/codegen.h)
  std::string file;    // the shared object it was loaded from
  KernelFn fn = nullptr;
};

struct Graph {
  std::vector<Value> values;  // indexed by id
  std::vector<int> inputs;    // the function's arguments, in order
  std::vector<std::pair<int, Tensor>> constants;
  std::vector<Call> calls;    // in order: each reads only values defined before it
  std::vector<int> outputs;   // what the function returns, in order
  /// It holds a backward pass (grad() inside the function): it computes
  /// gradients itself, so it runs with autograd off.
  bool backward = false;

  /// A new value; returns its id.
  int add_value(const Shape& shape, DType dtype, Origin origin);
  /// The values a call reads, in argument order (a list's values in turn).
  static std::vector<int> reads(const Call& call);
};

/// The graph as text, one line per call (the format above).
std::string to_string(const Graph& g);
/// "f32[4, 8]": a value's dtype and shape, as the graph prints them.
std::string type_str(const Value& v);
/// One argument as the graph prints it: "%3", "[1]", "false", "0.5".
std::string arg_str(const Arg& a);

/// A call's arguments as its op takes them, each value looked up.
std::vector<OpArg> op_args(const Call& c, const std::function<const Tensor&(int id)>& value);

/// EMBER_COMPILE_DEBUG as a number (0 when unset): 1 prints each graph
/// captured and the one that runs, 2 also the graph before and after each
/// pass, 3 also each generated kernel's C++.
int debug_level();

}  // namespace ember::compiler
