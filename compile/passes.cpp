#include "compile/passes.h"

#include <algorithm>
#include <iostream>
#include <map>

#include "autograd/grad_mode.h"
#include "compile/fusion.h"
#include "compile/op_table.h"

namespace ember::compiler {

int dead_code(Graph& g) {
  std::vector<bool> live(g.values.size(), false);
  for (int id : g.outputs) live[static_cast<size_t>(id)] = true;
  std::vector<Call> kept;
  for (auto c = g.calls.rbegin(); c != g.calls.rend(); ++c) {
    bool used = false;
    for (int r : c->results) used = used || live[static_cast<size_t>(r)];
    if (!used) continue;
    for (int id : Graph::reads(*c)) live[static_cast<size_t>(id)] = true;
    kept.push_back(std::move(*c));
  }
  const int removed = static_cast<int>(g.calls.size() - kept.size());
  g.calls.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
  std::erase_if(g.constants, [&](const auto& c) { return !live[static_cast<size_t>(c.first)]; });
  return removed;
}

namespace {

// Each value's stand-in: itself, or the equal value a pass keeps instead;
// the calls kept read the stand-ins.
struct Renaming {
  std::vector<int> same;
  explicit Renaming(const Graph& g) : same(g.values.size()) {
    for (size_t i = 0; i < same.size(); ++i) same[i] = static_cast<int>(i);
  }
  void apply(Call& c) const {
    for (Arg& a : c.args) {
      if (auto* v = std::get_if<ValueRef>(&a)) v->id = same[static_cast<size_t>(v->id)];
      if (auto* l = std::get_if<ValueList>(&a))
        for (int& id : l->ids) id = same[static_cast<size_t>(id)];
    }
  }
  int finish(Graph& g, std::vector<Call> kept) const {
    const int removed = static_cast<int>(g.calls.size() - kept.size());
    g.calls = std::move(kept);
    for (int& id : g.outputs) id = same[static_cast<size_t>(id)];
    return removed;
  }
};

// Whether the call gives back its first argument's values unchanged.
bool is_identity(const Call& c, const Graph& g) {
  const auto* x = c.args.empty() ? nullptr : std::get_if<ValueRef>(&c.args[0]);
  if (!x || c.results.size() != 1 || c.fused) return false;
  const Value& in = g.values[static_cast<size_t>(x->id)];
  const Shape* shape = c.args.size() == 2 ? std::get_if<Shape>(&c.args[1]) : nullptr;
  const DType* dtype = c.args.size() == 2 ? std::get_if<DType>(&c.args[1]) : nullptr;
  const bool same_shape_op = c.op == "sum_to" || c.op == "expand" || c.op == "reshape" || c.op == "view";
  // detach only cuts autograd's history, and a graph with a backward pass
  // runs with autograd off; a returned detach stays (the caller gets a new tensor)
  const bool plain_detach = c.op == "detach" && g.backward &&
                            std::find(g.outputs.begin(), g.outputs.end(), c.results[0]) == g.outputs.end();
  return (same_shape_op && shape && *shape == in.shape) || (c.op == "to" && dtype && *dtype == in.dtype) ||
         (c.op == "contiguous" && c.args.size() == 1) || plain_detach;
}

}  // namespace

int identities(Graph& g) {
  Renaming r(g);
  std::vector<Call> kept;
  for (Call& c : g.calls) {
    r.apply(c);
    if (is_identity(c, g)) {
      r.same[static_cast<size_t>(c.results[0])] = std::get<ValueRef>(c.args[0]).id;
      continue;
    }
    kept.push_back(std::move(c));
  }
  return r.finish(g, std::move(kept));
}

int fold_constants(Graph& g) {
  // A constant is frozen when the graph holds the only handle on it and on
  // its memory: then nothing can change its values between runs.
  std::map<int, Tensor> frozen;
  for (const auto& [id, t] : g.constants)
    if (t.impl_ptr().use_count() == 1 && t.storage() && t.storage().use_count() == 1) frozen[id] = t;
  NoGradGuard values_only;  // a folded value is a constant: it has no history
  std::vector<Call> kept;
  for (Call& c : g.calls) {
    const std::vector<int> reads = Graph::reads(c);
    bool foldable = !c.fused && c.rule;
    for (int id : reads) foldable = foldable && frozen.count(id);
    for (int id : c.results)  // a returned value is a new tensor each run, as eager's is
      foldable = foldable && std::find(g.outputs.begin(), g.outputs.end(), id) == g.outputs.end();
    if (!foldable) {
      kept.push_back(std::move(c));
      continue;
    }
    const std::vector<Tensor> results = c.rule->call(op_args(c, [&](int id) -> const Tensor& { return frozen[id]; }));
    for (size_t r = 0; r < c.results.size(); ++r) {
      const int id = c.results[r];
      g.values[static_cast<size_t>(id)].origin = Origin::Constant;
      g.constants.emplace_back(id, results[r]);
      frozen[id] = results[r];
    }
  }
  const int removed = static_cast<int>(g.calls.size() - kept.size());
  g.calls = std::move(kept);
  return removed;
}

int common_subexpressions(Graph& g) {
  Renaming r(g);
  std::map<std::string, size_t> seen;  // a call's text -> its place in kept
  std::vector<Call> kept;
  for (Call& c : g.calls) {
    r.apply(c);
    if (c.fused) {  // a group is its members: never merged by its arguments alone
      kept.push_back(std::move(c));
      continue;
    }
    std::string key = c.op;
    for (const Arg& a : c.args) {
      key += '|';
      key += arg_str(a);
    }
    auto [it, fresh] = seen.emplace(key, kept.size());
    if (!fresh) {
      const Call& first = kept[it->second];
      for (size_t i = 0; i < c.results.size(); ++i) r.same[static_cast<size_t>(c.results[i])] = first.results[i];
      continue;
    }
    kept.push_back(std::move(c));
  }
  return r.finish(g, std::move(kept));
}

void optimize(Graph& g, bool fuse) {
  const int debug = debug_level();
  auto pass = [&](const char* name, int (*f)(Graph&)) {
    if (debug >= 2) std::cerr << "-- before " << name << ":\n" << to_string(g);
    const int removed = f(g);
    if (debug >= 2) std::cerr << "-- after " << name << " (" << removed << " calls removed):\n" << to_string(g);
  };
  pass("dead_code", &dead_code);
  pass("identities", &identities);
  pass("fold_constants", &fold_constants);
  pass("common_subexpressions", &common_subexpressions);
  pass("dead_code", &dead_code);
  if (fuse) pass("fuse_elementwise", &fuse_elementwise);
}

}  // namespace ember::compiler
