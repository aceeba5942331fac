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

#include "common/program.h"
#include "ember.h"
#include "registry.h"

using namespace ember;
using namespace ember::samples;

namespace {

struct Row {
  std::string op, inputs, abs_err, used, ok;
  std::string report;  // why it failed
};

constexpr size_t kOpWidth = 28, kInputsWidth = 38;  // the table stays within 100 columns

// "(3, 1) x (4) broadcast", cut to the column's width with "...".
std::string describe(const OpSample& s) {
  std::string out;
  for (size_t i = 0; i < s.inputs.size(); ++i) out += (i ? " x " : "") + shape_str(s.inputs[i].shape());
  out = s.label + ": " + out;
  return out.size() <= kInputsWidth ? out : out.substr(0, kInputsWidth - 3) + "...";
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}
std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, fraction < 0.001 ? "<0.1%%" : "%.1f%%", 100 * fraction);
  return buf;
}

std::string pad(const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); }

}  // namespace

// The program; main() below adds --help and turns any error into one line.
int program() {
  std::cout << "gradcheck: is every backward rule right?\n"
               "  For each input element x_j, the numerical derivative is the central difference\n"
               "  (f(x + eps e_j) - f(x - eps e_j)) / 2 eps, with eps = 1e-6 in float64. backward()\n"
               "  computes the same Jacobian analytically, one output element at a time. Every entry\n"
               "  must agree within tol = atol + rtol |numeric| (atol 1e-5, rtol 1e-3 as PyTorch; the\n"
               "  float32 round trip of to() is checked with eps 1e-3, atol 1e-3).\n"
               "  'of tol' is the largest error as a share of its entry's tol: under 100% passes.\n\n";

  std::vector<Row> rows;
  for (const OpInfo& op : op_registry()) {
    Generator gen(2024);  // the seed the tests use: the same inputs
    for (const OpSample& s : op.samples(gen)) {
      Row row{op.name.size() <= kOpWidth ? op.name : op.name.substr(0, kOpWidth - 3) + "...", describe(s), "", "", "", ""};
      try {
        GradcheckResult r = gradcheck(op.fn, s.inputs, op.gradcheck);
        row.abs_err = sci(r.max_abs_err);
        row.used = percent(r.max_err_over_tol);
        row.ok = r.ok ? "ok" : "FAIL";
        if (!r.ok) row.report = r.report;
      } catch (const std::exception& e) {  // e.g. the op rejected its sample
        row.abs_err = row.used = "-";
        row.ok = "FAIL";
        row.report = e.what();
      }
      rows.push_back(std::move(row));
    }
  }

  Row head{"op", "sample: input shapes", "max abs err", "of tol", "ok", ""};
  const size_t w_op = kOpWidth, w_in = kInputsWidth, w_abs = head.abs_err.size(), w_used = 6;
  auto print = [&](const Row& r) {
    std::cout << pad(r.op, w_op) << " | " << pad(r.inputs, w_in) << " | " << pad(r.abs_err, w_abs) << " | "
              << pad(r.used, w_used) << " | " << r.ok << "\n";
  };
  print(head);
  std::cout << std::string(w_op, '-') << "-+-" << std::string(w_in, '-') << "-+-" << std::string(w_abs, '-') << "-+-"
            << std::string(w_used, '-') << "-+-----\n";
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

int main(int argc, char** argv) {
  CLI::App app{"gradcheck of every registered op and module: numerical against analytic Jacobians, one line per sample."};
  EMBER_PARSE("gradcheck_tour", app, argc, argv);
  return ember::examples::run("gradcheck_tour", program);
}
