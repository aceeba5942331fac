#include "compile/codegen.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "base/error.h"
#include "tensor/kernels.h"

namespace ember::compiler {

namespace {

using kernel::Unary;

// One call as the kernel computes it: a formula on its operands ($0, $1, in
// the order of its tensor arguments; S is its scalar, as T), or eager's block
// function for an op that goes a block at a time.
struct OpCode {
  std::string formula;              // "" for a block op
  std::optional<Unary> block;       // kernel::unary_block(*block, dtype)
  std::vector<int> operands;        // value ids
  std::optional<double> scalar;     // S
  std::optional<double> lo, hi;     // clamp's bounds
};

// The formulas of tensor/elementwise.cpp's kernels, on one number each.
const std::map<std::string, std::string>& unary_formulas() {
  static const std::map<std::string, std::string> f = {
      {"neg", "-$0"},
      {"log", "std::log($0)"},
      {"sqrt", "std::sqrt($0)"},
      {"rsqrt", "T(1) / std::sqrt($0)"},
      {"abs", "($0 < 0 ? -$0 : $0)"},
      {"sin", "std::sin($0)"},
      {"cos", "std::cos($0)"},
      {"relu", "($0 < 0 ? T(0) : $0)"},
      {"softplus", "(std::max($0, T(0)) + std::log1p(std::exp(-std::abs($0))))"},
  };
  return f;
}
const std::map<std::string, Unary>& unary_blocks() {
  static const std::map<std::string, Unary> b = {
      {"exp", Unary::Exp}, {"tanh", Unary::Tanh}, {"sigmoid", Unary::Sigmoid}, {"erf", Unary::Erf}};
  return b;
}
const std::map<std::string, std::string>& binary_formulas() {  // with a tensor or a scalar (S) second
  static const std::map<std::string, std::string> f = {
      {"add", "$0 + $1"},
      {"sub", "$0 - $1"},
      {"mul", "$0 * $1"},
      {"div", "$0 / $1"},
      {"pow", "static_cast<T>(std::pow($0, $1))"},
      {"maximum", "($0 > $1 || $0 != $0 ? $0 : $1)"},  // NaN propagates
      {"minimum", "($0 < $1 || $0 != $0 ? $0 : $1)"},
  };
  return f;
}

std::optional<int> value_at(const Call& c, size_t i) {
  if (i >= c.args.size()) return std::nullopt;
  if (const auto* v = std::get_if<ValueRef>(&c.args[i])) return v->id;
  return std::nullopt;
}
std::optional<double> double_at(const Call& c, size_t i) {
  if (i >= c.args.size()) return std::nullopt;
  if (const auto* d = std::get_if<double>(&c.args[i])) return *d;
  return std::nullopt;
}

std::optional<OpCode> op_code(const Call& c) {
  const size_t n = c.args.size();
  const auto a = value_at(c, 0), b = value_at(c, 1);
  OpCode code;
  if (n == 1 && a) {
    code.operands = {*a};
    if (auto f = unary_formulas().find(c.op); f != unary_formulas().end()) code.formula = f->second;
    else if (auto k = unary_blocks().find(c.op); k != unary_blocks().end()) code.block = k->second;
    else return std::nullopt;
    return code;
  }
  if (c.op == "gelu" && n == 2 && a) {
    code.operands = {*a};
    code.block = std::get<GeluApprox>(c.args[1]) == GeluApprox::Tanh ? Unary::GeluTanh : Unary::Gelu;
    return code;
  }
  if (c.op == "clamp" && n == 3 && a) {
    code.operands = {*a};
    code.lo = std::get<std::optional<double>>(c.args[1]);
    code.hi = std::get<std::optional<double>>(c.args[2]);
    code.formula = "($0 < L ? L : ($0 > H ? H : $0))";
    return code;
  }
  if (n != 2) return std::nullopt;
  auto f = binary_formulas().find(c.op);
  if (f != binary_formulas().end() && a && b) {  // two tensors
    code.operands = {*a, *b};
    code.formula = f->second;
    return code;
  }
  if (f != binary_formulas().end() && a && double_at(c, 1) && c.op != "maximum" && c.op != "minimum") {
    code.operands = {*a};  // x op S
    code.scalar = double_at(c, 1);
    code.formula = f->second;
    code.formula.replace(code.formula.find("$1"), 2, "S");
    return code;
  }
  if ((c.op == "rsub" || c.op == "rdiv") && double_at(c, 0) && b) {  // S op x
    code.operands = {*b};
    code.scalar = double_at(c, 0);
    code.formula = c.op == "rsub" ? "S - $0" : "S / $0";
    return code;
  }
  return std::nullopt;
}

// The exact T value of `v` as C++: static_cast<T>(v), written so that the
// compiler reads back the same bits.
std::string literal(double v, DType dt) {
  char buf[64];
  if (dt == DType::Float32) {
    const float f = static_cast<float>(v);
    if (std::isfinite(f)) {
      std::snprintf(buf, sizeof buf, "%af", static_cast<double>(f));
    } else {
      std::snprintf(buf, sizeof buf, "__builtin_bit_cast(float, 0x%08xu)", std::bit_cast<uint32_t>(f));
    }
    return buf;
  }
  if (std::isfinite(v)) {
    std::snprintf(buf, sizeof buf, "%a", v);
  } else {
    std::snprintf(buf, sizeof buf, "__builtin_bit_cast(double, 0x%016llxull)",
                  static_cast<unsigned long long>(std::bit_cast<uint64_t>(v)));
  }
  return buf;
}

// Each line two spaces deeper (a pragma stays where it is).
std::string indented(const std::string& code) {
  std::string out;
  size_t at = 0;
  while (at < code.size()) {
    const size_t end = code.find('\n', at);
    const std::string line = code.substr(at, end == std::string::npos ? std::string::npos : end - at + 1);
    if (line[0] != '#') out.append("  ");
    out.append(line);
    at = end == std::string::npos ? code.size() : end + 1;
  }
  return out;
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

bool fusible(const Call& c, const Graph& g) {
  if (c.fused || c.results.size() != 1) return false;
  const std::optional<OpCode> code = op_code(c);
  if (!code) return false;
  const Value& out = g.values[static_cast<size_t>(c.results[0])];
  if (out.dtype != DType::Float32 && out.dtype != DType::Float64) return false;
  for (int id : code->operands)
    if (g.values[static_cast<size_t>(id)].dtype != out.dtype) return false;
  return true;
}

namespace {

// Writes the kernel's body, one block of at most 512 elements at a time.
class Writer {
 public:
  Writer(const Fused& f, const std::vector<int>& outputs, const Graph& g) : f_(f), outputs_(outputs), g_(g) {}

  std::string source() {
    const char* t = f_.dtype == DType::Float32 ? "float" : "double";
    os_ << "// ember fused kernel: " << f_.name << " over " << type_str(Value{f_.shape, f_.dtype}) << "\n"
        << "// generated by compile/codegen.cpp; each loop names the call it computes\n"
        << "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <limits>\n\n"
        << "using T = " << t << ";\nusing Block = void (*)(const void*, void*, int64_t);\n\n"
        << "extern \"C\" void ember_kernel(const void* const* in, void* const* out, const void* const* blocks,\n"
        << "                             int64_t begin, int64_t end) {\n";
    for (size_t k = 0; k < f_.inputs.size(); ++k)
      os_ << "  const T* __restrict in" << k << " = static_cast<const T*>(in[" << k << "]);  // %" << f_.inputs[k]
          << "\n";
    for (size_t k = 0; k < outputs_.size(); ++k)
      os_ << "  T* __restrict out" << k << " = static_cast<T*>(out[" << k << "]);  // %" << outputs_[k] << "\n";
    plan();
    os_ << "  alignas(64) T b[" << std::max(slots_, 1) << "][512];  // the block's values, in L1\n";
    if (!f_.sum) {  // begin, end: elements
      os_ << "  for (int64_t j0 = begin; j0 < end; j0 += 512) {\n"
          << "    const int64_t m = std::min<int64_t>(512, end - j0);\n"
          << loops_.str() << "  }\n}\n";
      return os_.str();
    }
    const FusedSum& sum = *f_.sum;
    const std::string inner = std::to_string(sum.inner), outer = std::to_string(sum.outer);
    const std::string slot = "b[" + std::to_string(slot_.at(sum.value)) + "]", v = slot + "[t]";
    const std::string out = "out" + output_of(sum.result);
    if (sum.over == SumOver::Rows) {  // begin, end: rows; each row's sum as eager's row_sum adds it
      os_ << "  for (int64_t r = begin; r < end; ++r) {  // %" << sum.result << " = the sum of row r of %" << sum.value
          << "\n"
          << "    double acc[8] = {};  // element i of the row into acc[i % 8], in order (512 is a multiple of 8)\n"
          << "    for (int64_t j0 = r * " << inner << "; j0 < (r + 1) * " << inner << "; j0 += 512) {\n"
          << "      const int64_t m = std::min<int64_t>(512, (r + 1) * " << inner << " - j0);\n"
          << indented(loops_.str()) << "      int64_t t = 0;\n"
          << "      for (; t + 8 <= m; t += 8)\n"
          << "        for (int64_t i = 0; i < 8; ++i) acc[i] += static_cast<double>(" << slot << "[t + i]);\n"
          << "      for (int64_t i = 0; t + i < m; ++i) acc[i] += static_cast<double>(" << slot << "[t + i]);\n"
          << "    }\n"
          << "    " << out << "[r] = static_cast<T>(((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + "
          << "(acc[6] + acc[7])));\n  }\n}\n";
      return os_.str();
    }
    // begin, end: columns; each column's sum over the rows in order, as eager's column sweep adds it
    os_ << "  double acc[512];\n"
        << "  for (int64_t c0 = begin; c0 < end; c0 += 512) {  // %" << sum.result << " = the column sums of %"
        << sum.value << "\n"
        << "    const int64_t m = std::min<int64_t>(512, end - c0);\n"
        << "    std::fill(acc, acc + m, 0.0);\n"
        << "    for (int64_t k = 0; k < " << outer << "; ++k) {\n"
        << "      const int64_t j0 = k * " << inner << " + c0;\n"
        << indented(loops_.str()) << "      for (int64_t t = 0; t < m; ++t) acc[t] += static_cast<double>(" << v << ");\n"
        << "    }\n"
        << "    for (int64_t t = 0; t < m; ++t) " << out << "[c0 + t] = static_cast<T>(acc[t]);\n  }\n}\n";
    return os_.str();
  }

 private:
  // The expression of value `id` at element t of the block.
  std::string at(int id) const {
    auto s = slot_.find(id);
    if (s != slot_.end()) return "b[" + std::to_string(s->second) + "][t]";
    const size_t k = input_index(id);
    return f_.reads[k] == Reads::One ? "in" + std::to_string(k) + "[0]" : "in" + std::to_string(k) + "[j0 + t]";
  }
  std::string output_of(int id) const {
    for (size_t k = 0; k < outputs_.size(); ++k)
      if (outputs_[k] == id) return std::to_string(k);
    EMBER_FAIL("compile", "internal: %" << id << " is not an output of the fused kernel");
  }
  size_t input_index(int id) const {
    for (size_t k = 0; k < f_.inputs.size(); ++k)
      if (f_.inputs[k] == id) return k;
    EMBER_FAIL("compile", "internal: %" << id << " is neither an input nor a value of the fused kernel");
  }
  int take_slot() {
    if (!free_.empty()) {
      const int s = free_.back();
      free_.pop_back();
      return s;
    }
    return slots_++;
  }
  void release_dead(size_t member, const std::vector<int>& reads) {
    for (int id : reads)
      if (last_.at(id) == member && slot_.count(id)) {
        free_.push_back(slot_.at(id));
        slot_.erase(id);
      }
  }

  void plan() {
    std::map<int, size_t> last;  // each value's last reader in the group
    std::vector<OpCode> codes;
    const size_t elementwise = f_.members.size() - (f_.sum ? 1 : 0);  // a sum is the last member
    for (size_t i = 0; i < elementwise; ++i) {
      codes.push_back(*op_code(f_.members[i]));
      for (int id : codes.back().operands) last[id] = i;
    }
    if (f_.sum) last[f_.sum->value] = elementwise;  // read after the block's loops: kept in a slot
    last_ = last;
    // The inputs read through an index other than j, gathered into a slot
    // first, run by run: rows are copied (element j is x[j % size]), columns
    // filled (element j is x[j / size]); one division a block, not one an element.
    for (size_t k = 0; k < f_.inputs.size(); ++k) {
      if (f_.reads[k] != Reads::Rows && f_.reads[k] != Reads::Columns) continue;
      const int s = take_slot();
      slot_[f_.inputs[k]] = s;
      const std::string size = std::to_string(f_.read_sizes[k]), in = "in" + std::to_string(k);
      const std::string dst = "b[" + std::to_string(s) + "]";
      loops_ << "    for (int64_t t = 0, r = j0 % " << size << ", q = j0 / " << size << "; t < m; r = 0, ++q) {  // %"
             << f_.inputs[k] << (f_.reads[k] == Reads::Rows ? ", its rows\n" : ", its columns\n")
             << "      const int64_t n = std::min<int64_t>(m - t, " << size << " - r);\n";
      if (f_.reads[k] == Reads::Rows)
        loops_ << "      std::copy(" << in << " + r, " << in << " + r + n, " << dst << " + t);\n";
      else
        loops_ << "      std::fill(" << dst << " + t, " << dst << " + t + n, " << in << "[q]);\n";
      loops_ << "      t += n;\n    }\n";
    }
    std::vector<size_t> run;
    for (size_t i = 0; i < elementwise; ++i) {
      if (!codes[i].block) {
        run.push_back(i);
        continue;
      }
      formulas(run, codes);
      run.clear();
      block_op(i, codes[i]);
    }
    formulas(run, codes);
  }

  // A formula with its operands and constants written in: e.g. "v2 * 0x1p-1f".
  std::string expression(const Call& c, const OpCode& code, const std::vector<std::string>& operands) const {
    std::string e = code.formula;
    for (size_t k = 0; k < operands.size(); ++k) e = replaced(e, k == 0 ? "$0" : "$1", operands[k]);
    if (code.scalar) e = replaced(e, "S", literal(*code.scalar, f_.dtype));
    if (c.op == "clamp") {
      e = replaced(e, "L", code.lo ? literal(*code.lo, f_.dtype) : "std::numeric_limits<T>::lowest()");
      e = replaced(e, "H", code.hi ? literal(*code.hi, f_.dtype) : "std::numeric_limits<T>::max()");
    }
    return e;
  }
  void write_outputs(int id, const std::string& value, const char* indent) {
    for (size_t k = 0; k < outputs_.size(); ++k)
      if (outputs_[k] == id) loops_ << indent << "out" << k << "[j0 + t] = " << value << ";\n";
  }

  // A run of formulas between two block ops: one loop, each value a local
  // of the loop body (a register); only what is read after the run is
  // stored, into a slot, and only the kernel's outputs go to memory.
  void formulas(const std::vector<size_t>& run, const std::vector<OpCode>& codes) {
    if (run.empty()) return;
    // The kernel's arrays never overlap (its outputs are new): said, the
    // compiler vectorises the loop without checking every pair of them at
    // run time (past about ten pointers GCC gives up and runs it scalar).
    loops_ << "#pragma GCC ivdep\n    for (int64_t t = 0; t < m; ++t) {\n";
    std::set<int> locals;
    for (size_t i : run) {
      const Call& c = f_.members[i];
      const int id = c.results[0];
      std::vector<std::string> operands;
      for (int v : codes[i].operands) operands.push_back(locals.count(v) ? "v" + std::to_string(v) : at(v));
      loops_ << "      const T v" << id << " = " << expression(c, codes[i], operands) << ";  // %" << id << " = " << c.op
             << "\n";
      locals.insert(id);
      // The slots read here for the last time are free for what this loop
      // stores from now on: each element is read before it is written.
      release_dead(i, codes[i].operands);
      if (last_.count(id) && last_.at(id) > run.back()) {
        const int s = take_slot();
        slot_[id] = s;
        loops_ << "      b[" << s << "][t] = v" << id << ";\n";
      }
      write_outputs(id, "v" + std::to_string(id), "      ");
    }
    loops_ << "    }\n";
  }

  // An op eager computes a block at a time: its block function, on an array.
  void block_op(size_t i, const OpCode& code) {
    const Call& c = f_.members[i];
    const int id = c.results[0], src = code.operands[0];
    std::string from;  // a slot, or a whole input in place
    if (auto in = slot_.find(src); in != slot_.end()) from = "b[" + std::to_string(in->second) + "]";
    else if (f_.reads[input_index(src)] != Reads::One) from = "in" + std::to_string(input_index(src)) + " + j0";
    const std::string one = from.empty() ? at(src) : "";
    // An output no later member reads goes straight to memory.
    int out = -1;
    for (size_t k = 0; k < outputs_.size(); ++k)
      if (outputs_[k] == id && !last_.count(id)) out = static_cast<int>(k);
    if (out >= 0 && !from.empty()) {
      loops_ << "    reinterpret_cast<Block>(blocks[" << static_cast<int>(*code.block) << "])(" << from << ", out" << out
             << " + j0, m);  // %" << id << " = " << c.op << "\n";
      release_dead(i, code.operands);
      return;
    }
    // A block function may read its input after writing some of its
    // output: never in place, so the result takes a slot before the input's is freed.
    const int s = take_slot();
    release_dead(i, code.operands);
    slot_[id] = s;
    const std::string dst = "b[" + std::to_string(s) + "]";
    if (from.empty()) {  // one element, broadcast: spread it over the block first
      loops_ << "    for (int64_t t = 0; t < m; ++t) " << dst << "[t] = " << one << ";\n";
      from = dst;
    }
    loops_ << "    reinterpret_cast<Block>(blocks[" << static_cast<int>(*code.block) << "])(" << from << ", " << dst
           << ", m);  // %" << id << " = " << c.op << "\n";
    for (size_t k = 0; k < outputs_.size(); ++k)
      if (outputs_[k] == id) loops_ << "    std::copy(" << dst << ", " << dst << " + m, out" << k << " + j0);\n";
    if (!last_.count(id)) {  // read by no later member: its slot is free again
      free_.push_back(s);
      slot_.erase(id);
    }
  }

  const Fused& f_;
  const std::vector<int>& outputs_;
  const Graph& g_;
  std::ostringstream os_, loops_;
  std::map<int, int> slot_;  // value -> slot of b
  std::map<int, size_t> last_;
  std::vector<int> free_;
  int slots_ = 0;
};

}  // namespace

std::string generate(const Fused& f, const std::vector<int>& outputs, const Graph& g) {
  return Writer(f, outputs, g).source();
}

}  // namespace ember::compiler
