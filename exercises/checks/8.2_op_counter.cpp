// Checks exercise 8.2: counts of a small expression, of a Transformer
// block's forward against the profiler's events, and the uninstall on throw.
#include <map>

#include "exercises/checks/check.h"
#include "inspect/profiler.h"

namespace ex8_2 {
std::map<std::string, int64_t> count_ops(const std::function<void()>& f);
}

namespace {

using namespace ember;

std::string listing(const std::map<std::string, int64_t>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k + " " + std::to_string(v);
  return s.empty() ? "nothing" : s;
}

}  // namespace

check::Exercise check::exercise() {
  return {"8.2", "An observer that counts ops", "docs/book/08_watching_it_work.md", {
    {"tanh(a * b + c) is one mul, one add, one tanh", [] {
       Tensor a = ones({3}), b = ones({3}), c = ones({3});
       const auto counts = ex8_2::count_ops([&] { (void)tanh(a * b + c); });
       const std::map<std::string, int64_t> want = {{"add", 1}, {"mul", 1}, {"tanh", 1}};
       expect(counts == want, "you counted " + listing(counts) + "; the ops were " + listing(want),
              "override op_begin(const char* op, const std::vector<const Tensor*>& inputs)");
     }},
    {"the observer is uninstalled afterwards, also when f throws", [] {
       (void)ex8_2::count_ops([] {});
       expect(autograd_observer() == nullptr, "after count_ops returned, an observer is still installed");
       try {
         (void)ex8_2::count_ops([] { EMBER_FAIL("check", "thrown on purpose"); });
       } catch (const Error&) {
       }
       expect(autograd_observer() == nullptr, "after f threw, your observer is still installed",
              "a small RAII struct whose destructor calls set_autograd_observer(nullptr)");
     }},
    {"a TransformerBlock's forward: the same counts as the profiler's events", [] {
       Generator gen(61);
       nn::TransformerBlock block(16, 2, {.generator = &gen});
       Tensor x = randn({2, 8, 16}, gen);
       const auto mine = ex8_2::count_ops([&] { (void)block.forward(x); });
       std::map<std::string, int64_t> profiled;
       {
         inspect::Profiler prof;
         (void)block.forward(x);
         for (const auto& e : prof.events()) ++profiled[e.name];
       }
       expect(mine == profiled, "you counted " + listing(mine) + "\nthe profiler saw " + listing(profiled));
       int64_t total = 0;
       for (const auto& [k, v] : mine) total += v;
       note("one block's forward: " + std::to_string(total) + " op calls (" + listing(mine) + ")");
     }},
  }};
}
