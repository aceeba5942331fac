#include "compile/fusion.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "autograd/grad_mode.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "compile/codegen.h"
#include "compile/op_table.h"
#include "compile/toolchain.h"
#include "base/hooks.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ember::compiler {

namespace {

int64_t count(const Shape& s, size_t from = 0) {
  int64_t n = 1;
  for (size_t i = from; i < s.size(); ++i) n *= s[i];
  return n;
}

// How a kernel of output shape `out` reads an input of shape s (broadcast to out).
std::pair<Reads, int64_t> how_read(const Shape& s, const Shape& out) {
  if (s == out) return {Reads::Whole, 0};
  if (count(s) == 1) return {Reads::One, 0};
  size_t first = 0;  // s without its leading 1s ...
  while (first < s.size() && s[first] == 1) ++first;
  const size_t core = s.size() - first;
  if (core <= out.size() && std::equal(s.begin() + static_cast<std::ptrdiff_t>(first), s.end(),
                                       out.end() - static_cast<std::ptrdiff_t>(core)))
    return {Reads::Rows, count(s, first)};  // ... is out's trailing dims: x[j % size]
  size_t last = s.size();  // s's dims up to its trailing 1s ...
  while (last > 0 && s[last - 1] == 1) --last;
  if (s.size() == out.size() && std::equal(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(last), out.begin()))
    return {Reads::Columns, count(out, last)};  // ... are out's leading dims: x[j / stride]
  return {Reads::Copied, 0};
}

struct Group {
  std::vector<Call> members;
  std::set<int> values;  // the members' results
  Shape shape;
  DType dtype = DType::Float32;
  std::optional<FusedSum> sum;
};

// c as the sum that ends the open group: a sum (or sum_to) of one of its
// values over its trailing dims (rows) or over its leading dims (columns),
// the two orders eager's sum adds in; nullopt for anything else.
std::optional<FusedSum> sum_tail(const Call& c, const Group& grp, const Graph& g) {
  if ((c.op != "sum" && c.op != "sum_to") || c.results.size() != 1 || c.args.empty()) return std::nullopt;
  const auto* x = std::get_if<ValueRef>(&c.args[0]);
  if (!x || !grp.values.count(x->id)) return std::nullopt;
  const Shape& s = grp.shape;
  const int64_t n = static_cast<int64_t>(s.size());
  std::vector<bool> reduced(s.size(), false);
  if (c.op == "sum" && c.args.size() == 3 && std::holds_alternative<Shape>(c.args[1])) {
    const Shape& dims = std::get<Shape>(c.args[1]);
    if (dims.empty()) reduced.assign(s.size(), true);  // every element
    for (int64_t d : dims) {
      if (d < -n || d >= n) return std::nullopt;  // the op's own error, eagerly
      reduced[static_cast<size_t>(d < 0 ? d + n : d)] = true;
    }
  } else if (c.op == "sum_to" && c.args.size() == 2 && std::holds_alternative<Shape>(c.args[1])) {
    const Shape& to = std::get<Shape>(c.args[1]);  // the dims broadcasting added or stretched
    const int64_t lead = n - static_cast<int64_t>(to.size());
    if (lead < 0) return std::nullopt;
    for (int64_t d = 0; d < n; ++d)
      reduced[static_cast<size_t>(d)] = d < lead || (to[static_cast<size_t>(d - lead)] == 1 && s[static_cast<size_t>(d)] != 1);
  } else {
    return std::nullopt;
  }
  if (count(s) == 0 || s.empty()) return std::nullopt;
  int64_t lead = 0, trail = 0;  // the reduced dims at the front, and at the back
  while (lead < n && reduced[static_cast<size_t>(lead)]) ++lead;
  while (trail < n && reduced[static_cast<size_t>(n - 1 - trail)]) ++trail;
  int64_t all = 0;
  for (bool r : reduced) all += r;
  FusedSum f;
  f.value = x->id;
  f.result = c.results[0];
  f.shape = g.values[static_cast<size_t>(f.result)].shape;
  if (all == lead && lead > 0 && lead < n) {  // eager's column sweep: the leading dims
    f.over = SumOver::Columns;
    f.outer = count(Shape(s.begin(), s.begin() + lead));
    f.inner = count(s, static_cast<size_t>(lead));
    return f;
  }
  if (all == trail && trail > 0) {  // eager's rows: the trailing dims, or all
    f.over = SumOver::Rows;
    f.inner = count(s, static_cast<size_t>(n - trail));
    f.outer = count(s) / f.inner;
    if (f.outer == 1 && f.inner > 2 * 8192) return std::nullopt;  // eager adds a long row in blocks
    return f;
  }
  return std::nullopt;
}

Call fused_call(Group&& grp, const Graph& g) {
  auto f = std::make_shared<Fused>();
  f->shape = grp.shape;
  f->dtype = grp.dtype;
  std::string ops;
  for (const Call& m : grp.members) {
    for (int id : Graph::reads(m))
      if (!grp.values.count(id) && std::find(f->inputs.begin(), f->inputs.end(), id) == f->inputs.end())
        f->inputs.push_back(id);
    ops += (ops.empty() ? "" : ",") + m.op;
  }
  for (int id : f->inputs) {
    const auto [reads, size] = how_read(g.values[static_cast<size_t>(id)].shape, f->shape);
    f->reads.push_back(reads);
    f->read_sizes.push_back(size);
  }
  f->sum = grp.sum;
  f->name = "fused[" + ops + "]";
  f->members = std::move(grp.members);
  Call c;
  c.op = "fused";
  c.module = f->members.front().module;
  for (int id : f->inputs) c.args.push_back(ValueRef{id});
  c.fused = std::move(f);
  return c;
}

}  // namespace

int fuse_elementwise(Graph& g) {
  std::vector<Call> out;
  std::optional<Group> open;
  int made = 0;
  auto close = [&] {
    if (!open) return;
    if (open->members.size() == 1) {
      out.push_back(std::move(open->members.front()));
    } else {
      out.push_back(fused_call(std::move(*open), g));
      ++made;
    }
    open.reset();
  };
  for (Call& c : g.calls) {
    if (open)
      if (std::optional<FusedSum> tail = sum_tail(c, *open, g)) {  // a sum ends the group
        open->sum = tail;
        open->members.push_back(std::move(c));
        close();
        continue;
      }
    const bool f = fusible(c, g);
    const Value* v = c.results.empty() ? nullptr : &g.values[static_cast<size_t>(c.results[0])];
    if (f && open && open->shape == v->shape && open->dtype == v->dtype) {
      open->values.insert(c.results[0]);
      open->members.push_back(std::move(c));
      continue;
    }
    bool reads_open = false;
    for (int id : Graph::reads(c)) reads_open = reads_open || (open && open->values.count(id));
    if (f || reads_open) close();
    if (f) {
      open = Group{{}, {c.results[0]}, v->shape, v->dtype};
      open->members.push_back(std::move(c));
      continue;
    }
    out.push_back(std::move(c));
  }
  close();
  // Each group writes the values read after it, or returned.
  std::set<int> read(g.outputs.begin(), g.outputs.end());
  for (const Call& c : out)
    for (int id : Graph::reads(c)) read.insert(id);
  for (Call& c : out)
    if (c.fused)
      for (const Call& m : c.fused->members)
        if (read.count(m.results[0])) c.results.push_back(m.results[0]);
  g.calls = std::move(out);
  return made;
}

void prepare_kernels(Graph& g) {
  for (Call& c : g.calls) {
    if (!c.fused || c.fused->fn) continue;
    auto f = std::make_shared<Fused>(*c.fused);
    f->source = generate(*f, c.results, g);
    if (debug_level() >= 3) std::cerr << "-- kernel " << f->name << ":\n" << f->source;
    const LoadedKernel k = load_kernel(f->source);
    f->fn = k.fn;
    f->file = k.file;
    c.fused = std::move(f);
  }
}

namespace {

// eager's block functions, by kernel::Unary, for one dtype: the kernel's `blocks`
const void* const* block_table(DType dt) {
  static const auto make = [](DType d) {
    std::vector<const void*> t;
    for (int op = 0; op < static_cast<int>(kernel::Unary::Count); ++op)
      t.push_back(reinterpret_cast<const void*>(kernel::unary_block(static_cast<kernel::Unary>(op), d)));
    return t;
  };
  static const std::vector<const void*> f32 = make(DType::Float32), f64 = make(DType::Float64);
  return dt == DType::Float32 ? f32.data() : f64.data();
}

}  // namespace

std::vector<Tensor> run_fused(const Fused& f, const std::vector<Tensor>& inputs, const std::vector<int>& results) {
  OpScope scope(f.name.c_str(), inputs);  // the instruments see one op, named by the ops it holds
  bool records = false;
  for (const Tensor& x : inputs) records = records || (is_grad_enabled() && x.requires_grad());
  if (records || !f.fn) {  // the calls one by one: eager's ops, which autograd records
    std::map<int, Tensor> env;
    for (size_t k = 0; k < inputs.size(); ++k) env[f.inputs[k]] = inputs[k];
    auto value = [&](int id) -> const Tensor& { return env.at(id); };
    for (const Call& m : f.members) env[m.results[0]] = m.rule->call(op_args(m, value))[0];
    std::vector<Tensor> out;
    for (int id : results) out.push_back(env.at(id));
    return scope.out(out);
  }
  std::vector<Tensor> ins;
  std::vector<const void*> in_ptrs;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor x = inputs[k];
    if (f.reads[k] == Reads::Copied) x = kernel::contiguous(kernel::expand(x, f.shape));
    else if (!x.is_contiguous()) x = kernel::contiguous(x);
    ins.push_back(x);
    in_ptrs.push_back(x.raw_data());
  }
  std::vector<Tensor> outs;
  std::vector<void*> out_ptrs;
  double written = 0;
  for (int id : results) {
    outs.push_back(empty(f.sum && id == f.sum->result ? f.sum->shape : f.shape, f.dtype));
    out_ptrs.push_back(outs.back().raw_data());
    written += static_cast<double>(outs.back().numel());
  }
  const void* const* blocks = block_table(f.dtype);
  const int64_t n = count(f.shape);
  auto kernel = [&](int64_t b, int64_t e) { f.fn(in_ptrs.data(), out_ptrs.data(), blocks, b, e); };
  if (!f.sum)  // elements
    detail::parallel_for(n, detail::kGrain, kernel);
  else if (f.sum->over == SumOver::Rows)  // whole rows
    detail::parallel_for(f.sum->outer, std::max<int64_t>(1, detail::kGrain / f.sum->inner), kernel);
  else  // whole columns
    detail::parallel_for(f.sum->inner, std::max<int64_t>(64, detail::kGrain / f.sum->outer), kernel);
  // The profiler's work: one operation per call and element; the inputs
  // read once, the outputs written once (what fusion is for).
  double read = 0;
  for (const Tensor& x : inputs) read += static_cast<double>(x.numel());
  const double item = static_cast<double>(dtype_size(f.dtype));
  note_work(static_cast<double>(f.members.size() * static_cast<size_t>(n)), read * item, written * item);
  return scope.out(outs);
}

}  // namespace ember::compiler
