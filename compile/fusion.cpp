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
};

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
  for (size_t k = 0; k < results.size(); ++k) {
    outs.push_back(empty(f.shape, f.dtype));
    out_ptrs.push_back(outs.back().raw_data());
  }
  const void* const* blocks = block_table(f.dtype);
  const int64_t n = count(f.shape);
  detail::parallel_for(n, detail::kGrain,
                       [&](int64_t b, int64_t e) { f.fn(in_ptrs.data(), out_ptrs.data(), blocks, b, e); });
  // The profiler's work: one operation per call and element; the inputs
  // read once, the outputs written once (what fusion is for).
  double read = 0;
  for (const Tensor& x : inputs) read += static_cast<double>(x.numel());
  const double item = static_cast<double>(dtype_size(f.dtype));
  note_work(static_cast<double>(f.members.size() * static_cast<size_t>(n)), read * item,
            static_cast<double>(results.size()) * static_cast<double>(n) * item);
  return scope.out(outs);
}

}  // namespace ember::compiler
