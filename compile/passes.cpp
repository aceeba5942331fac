#include "compile/passes.h"

#include <iostream>
#include <map>

#include "compile/fusion.h"

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

int identities(Graph& g) {
  std::vector<int> same(g.values.size());  // each value's stand-in: itself, or the value it equals
  for (size_t i = 0; i < same.size(); ++i) same[i] = static_cast<int>(i);
  std::vector<Call> kept;
  int removed = 0;
  for (Call& c : g.calls) {
    for (Arg& a : c.args) {
      if (auto* v = std::get_if<ValueRef>(&a)) v->id = same[static_cast<size_t>(v->id)];
      if (auto* l = std::get_if<ValueList>(&a))
        for (int& id : l->ids) id = same[static_cast<size_t>(id)];
    }
    const auto* x = c.args.empty() ? nullptr : std::get_if<ValueRef>(&c.args[0]);
    if (x && c.results.size() == 1 && !c.fused) {
      const Value& in = g.values[static_cast<size_t>(x->id)];
      const Shape* shape = c.args.size() == 2 ? std::get_if<Shape>(&c.args[1]) : nullptr;
      const DType* dtype = c.args.size() == 2 ? std::get_if<DType>(&c.args[1]) : nullptr;
      const bool same_shape_op = c.op == "sum_to" || c.op == "expand" || c.op == "reshape" || c.op == "view";
      if ((same_shape_op && shape && *shape == in.shape) || (c.op == "to" && dtype && *dtype == in.dtype) ||
          (c.op == "contiguous" && c.args.size() == 1)) {
        same[static_cast<size_t>(c.results[0])] = x->id;
        ++removed;
        continue;
      }
    }
    kept.push_back(std::move(c));
  }
  g.calls = std::move(kept);
  for (int& id : g.outputs) id = same[static_cast<size_t>(id)];
  return removed;
}

int common_subexpressions(Graph& g) {
  std::vector<int> same(g.values.size());  // each value's stand-in: itself, or an equal earlier one
  for (size_t i = 0; i < same.size(); ++i) same[i] = static_cast<int>(i);
  auto renamed = [&](Arg a) {
    if (auto* v = std::get_if<ValueRef>(&a)) v->id = same[static_cast<size_t>(v->id)];
    if (auto* l = std::get_if<ValueList>(&a))
      for (int& id : l->ids) id = same[static_cast<size_t>(id)];
    return a;
  };
  std::map<std::string, size_t> seen;  // a call's text -> its place in kept
  std::vector<Call> kept;
  int removed = 0;
  for (Call& c : g.calls) {
    if (c.fused) {  // a group is its members: never merged by its arguments alone
      for (Arg& a : c.args) a = renamed(std::move(a));
      kept.push_back(std::move(c));
      continue;
    }
    std::string key = c.op;
    for (Arg& a : c.args) {
      a = renamed(std::move(a));
      key += '|';
      key += arg_str(a);
    }
    auto [it, fresh] = seen.emplace(key, kept.size());
    if (!fresh) {
      const Call& first = kept[it->second];
      for (size_t r = 0; r < c.results.size(); ++r) same[static_cast<size_t>(c.results[r])] = first.results[r];
      ++removed;
      continue;
    }
    kept.push_back(std::move(c));
  }
  g.calls = std::move(kept);
  for (int& id : g.outputs) id = same[static_cast<size_t>(id)];
  return removed;
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
  pass("common_subexpressions", &common_subexpressions);
  pass("dead_code", &dead_code);
  if (fuse) pass("fuse_elementwise", &fuse_elementwise);
}

}  // namespace ember::compiler
