// Runs one exercise's steps against the learner's file (see check.h) and
// reports in words: each step on its own line, the first failure with what
// was expected, what came out, and a hint.
#include "exercises/checks/check.h"

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

}  // namespace check

namespace {

// "  message" lines, wrapped at nothing: the terminal wraps.
void say(const char* prefix, const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) std::printf("%s%s\n", prefix, line.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const check::Exercise ex = check::exercise();
  const std::string file = argc > 1 ? argv[1] : "";
  std::printf("Exercise %s: %s\n", ex.id.c_str(), ex.title.c_str());
  if (!file.empty()) std::printf("  your file: %s   (chapter: %s)\n", file.c_str(), ex.chapter.c_str());
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
  if (passed == ex.steps.size()) {
    std::printf("PASS: exercise %s is done (%zu of %zu checks).\n", ex.id.c_str(), passed, ex.steps.size());
    return 0;
  }
  std::printf("NOT YET: %zu of %zu checks passed. Change your file and run the command again.\n", passed,
              ex.steps.size());
  return 1;
}
