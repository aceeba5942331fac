// gradcheck_tour: checks the backward rule of every differentiable op in
// ember against numerical derivatives, and prints one line per sample input.
//
//   ./build/examples/gradcheck_tour
//
// The ops and their sample inputs come from the gradcheck registry
// (tests/gradcheck_samples/registry.h), the same list the test suite
// gradchecks.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ember.h"
#include "registry.h"

using namespace ember;
using namespace ember::samples;

namespace {

struct Row {
  std::string op, inputs, abs_err, rel_err, ok;
  std::string report;  // why it failed
};

// "(3, 1) x (4) broadcast"; modules with many parameters list the first few
// shapes so the table stays readable.
std::string describe(const OpSample& s) {
  const size_t shown = 3;
  std::string out;
  for (size_t i = 0; i < s.inputs.size() && i < shown; ++i) out += (i ? " x " : "") + shape_str(s.inputs[i].shape());
  if (s.inputs.size() > shown) out += " x ... (" + std::to_string(s.inputs.size()) + " inputs)";
  return out + " " + s.label;
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

std::string pad(const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); }

}  // namespace

int main() {
  std::cout << "gradcheck: is every backward rule right?\n"
               "  For each input element x_j, the numerical derivative is the central difference\n"
               "  (f(x + eps e_j) - f(x - eps e_j)) / 2 eps, with eps = 1e-6 in float64. backward()\n"
               "  computes the same Jacobian analytically, one output element at a time. They must agree.\n\n";

  std::vector<Row> rows;
  for (const OpInfo& op : op_registry()) {
    Generator gen(2024);  // the seed the tests use: the same inputs
    for (const OpSample& s : op.samples(gen)) {
      Row row{op.name, describe(s), "", "", "", ""};
      try {
        GradcheckResult r = gradcheck(op.fn, s.inputs, op.gradcheck);
        row.abs_err = sci(r.max_abs_err);
        row.rel_err = sci(r.max_rel_err);
        row.ok = r.ok ? "ok" : "FAIL";
        if (!r.ok) row.report = r.report;
      } catch (const std::exception& e) {  // e.g. the op rejected its sample
        row.abs_err = row.rel_err = "-";
        row.ok = "FAIL";
        row.report = e.what();
      }
      rows.push_back(std::move(row));
    }
  }

  Row head{"op", "inputs", "max abs err", "max rel err", "ok", ""};
  size_t w_op = head.op.size(), w_in = head.inputs.size(), w_abs = head.abs_err.size(), w_rel = head.rel_err.size();
  for (const Row& r : rows) {
    w_op = std::max(w_op, r.op.size());
    w_in = std::max(w_in, r.inputs.size());
  }
  auto print = [&](const Row& r) {
    std::cout << pad(r.op, w_op) << " | " << pad(r.inputs, w_in) << " | " << pad(r.abs_err, w_abs) << " | "
              << pad(r.rel_err, w_rel) << " | " << r.ok << "\n";
  };
  print(head);
  std::cout << std::string(w_op, '-') << "-+-" << std::string(w_in, '-') << "-+-" << std::string(w_abs, '-') << "-+-"
            << std::string(w_rel, '-') << "-+---\n";
  int passed = 0, failed = 0;
  for (const Row& r : rows) {
    print(r);
    (r.ok == "ok" ? passed : failed)++;
  }

  if (failed > 0) {
    std::cout << "\nfailures:\n";
    for (const Row& r : rows)
      if (r.ok != "ok") std::cout << "  " << r.op << " on " << r.inputs << ":\n    " << r.report << "\n";
  }
  std::cout << "\n(zero-size samples compare no entries: they check that forward and backward run.)\n";
  std::cout << "gradcheck: " << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
