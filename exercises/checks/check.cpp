// Runs one exercise's steps against the learner's file (see check.h) and
// reports in words: each step on its own line, the first failure with what
// was expected, what came out, and a hint. (check::run runs several in
// order: the build-your-own track's stages, exercises/yours/.)
#include "exercises/checks/check.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace check {

namespace {
std::vector<std::string> notes;  // of the running step
}  // namespace

void fail(const std::string& message, const std::string& hint) { throw Failure{message, hint}; }

void note(const std::string& text) { notes.push_back(text); }

void expect(bool ok, const std::string& message, const std::string& hint) {
  if (!ok) fail(message, hint);
}

std::string num(double v) {
  if (v == 0) return "0";  // no "-0"
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string show(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

std::string show(const std::vector<double>& v) {
  std::string out = "(";
  for (size_t i = 0; i < v.size() && i < 12; ++i) out += (i ? ", " : "") + num(v[i]);
  return out + (v.size() > 12 ? ", ...)" : ")");
}

std::string show(const Tensor& t) {
  if (!t.defined()) return "an undefined tensor";
  if (t.dim() == 0) return num(t.to(ember::kFloat64).item<double>());
  const std::vector<double> v = t.to(ember::kFloat64).to_vector<double>();
  if (t.dim() != 2 || v.size() > 12) return show(v);
  std::string out = "(";
  const int64_t rows = t.size(0), cols = t.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    out += r ? ", (" : "(";
    for (int64_t c = 0; c < cols; ++c) out += (c ? ", " : "") + num(v[static_cast<size_t>(r * cols + c)]);
    out += ")";
  }
  return out + ")";
}

bool matches(const Tensor& got, const Tensor& want, double tol) {
  return got.defined() && want.defined() && got.shape() == want.shape() && max_diff(got, want, "") <= tol;
}

double max_diff(const Tensor& got, const Tensor& want, const std::string& what) {
  expect(got.defined(), what + " is an undefined tensor (nothing was returned)");
  expect(got.shape() == want.shape(), what + " has shape " + show(got.shape()) + ", but should have shape " +
                                          show(want.shape()));
  const std::vector<double> g = got.to(ember::kFloat64).to_vector<double>();
  const std::vector<double> w = want.to(ember::kFloat64).to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = std::abs(g[i] - w[i]);
    if (std::isnan(d)) return INFINITY;
    m = std::max(m, d);
  }
  return m;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what, double tol,
                  const std::string& hint) {
  const double d = max_diff(got, want, what);
  expect(d <= tol, what + " is " + show(got) + ", but should be " + show(want) + " (largest difference " + num(d) +
                       ")", hint);
}

void expect_near(double got, double want, const std::string& what, double tol, const std::string& hint) {
  expect(std::abs(got - want) <= tol, what + " is " + num(got) + ", but should be " + num(want), hint);
}

void expect_bytes(int64_t predicted, int64_t measured, const std::string& what) {
  expect(predicted == measured,
         what + ": you predict " + std::to_string(predicted) + " bytes, the timeline measured " +
             std::to_string(measured) + " (you are off by " + std::to_string(predicted - measured) + " bytes = " +
             num(static_cast<double>(predicted - measured) / 4) + " floats)",
         "compare several shapes: which of B, T, D, h does the difference grow with?");
}

std::string expect_error(const std::function<void()>& f, const std::vector<std::string>& parts,
                         const std::string& what) {
  std::string msg;
  try {
    f();
  } catch (const ember::Error& e) {
    msg = e.what();
  } catch (const exercise::Todo&) {
    throw;
  } catch (const std::exception& e) {
    fail(what + ": it threw, but not an ember::Error (use EMBER_CHECK from base/error.h): " + e.what());
  }
  expect(!msg.empty(), what + ": nothing was thrown", "check the argument first, with EMBER_CHECK(condition, op, message)");
  for (const std::string& p : parts)
    expect(msg.find(p) != std::string::npos, what + ": the message \"" + msg + "\" should mention \"" + p + "\"");
  return msg;
}

std::string expect_error(const std::function<void()>& f, const std::vector<std::string>& parts, const std::string& what,
                         const std::string& unrefused, const std::string& unnamed) {
  try {
    return expect_error(f, parts, what);
  } catch (Failure& failure) {
    if (failure.message == what + ": nothing was thrown") failure.hint = unrefused;
    else if (!unnamed.empty() && failure.message.find("should mention") != std::string::npos) failure.hint = unnamed;
    throw;
  }
}

std::vector<std::string> graph_nodes(const Tensor& t) {
  std::vector<std::string> names;
  std::vector<ember::Node*> stack;
  std::set<ember::Node*> seen;
  if (t.defined() && t.grad_fn()) stack.push_back(t.grad_fn().get());
  while (!stack.empty()) {
    ember::Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    names.push_back(n->name());
    for (const ember::Edge& e : n->next)
      if (e.node) stack.push_back(e.node.get());
  }
  return names;
}

int64_t ops_called(const std::function<void()>& f) {
  struct Counter final : ember::AutogradObserver {
    int64_t calls = 0;
    int depth = 0;
    void op_begin(const char*, const std::vector<const Tensor*>&) override { calls += depth++ == 0; }
    void op_end(const char*) override { --depth; }
  } counter;
  ember::AutogradObserver* before = ember::autograd_observer();
  ember::set_autograd_observer(&counter);
  try {
    f();
  } catch (...) {
    ember::set_autograd_observer(before);
    throw;
  }
  ember::set_autograd_observer(before);
  return counter.calls;
}

}  // namespace check

namespace {

// "  message" lines, wrapped at nothing: the terminal wraps.
void say(const char* prefix, const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) std::printf("%s%s\n", prefix, line.c_str());
}

}  // namespace

namespace {

// One exercise's steps in order, until one fails: how many passed.
size_t run_steps(const check::Exercise& ex) {
  size_t passed = 0;
  for (const check::Step& step : ex.steps) {
    std::printf("  - %s ... ", step.name.c_str());
    std::fflush(stdout);  // a crash inside the step then shows which one
    std::string problem, hint;
    try {
      ember::manual_seed(0);
      check::notes.clear();
      step.body();
      std::printf("ok\n");
      for (const std::string& n : check::notes) say("      ", n);
      ++passed;
      continue;
    } catch (const exercise::Todo& t) {
      problem = std::string("still to do (the TODO in your file): ") + t.what();
      hint = "replace that TODO line with your code";
    } catch (const check::Failure& f) {
      problem = f.message;
      hint = f.hint;
    } catch (const ember::Error& e) {
      problem = std::string("ember refused something your code asked for:\n") + e.what();
      hint = "the message names the op and the shapes it was given";
      for (const auto& [part, meaning] : step.refusals)
        if (std::string(e.what()).find(part) != std::string::npos) {
          hint = meaning;
          break;
        }
    } catch (const std::exception& e) {
      problem = std::string("your code threw an exception: ") + e.what();
    }
    std::printf("not yet\n");
    say("      ", problem);
    if (!hint.empty()) say("      hint: ", hint);
    break;
  }
  std::fflush(stdout);
  return passed;
}

}  // namespace

int check::run(const std::vector<Exercise>& exercises, const std::string& kind, const std::string& file) {
  const bool several = exercises.size() > 1;
  std::string lower = kind;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (size_t i = 0; i < exercises.size(); ++i) {
    const Exercise& ex = exercises[i];
    std::printf("%s %s: %s\n", kind.c_str(), ex.id.c_str(), ex.title.c_str());
    if (!file.empty())
      std::printf("  your %s: %s   (chapter: %s)\n", file.back() == '/' ? "files" : "file", file.c_str(),
                  ex.chapter.c_str());
    const size_t passed = run_steps(ex);
    if (passed == ex.steps.size()) continue;
    // Stage N stops at the first earlier stage that no longer passes.
    const std::string which = several ? lower + " " + ex.id + ", " : "";
    const std::string after = i + 1 < exercises.size() ? " (" + lower + " " + exercises.back().id + " builds on it)" : "";
    std::printf("NOT YET: %s%zu of %zu checks passed%s. Change your file%s and run the command again.\n", which.c_str(),
                passed, ex.steps.size(), after.c_str(), several || kind != "Exercise" ? "s" : "");
    return 1;
  }
  const Exercise& last = exercises.back();
  std::string earlier;
  if (several)
    earlier = "; " + lower + (exercises.size() > 2 ? "s " + exercises.front().id + " to " + exercises[exercises.size() - 2].id + " still pass"
                                                   : " " + exercises.front().id + " still passes");
  std::printf("PASS: %s %s is done (%zu of %zu checks%s).\n", lower.c_str(), last.id.c_str(), last.steps.size(),
              last.steps.size(), earlier.c_str());
  return 0;
}

#ifndef CHECK_SEVERAL_EXERCISES
int main(int argc, char** argv) { return check::run({check::exercise()}, "Exercise", argc > 1 ? argv[1] : ""); }
#endif
