// Checks exercise 8.2: counts of a small expression (a wrong count is named:
// nothing, each op twice, inputs instead of calls), the uninstall also when f
// throws (with f's exception passed on), and a Transformer block's forward
// against the profiler's events.
#include <map>

#include "exercises/checks/check.h"
#include "inspect/profiler.h"

namespace ex8_2 {
std::map<std::string, int64_t> count_ops(const std::function<void()>& f);
}

namespace {

using namespace ember;
using Counts = std::map<std::string, int64_t>;

std::string listing(const Counts& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k + " " + std::to_string(v);
  return s.empty() ? "nothing" : s;
}

// What tanh(a * b + c) is counted as, for the usual mistakes.
std::string count_mistake(const Counts& got) {
  if (got.empty())
    return "you counted nothing: was the counter installed while f ran, and is your hook the base class's own "
           "(the same name and parameter types; `override` makes the compiler check)?";
  if (got == Counts{{"add", 2}, {"mul", 2}, {"tanh", 2}})
    return "every op is counted twice: the observer hears each op once as it begins and once as it ends";
  if (got == Counts{{"add", 2}, {"mul", 2}, {"tanh", 1}}) return "you count each op's inputs, not its calls";
  return "one count per op call, by the op's name";
}

// The names whose counts differ: "mul: you 3, the profiler 4".
std::string differences(const Counts& mine, const Counts& profiled) {
  std::string s;
  Counts all = mine;
  all.insert(profiled.begin(), profiled.end());
  for (const auto& [k, v] : all) {
    const int64_t a = mine.count(k) ? mine.at(k) : 0, b = profiled.count(k) ? profiled.at(k) : 0;
    if (a != b) s += (s.empty() ? "" : "; ") + k + ": you " + std::to_string(a) + ", the profiler " + std::to_string(b);
  }
  return s;
}

}  // namespace

check::Exercise check::exercise() {
  return {"8.2", "An observer that counts ops", "docs/book/08_watching_it_work.md", {
    {"tanh(a * b + c) is one mul, one add, one tanh", [] {
       Tensor a = ones({3}), b = ones({3}), c = ones({3});
       const auto counts = ex8_2::count_ops([&] { (void)tanh(a * b + c); });
       const Counts want = {{"add", 1}, {"mul", 1}, {"tanh", 1}};
       expect(counts == want, "you counted " + listing(counts) + "; the ops were " + listing(want),
              count_mistake(counts));
     }},
    {"the observer is uninstalled afterwards, also when f throws", [] {
       (void)ex8_2::count_ops([] {});
       expect(autograd_observer() == nullptr, "after count_ops returned, an observer is still installed",
              "the counter is a local of count_ops: once it returns, the library would call an object that no "
              "longer exists");
       bool passed_on = false;
       try {
         (void)ex8_2::count_ops([] { EMBER_FAIL("check", "thrown on purpose"); });
       } catch (const Error&) {
         passed_on = true;
       }
       expect(autograd_observer() == nullptr, "after f threw, your observer is still installed",
              "when f throws, the line after f() never runs: what runs however a scope is left, by return or "
              "by exception?");
       expect(passed_on, "f threw, but count_ops returned as if nothing happened",
              "count_ops swallowed f's error: the caller must still see it, once the counter is uninstalled");
     }},
    {"a TransformerBlock's forward: the same counts as the profiler's events", [] {
       Generator gen(61);
       nn::TransformerBlock block(16, 2, {.generator = &gen});
       Tensor x = randn({2, 8, 16}, gen);
       const auto mine = ex8_2::count_ops([&] { (void)block.forward(x); });
       Counts profiled;
       {
         inspect::Profiler prof;
         (void)block.forward(x);
         for (const auto& e : prof.events()) ++profiled[e.name];
       }
       expect(mine == profiled, "you counted " + listing(mine) + "\nthe profiler saw " + listing(profiled),
              "they differ in " + differences(mine, profiled) + ": the profiler records one event per op begun");
       int64_t total = 0;
       for (const auto& [k, v] : mine) total += v;
       note("one block's forward: " + std::to_string(total) + " op calls (" + listing(mine) + ")");
     }},
  }};
}
