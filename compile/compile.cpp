#include "compile/compile.h"

#include <iostream>

#include "base/error.h"
#include "compile/fusion.h"
#include "compile/passes.h"
#include "compile/graph.h"
#include "compile/run.h"

namespace ember::compiler {

std::string signature(const std::vector<Tensor>& inputs) {
  std::string key;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(inputs[i].defined(), "compile", "input " << i << " is an undefined tensor");
    if (i) key += ' ';
    key += type_str(Value{inputs[i].shape(), inputs[i].dtype(), Origin::Input});
    for (size_t j = 0; j < i; ++j)
      if (inputs[j].is_same(inputs[i])) {
        key += '=';
        key += std::to_string(j);
        break;
      }
  }
  return key;
}

Compiled::Compiled(Function fn, CompileOptions options) : fn_(std::move(fn)), options_(options) {
  EMBER_CHECK(static_cast<bool>(fn_), "compile", "the function to compile is empty");
}

const Compiled::Entry& Compiled::entry(const std::vector<Tensor>& inputs, std::vector<Tensor>* first) {
  const std::string key = signature(inputs);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = graphs_.find(key);
  if (it != graphs_.end()) return *it->second;
  Capture c = capture(fn_, inputs);
  const int debug = debug_level();
  if (debug >= 1) std::cerr << "-- captured (" << key << "):\n" << to_string(c.graph);
  optimize(c.graph, options_.fuse);
  prepare_kernels(c.graph);
  if (debug >= 1) std::cerr << "-- runs:\n" << to_string(c.graph);
  if (first) {
    *first = std::move(c.results);
    if (first->empty()) first->push_back(Tensor());  // (a function of no results: still marks the capture)
  }
  auto e = std::make_unique<Entry>();
  e->graph = std::move(c.graph);
  return *graphs_.emplace(key, std::move(e)).first->second;
}

std::vector<Tensor> Compiled::operator()(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> first;  // filled when this call captures: fn ran, and these are its results
  const Entry& e = entry(inputs, &first);
  if (!first.empty()) return e.graph.outputs.empty() ? std::vector<Tensor>{} : first;
  return run(e.graph, inputs);
}

const Graph& Compiled::graph_for(const std::vector<Tensor>& inputs) { return entry(inputs, nullptr).graph; }

size_t Compiled::captures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return graphs_.size();
}

}  // namespace ember::compiler

ember::compiler::Compiled ember::compile(compiler::Function fn, compiler::CompileOptions options) {
  return compiler::Compiled(std::move(fn), options);
}
