#include "compile/run.h"

#include <optional>

#include "autograd/grad_mode.h"
#include "base/error.h"
#include "compile/fusion.h"
#include "compile/op_table.h"
#include "tensor/shape.h"

namespace ember::compiler {

std::vector<int> last_uses(const Graph& g) {
  std::vector<int> last(g.values.size(), -1);
  for (size_t i = 0; i < g.calls.size(); ++i)
    for (int id : Graph::reads(g.calls[i])) last[static_cast<size_t>(id)] = static_cast<int>(i);
  for (int id : g.outputs) last[static_cast<size_t>(id)] = static_cast<int>(g.calls.size());
  return last;
}

std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs) {
  std::optional<NoGradGuard> no_grad;
  if (g.backward) no_grad.emplace();
  EMBER_CHECK(inputs.size() == g.inputs.size(), "compile",
              "the graph takes " << g.inputs.size() << " inputs, got " << inputs.size());
  std::vector<Tensor> env(g.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.values[static_cast<size_t>(g.inputs[i])];
    EMBER_CHECK(inputs[i].defined(), "compile", "input " << i << " is an undefined tensor");
    EMBER_CHECK(inputs[i].shape() == v.shape && inputs[i].dtype() == v.dtype, "compile",
                "input " << i << " is " << dtype_name(inputs[i].dtype()) << " of shape " << shape_str(inputs[i].shape())
                         << ", but the graph was captured for " << dtype_name(v.dtype) << " of shape "
                         << shape_str(v.shape));
    env[static_cast<size_t>(g.inputs[i])] = inputs[i];
  }
  for (const auto& [id, t] : g.constants) env[static_cast<size_t>(id)] = t;
  const std::vector<int> last = last_uses(g);
  auto value = [&](int id) -> const Tensor& { return env[static_cast<size_t>(id)]; };
  for (size_t i = 0; i < g.calls.size(); ++i) {
    const Call& c = g.calls[i];
    std::vector<Tensor> results;
    if (c.fused) {
      std::vector<Tensor> ins;
      for (int id : Graph::reads(c)) ins.push_back(value(id));
      results = run_fused(*c.fused, ins, c.results);
    } else {
      results = c.rule->call(op_args(c, value));
    }
    for (size_t r = 0; r < c.results.size(); ++r) env[static_cast<size_t>(c.results[r])] = std::move(results[r]);
    for (int id : Graph::reads(c))  // let go of what no later call reads
      if (last[static_cast<size_t>(id)] == static_cast<int>(i)) env[static_cast<size_t>(id)] = Tensor();
  }
  std::vector<Tensor> out;
  for (int id : g.outputs) {
    const Tensor& t = env[static_cast<size_t>(id)];
    const Value& v = g.values[static_cast<size_t>(id)];
    if (v.origin == Origin::Constant && v.made) {  // a new tensor each call, as eager's; never the graph's own
      Tensor copy = t.detach().clone();
      out.push_back(t.requires_grad() ? copy.requires_grad_() : copy);
    } else {
      out.push_back(t);
    }
  }
  return out;
}

}  // namespace ember::compiler
