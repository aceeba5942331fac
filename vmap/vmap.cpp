#include "vmap/vmap.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "autograd/batching.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "compile/capture.h"
#include "compile/op_table.h"
#include "compile/passes.h"
#include "compile/run.h"
#include "tensor/factory.h"
#include "tensor/shape.h"

namespace ember {

namespace {

thread_local batching_stats::Counts counts;

using batching::movedim;

// A value while the graph runs on the batch: batched ones have it as dim 0.
struct Slot {
  Tensor value;
  bool batched = false;
};

void warn_loop(const std::string& op, bool has_rule) {
  static std::mutex m;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(m);
  if (!warned.insert(op).second) return;
  std::fprintf(stderr,
               "ember warning: vmap runs op %s once per sample (%s): the same values as a batched op, "
               "slower. (printed once per op)\n",
               op.c_str(), has_rule ? "its batching rule does not cover these arguments" : "it has no batching rule");
}

// The op once per sample, each result stacked along a new dim 0.
batching::Result loop(const batching::Call& c, const std::vector<DType>& dtypes) {
  std::vector<std::vector<Tensor>> per_result(c.sample_shapes.size());
  for (int64_t b = 0; b < c.size; ++b) {
    std::vector<OpArg> args = c.args;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!c.batched[i]) continue;
      if (auto* t = std::get_if<Tensor>(&args[i])) {
        *t = t->select(0, b);
      } else if (auto* ts = std::get_if<std::vector<Tensor>>(&args[i])) {
        for (Tensor& e : *ts) e = e.select(0, b);
      }
    }
    std::vector<Tensor> r = c.run(args);
    for (size_t k = 0; k < r.size(); ++k) per_result[k].push_back(std::move(r[k]));
  }
  std::vector<Tensor> out;
  for (size_t k = 0; k < per_result.size(); ++k)
    out.push_back(c.size ? stack(per_result[k], 0) : zeros(batching::with_batch(c.sample_shapes[k], 0), dtypes[k]));
  return batching::batched(std::move(out));
}

// One call of the graph on the batch.
std::vector<Slot> run_call(const compiler::Graph& g, const compiler::Call& call, const std::vector<Slot>& env,
                           int64_t size) {
  const auto value = [&](int id) -> const Tensor& { return env[static_cast<size_t>(id)].value; };
  batching::Call c;
  c.op = call.op;
  c.args = compiler::op_args(call, value);
  c.size = size;
  bool any = false;
  for (const compiler::Arg& a : call.args) {
    bool b = false;
    if (const auto* ref = std::get_if<compiler::ValueRef>(&a)) b = env[static_cast<size_t>(ref->id)].batched;
    if (const auto* list = std::get_if<compiler::ValueList>(&a))
      for (int id : list->ids) b = b || env[static_cast<size_t>(id)].batched;
    c.batched.push_back(b);
    any = any || b;
  }
  std::vector<Slot> out(call.results.size());
  if (!any) {  // the same for every sample: once
    ++counts.unbatched;
    std::vector<Tensor> r = call.rule->call(c.args);
    for (size_t k = 0; k < r.size(); ++k) out[k] = {std::move(r[k]), false};
    return out;
  }
  // a list with some batched tensors: all of them get the batch
  for (size_t i = 0; i < c.args.size(); ++i) {
    auto* ts = std::get_if<std::vector<Tensor>>(&c.args[i]);
    if (!ts || !c.batched[i]) continue;
    const auto& ids = std::get<compiler::ValueList>(call.args[i]).ids;
    for (size_t e = 0; e < ts->size(); ++e)
      (*ts)[e] = batching::with_batch((*ts)[e], env[static_cast<size_t>(ids[e])].batched, size);
  }
  std::vector<DType> dtypes;
  for (int id : call.results) {
    c.sample_shapes.push_back(g.values[static_cast<size_t>(id)].shape);
    dtypes.push_back(g.values[static_cast<size_t>(id)].dtype);
  }
  c.op_fn = &call.rule->call;
  const batching::Rule rule = batching::find_rule(call.op);
  batching::Result r = rule ? rule(c) : batching::Result{};
  if (r.values.empty()) {
    warn_loop(call.op, rule != nullptr);
    ++counts.looped;
    r = loop(c, dtypes);
  } else {
    ++counts.by_rule;
  }
  EMBER_CHECK(r.values.size() == out.size(), "vmap",
              "the batching rule of " << call.op << " gave " << r.values.size() << " results for " << out.size());
  for (size_t k = 0; k < out.size(); ++k) {
    const Shape want = r.batched[k] ? batching::with_batch(c.sample_shapes[k], size) : c.sample_shapes[k];
    EMBER_CHECK(r.values[k].shape() == want && r.values[k].dtype() == dtypes[k], "vmap",
                "the batching rule of " << call.op << " gave result " << k << " of shape "
                                        << shape_str(r.values[k].shape()) << ", not " << shape_str(want));
    out[k] = {std::move(r.values[k]), r.batched[k]};
  }
  return out;
}

struct Checked {
  std::vector<std::optional<int64_t>> in_dims;  // wrapped
  int64_t size = 0;
};

Checked check_inputs(const std::vector<Tensor>& inputs, const VmapOptions& o) {
  Checked c;
  c.in_dims = o.in_dims.empty() ? std::vector<std::optional<int64_t>>(inputs.size(), int64_t{0}) : o.in_dims;
  EMBER_CHECK(c.in_dims.size() == inputs.size(), "vmap",
              "in_dims has " << c.in_dims.size() << " entries for " << inputs.size() << " inputs");
  int first = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(inputs[i].defined(), "vmap", "input " << i << " is an undefined tensor");
    if (!c.in_dims[i]) continue;
    const int64_t n = inputs[i].dim();
    const int64_t d = *c.in_dims[i];
    EMBER_CHECK(d >= -n && d < n, "vmap",
                "in_dims[" << i << "] = " << d << " is not a dim of input " << i << " of shape "
                           << shape_str(inputs[i].shape()) << " (a 0-d input cannot be mapped over)");
    c.in_dims[i] = d < 0 ? d + n : d;
    const int64_t b = inputs[i].size(*c.in_dims[i]);
    if (first < 0) {
      first = static_cast<int>(i);
      c.size = b;
    }
    EMBER_CHECK(b == c.size, "vmap",
                "the mapped inputs have different batch sizes: input " << first << " of shape "
                    << shape_str(inputs[static_cast<size_t>(first)].shape()) << " has " << c.size
                    << " along dim " << *c.in_dims[static_cast<size_t>(first)] << ", input " << i << " of shape "
                    << shape_str(inputs[i].shape()) << " has " << b << " along dim " << *c.in_dims[i]);
  }
  EMBER_CHECK(first >= 0, "vmap", "no input is mapped (every in_dims entry is not_mapped): there is no batch");
  return c;
}

// The results, each with its batch moved to its out_dim.
std::vector<Tensor> place_outputs(std::vector<Slot> outs, const VmapOptions& o, int64_t size) {
  EMBER_CHECK(o.out_dims.empty() || o.out_dims.size() == outs.size(), "vmap",
              "out_dims has " << o.out_dims.size() << " entries for " << outs.size() << " outputs");
  std::vector<Tensor> result;
  for (size_t k = 0; k < outs.size(); ++k) {
    Tensor t = outs[k].value;
    if (!outs[k].batched) t = batching::with_batch(t, false, size).contiguous();  // every sample's: repeated
    const int64_t n = t.dim();
    int64_t d = o.out_dims.empty() ? 0 : o.out_dims[k];
    EMBER_CHECK(d >= -n && d < n, "vmap",
                "out_dims[" << k << "] = " << d << " is not a dim of output " << k << ", which has shape "
                            << shape_str(t.shape()) << " with the batch");
    result.push_back(movedim(t, 0, d < 0 ? d + n : d));
  }
  return result;
}

// Randomness::Different: f once per sample, each drawing its own numbers.
std::vector<Tensor> per_sample(const BatchFn& f, const std::vector<Tensor>& moved, const Checked& c) {
  EMBER_CHECK(c.size > 0, "vmap", "Randomness::Different runs f once per sample, and the batch is empty");
  std::vector<std::vector<Tensor>> runs;
  for (int64_t b = 0; b < c.size; ++b) {
    std::vector<Tensor> in = moved;
    for (size_t i = 0; i < in.size(); ++i)
      if (c.in_dims[i]) in[i] = in[i].select(0, b);
    runs.push_back(f(in));
  }
  std::vector<Tensor> out;
  for (size_t k = 0; k < runs[0].size(); ++k) {
    std::vector<Tensor> column;
    for (const auto& r : runs) column.push_back(r.at(k));
    out.push_back(stack(column, 0));
  }
  return out;
}

std::vector<Tensor> run_vmap(const BatchFn& f, const std::vector<Tensor>& inputs, const VmapOptions& o) {
  const Checked c = check_inputs(inputs, o);
  counts = {};
  std::vector<Tensor> moved, probe;  // the batch in front; and one sample to capture f on
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!c.in_dims[i]) {
      moved.push_back(inputs[i]);
      probe.push_back(inputs[i]);
      continue;
    }
    moved.push_back(movedim(inputs[i], *c.in_dims[i], 0));
    Shape sample(moved.back().shape().begin() + 1, moved.back().shape().end());
    probe.push_back(c.size ? moved.back().select(0, 0) : zeros(sample, inputs[i].dtype()));
  }
  if (o.randomness == Randomness::Different) {
    std::vector<Slot> outs;
    for (Tensor& t : per_sample(f, moved, c)) outs.push_back({std::move(t), true});
    return place_outputs(std::move(outs), o, c.size);
  }
  compiler::CaptureOptions capture_options;
  capture_options.draws_are_constants = o.randomness == Randomness::Same;
  capture_options.transform = "vmap";
  compiler::Capture cap = compiler::capture(f, probe, capture_options);
  compiler::dead_code(cap.graph);  // fewer calls to batch, the same values
  compiler::identities(cap.graph);
  const compiler::Graph& g = cap.graph;

  std::optional<NoGradGuard> no_grad;  // grad() inside: values, as compile's graphs give
  if (g.backward) no_grad.emplace();
  std::vector<Slot> env(g.values.size());
  for (size_t i = 0; i < g.inputs.size(); ++i)
    env[static_cast<size_t>(g.inputs[i])] = {moved[i], c.in_dims[i].has_value()};
  for (const auto& [id, t] : g.constants) env[static_cast<size_t>(id)] = {t, false};
  const std::vector<int> last = compiler::last_uses(g);
  for (size_t i = 0; i < g.calls.size(); ++i) {
    const compiler::Call& call = g.calls[i];
    std::vector<Slot> r = run_call(g, call, env, c.size);
    for (size_t k = 0; k < r.size(); ++k) env[static_cast<size_t>(call.results[k])] = std::move(r[k]);
    for (int id : compiler::Graph::reads(call))  // let go of what no later call reads, as compile's run does
      if (last[static_cast<size_t>(id)] == static_cast<int>(i)) env[static_cast<size_t>(id)] = Slot{};
  }
  std::vector<Slot> outs;
  for (int id : g.outputs) {
    outs.push_back(env[static_cast<size_t>(id)]);
  }
  return place_outputs(std::move(outs), o, c.size);
}

}  // namespace

BatchFn vmap(BatchFn f, VmapOptions options) {
  EMBER_CHECK(static_cast<bool>(f), "vmap", "the function to map is empty");
  return [f = std::move(f), options = std::move(options)](const std::vector<Tensor>& inputs) {
    return run_vmap(f, inputs, options);
  };
}

batching_stats::Counts batching_stats::last() { return counts; }

}  // namespace ember
