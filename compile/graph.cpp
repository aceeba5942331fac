#include "compile/graph.h"

#include <cstdlib>
#include <sstream>

#include "base/parse.h"

#include "compile/op_table.h"
#include "tensor/shape.h"

namespace ember::compiler {

int Graph::add_value(const Shape& shape, DType dtype, Origin origin) {
  values.push_back(Value{shape, dtype, origin});
  return static_cast<int>(values.size()) - 1;
}

std::vector<int> Graph::reads(const Call& call) {
  std::vector<int> ids;
  for (const Arg& a : call.args) {
    if (const auto* v = std::get_if<ValueRef>(&a)) ids.push_back(v->id);
    if (const auto* l = std::get_if<ValueList>(&a)) ids.insert(ids.end(), l->ids.begin(), l->ids.end());
  }
  return ids;
}

namespace {

const char* short_name(DType t) {
  switch (t) {
    case DType::Float32: return "f32";
    case DType::Float64: return "f64";
    case DType::Int64: return "i64";
    case DType::Bool: return "bool";
    case DType::BFloat16: return "bf16";
    case DType::Int8: return "i8";
  }
  return "?";
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string dims_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

}  // namespace

std::string arg_str(const Arg& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, ValueRef>) return std::string(1, '%').append(std::to_string(v.id));
        else if constexpr (std::is_same_v<V, ValueList>) {
          std::string out = "[";
          for (size_t i = 0; i < v.ids.size(); ++i) {
            out += i ? ", %" : "%";
            out += std::to_string(v.ids[i]);
          }
          return out + "]";
        } else if constexpr (std::is_same_v<V, double>) return number(v);
        else if constexpr (std::is_same_v<V, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<V, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<V, Shape>) return dims_str(v);
        else if constexpr (std::is_same_v<V, DType>) return dtype_name(v);
        else if constexpr (std::is_same_v<V, std::optional<double>>) return v ? number(*v) : "none";
        else if constexpr (std::is_same_v<V, std::optional<int64_t>>) return v ? std::to_string(*v) : "none";
        else if constexpr (std::is_same_v<V, GeluApprox>) return v == GeluApprox::Tanh ? "tanh" : "none";
        else return v == Reduction::Mean ? "mean" : (v == Reduction::Sum ? "sum" : "none");
      },
      a);
}

namespace {
void print_call(std::ostream& os, const Call& c, const Graph& g, const std::string& indent) {
  os << indent;
  for (size_t i = 0; i < c.results.size(); ++i)
    os << (i ? ", " : "") << "%" << c.results[i] << ": " << type_str(g.values[static_cast<size_t>(c.results[i])]);
  os << " = " << c.op << "(";
  for (size_t i = 0; i < c.args.size(); ++i) {
    os << (i ? ", " : "");
    const bool is_value = std::holds_alternative<ValueRef>(c.args[i]) || std::holds_alternative<ValueList>(c.args[i]);
    if (!is_value && c.rule && i < c.rule->params.size()) os << c.rule->params[i] << "=";
    os << arg_str(c.args[i]);
  }
  os << ")";
  if (c.fused) {  // its calls, one kernel
    os << " {\n";
    for (const Call& m : c.fused->members) print_call(os, m, g, indent + "    ");
    os << indent << "}";
  }
  if (!c.module.empty()) os << "  # " << c.module;
  os << "\n";
}
}  // namespace

std::vector<OpArg> op_args(const Call& c, const std::function<const Tensor&(int id)>& value) {
  std::vector<OpArg> args;
  for (const Arg& a : c.args) {
    args.push_back(std::visit(
        [&](const auto& v) -> OpArg {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, ValueRef>) return value(v.id);
          else if constexpr (std::is_same_v<V, ValueList>) {
            std::vector<Tensor> ts;
            for (int id : v.ids) ts.push_back(value(id));
            return ts;
          } else return v;
        },
        a));
  }
  return args;
}

int debug_level() {
  const char* s = std::getenv("EMBER_COMPILE_DEBUG");
  if (!s || !*s) return 0;
  return static_cast<int>(parse_int64(s, "compile", "EMBER_COMPILE_DEBUG"));
}

std::string type_str(const Value& v) { return std::string(short_name(v.dtype)) + dims_str(v.shape); }

std::string to_string(const Graph& g) {
  std::ostringstream os;
  os << "graph(";
  for (size_t i = 0; i < g.inputs.size(); ++i)
    os << (i ? ", " : "") << "%" << g.inputs[i] << ": " << type_str(g.values[static_cast<size_t>(g.inputs[i])]);
  os << "):\n";
  for (const auto& [id, t] : g.constants) {
    (void)t;
    os << "  %" << id << ": " << type_str(g.values[static_cast<size_t>(id)]) << " = constant\n";
  }
  for (const Call& c : g.calls) print_call(os, c, g, "  ");
  os << "  return ";
  for (size_t i = 0; i < g.outputs.size(); ++i) os << (i ? ", " : "") << "%" << g.outputs[i];
  os << "\n";
  return os.str();
}

}  // namespace ember::compiler
