// forward_vs_reverse: the two modes of automatic differentiation side by side.
//
//   ./build/examples/forward_vs_reverse [--out DIR] [--quick]
//
// 1. A dual number by hand: f(x) = sin(x) x at x = 0.5 with tangent 1, the
//    primal and the tangent after every op, against the closed form.
// 2. The trace of one JVP through a small MLP, op by op: what forward mode
//    carries beside each value.
// 3. The same Jacobian both ways (jacfwd and jacrev) and the Hessian of a
//    scalar loss (forward-over-reverse against reverse-over-reverse).
// 4. The crossover, measured: the Jacobian of f: R^n -> R^m,
//    f(x) = W2 tanh(W1 x), by n forward passes and by m backward passes,
//    for n = 1..256 at m = 16 and for m = 1..256 at n = 16. Forward mode
//    wins while the inputs are fewer than the outputs. Writes
//    DIR/crossover.png (time against n and against m, log axes; medians of 21 runs).
//    Then the same with the passes batched into one (jacfwd_vmap and
//    jacrev_vmap, vmap/functional.h): DIR/crossover_vmap.png.
// Every check prints its error; the program exits non-zero if one fails.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/program.h"
#include "common/report.h"
#include "ember.h"
#include "plot/plot.h"

using namespace ember;

namespace {

using examples::max_abs_diff;
using examples::report;

double max_abs_diff(const Tensor& a, const Tensor& b) { return max_abs_diff(a.to_vector<double>(), b.to_vector<double>()); }

// 1. sin(x) x by hand
void dual_by_hand() {
  std::printf("1. A dual number: f(x) = sin(x) x at x = 0.5, tangent dx = 1\n");
  std::printf("  %-14s %14s %14s\n", "step", "primal", "tangent");
  DualLevel level;
  Tensor x = make_dual(scalar_tensor(0.5, kFloat64), scalar_tensor(1.0, kFloat64));
  auto show = [](const char* step, const Tensor& t) {
    std::printf("  %-14s %14.10f %14.10f\n", step, t.item<double>(), tangent(t).item<double>());
  };
  show("x", x);
  Tensor s = sin(x);
  show("s = sin(x)", s);  // ds = cos(x) dx
  Tensor y = s * x;
  show("y = s * x", y);  // dy = ds x + s dx
  const double closed = std::cos(0.5) * 0.5 + std::sin(0.5);
  std::printf("  closed form f'(0.5) = cos(0.5) 0.5 + sin(0.5) = %.10f\n", closed);
  report("the tangent of y against f'(x)", std::abs(tangent(y).item<double>() - closed), 1e-15);
}

// 2. one JVP through an MLP, op by op
void jvp_trace() {
  std::printf("\n2. The trace of one JVP: y = w2 tanh(W1 x + b1), x in R^3, along v = (1, 0, 0)\n");
  Generator g(5);
  Tensor W1 = randn({4, 3}, g, kFloat64) * 0.5, b1 = randn({4}, g, kFloat64) * 0.1, w2 = randn({4}, g, kFloat64);
  Tensor x0 = tensor({0.2, -0.4, 0.9}, kFloat64);
  std::printf("  %-22s %-8s %12s %12s\n", "op", "shape", "|primal|", "|tangent|");
  DualLevel level;
  auto show = [](const char* op, const Tensor& t) {
    Tensor d = tangent(t);
    std::printf("  %-22s %-8s %12.6f %12.6f\n", op, shape_str(t.shape()).c_str(), norm(t).item<double>(),
                d.defined() ? norm(d).item<double>() : 0.0);
  };
  Tensor x = make_dual(x0, tensor({1.0, 0.0, 0.0}, kFloat64));
  show("x (dual)", x);
  Tensor h = matmul(W1, x);
  show("h = matmul(W1, x)", h);  // dh = W1 dx
  Tensor a = h + b1;
  show("a = h + b1", a);  // da = dh
  Tensor z = tanh(a);
  show("z = tanh(a)", z);  // dz = (1 - z^2) da
  Tensor y = sum(z * w2);
  show("y = sum(z * w2)", y);  // dy = sum(dz * w2)
  // the same number by reverse mode: the first entry of the gradient
  Tensor xr = x0.clone().requires_grad_();
  Tensor gx = grad({sum(tanh(matmul(W1, xr) + b1) * w2)}, {xr})[0];
  std::printf("  dy/dx0 forward %.12f, reverse %.12f\n", tangent(y).item<double>(), gx.to_vector<double>()[0]);
  report("the JVP against the gradient's entry", std::abs(tangent(y).item<double>() - gx.to_vector<double>()[0]), 1e-14);
}

// f: R^n -> R^m, f(x) = W2 tanh(W1 x), hidden width 64
struct Wide {
  Tensor W1, W2;
  Wide(int64_t n, int64_t m, Generator& g)
      : W1(randn({64, n}, g, kFloat64) / std::sqrt(static_cast<double>(n))),
        W2(randn({m, 64}, g, kFloat64) / 8.0) {}
  TensorFn fn() const {
    return [W1 = W1, W2 = W2](const std::vector<Tensor>& in) { return matmul(W2, tanh(matmul(W1, in[0]))); };
  }
};

// 3. both ways agree
void both_ways() {
  std::printf("\n3. One Jacobian, two ways; one Hessian, two ways\n");
  Generator g(9);
  Wide f(5, 7, g);
  Tensor x = randn({5}, g, kFloat64);
  Tensor jf = jacfwd(f.fn())({x}), jr = jacrev(f.fn())({x});
  std::printf("  jacfwd: %s from 5 forward passes; jacrev: %s from 7 backward passes\n", shape_str(jf.shape()).c_str(),
              shape_str(jr.shape()).c_str());
  report("jacfwd against jacrev (7 x 5)", max_abs_diff(jf, jr), 1e-14);
  TensorFn loss = [F = f.fn()](const std::vector<Tensor>& in) { return sum(pow(F(in), 2.0)); };
  Tensor H = hessian(loss)({x}), Hrr = jacrev(jacrev(loss))({x});
  report("hessian (forward-over-reverse) against jacrev(jacrev)", max_abs_diff(H, Hrr), 1e-12);
  report("the Hessian is symmetric", max_abs_diff(H, H.transpose(0, 1).contiguous()), 1e-12);
}

// median wall time of fn over `reps` runs, in milliseconds
template <typename F>
double median_ms(int reps, const F& fn) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto a = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Row {
  int64_t n, m;
  double fwd_ms, rev_ms;            // one pass per column / row
  double fwd_vmap_ms, rev_vmap_ms;  // the passes batched into one (vmap)
};

Row time_both(int64_t n, int64_t m, int reps) {
  Generator g(static_cast<uint64_t>(n * 1000 + m));
  Wide f(n, m, g);
  Tensor x = randn({n}, g, kFloat64);
  NoGradGuard outside;  // the transforms turn on what they need
  const JacobianFn jf = jacfwd(f.fn()), jr = jacrev(f.fn());
  const JacobianFn bf = jacfwd_vmap(f.fn()), br = jacrev_vmap(f.fn());
  Row r{n, m, 0, 0, 0, 0};
  r.fwd_ms = median_ms(reps, [&] { (void)jf({x}); });
  r.rev_ms = median_ms(reps, [&] { (void)jr({x}); });
  r.fwd_vmap_ms = median_ms(reps, [&] { (void)bf({x}); });
  r.rev_vmap_ms = median_ms(reps, [&] { (void)br({x}); });
  return r;
}

double fwd(const Row& r, bool batched) { return batched ? r.fwd_vmap_ms : r.fwd_ms; }
double rev(const Row& r, bool batched) { return batched ? r.rev_vmap_ms : r.rev_ms; }

// Where the two curves cross, by linear interpolation in log(size); -1 if they do not.
double crossing(const std::vector<Row>& rows, bool along_n, bool batched) {
  for (size_t i = 1; i < rows.size(); ++i) {
    const double d0 = std::log(fwd(rows[i - 1], batched) / rev(rows[i - 1], batched));
    const double d1 = std::log(fwd(rows[i], batched) / rev(rows[i], batched));
    if ((d0 <= 0) != (d1 <= 0)) {
      const double s0 = std::log(static_cast<double>(along_n ? rows[i - 1].n : rows[i - 1].m));
      const double s1 = std::log(static_cast<double>(along_n ? rows[i].n : rows[i].m));
      return std::exp(s0 + (s1 - s0) * (-d0) / (d1 - d0));
    }
  }
  return -1;
}

void print_crossings(const std::vector<Row>& by_n, const std::vector<Row>& by_m, int64_t fixed, int64_t last,
                     bool batched, double& cn, double& cm) {
  const char* how = batched ? "batched, " : "";
  cn = crossing(by_n, true, batched);
  cm = crossing(by_m, false, batched);
  const auto f = static_cast<long long>(fixed), l = static_cast<long long>(last);
  if (cn > 0) std::printf("  %swith m = %lld outputs, forward mode stops winning at n = %.1f inputs\n", how, f, cn);
  else std::printf("  %swith m = %lld outputs, the curves do not cross between n = 1 and %lld\n", how, f, l);
  if (cm > 0) std::printf("  %swith n = %lld inputs, reverse mode starts losing at m = %.1f outputs\n", how, f, cm);
  else std::printf("  %swith n = %lld inputs, the curves do not cross between m = 1 and %lld\n", how, f, l);
}

void draw(const std::vector<Row>& by_n, const std::vector<Row>& by_m, double cn, double cm, bool batched,
          const std::string& path) {
  plot::LinePlot fig;
  fig.title = batched ? "The Jacobian of f: R^n -> R^m, every pass batched into one (vmap)"
                      : "The Jacobian of f: R^n -> R^m, by forward and by reverse mode";
  fig.x = {.label = "the size that varies (n inputs at m = 16, or m outputs at n = 16)", .log = true};
  fig.y = {.label = "time for the whole Jacobian (ms)", .log = true};
  auto series = [&](const std::vector<Row>& rows, bool along_n, bool forward, const char* label, size_t colour,
                    plot::Dash dash) {
    plot::Series s;
    s.label = label;
    for (const Row& r : rows) {
      s.x.push_back(static_cast<double>(along_n ? r.n : r.m));
      s.y.push_back(forward ? fwd(r, batched) : rev(r, batched));
    }
    s.color = plot::palette(colour);
    s.points = true;
    s.dash = dash;
    s.marker = forward ? plot::Marker::Circle : plot::Marker::Square;
    return s;
  };
  if (batched) {
    fig.series.push_back(series(by_n, true, true, "forward (jacfwd_vmap), n varies: n tangents, one pass", 0, plot::Dash::Solid));
    fig.series.push_back(series(by_n, true, false, "reverse (jacrev_vmap), n varies: 16 rows, one pass", 1, plot::Dash::Solid));
    fig.series.push_back(series(by_m, false, true, "forward (jacfwd_vmap), m varies: 16 tangents, one pass", 0, plot::Dash::Dashed));
    fig.series.push_back(series(by_m, false, false, "reverse (jacrev_vmap), m varies: m rows, one pass", 1, plot::Dash::Dashed));
  } else {
    fig.series.push_back(series(by_n, true, true, "forward (jacfwd), n varies: n passes", 0, plot::Dash::Solid));
    fig.series.push_back(series(by_n, true, false, "reverse (jacrev), n varies: 16 passes", 1, plot::Dash::Solid));
    fig.series.push_back(series(by_m, false, true, "forward (jacfwd), m varies: 16 passes", 0, plot::Dash::Dashed));
    fig.series.push_back(series(by_m, false, false, "reverse (jacrev), m varies: m passes", 1, plot::Dash::Dashed));
  }
  char text[96];
  if (cn > 0) {
    std::snprintf(text, sizeof text, "solid lines cross: n = %.0f", cn);
    fig.vlines.push_back({.at = cn, .label = text, .color = plot::palette(2), .dash = plot::Dash::Solid});
  }
  if (cm > 0) {
    std::snprintf(text, sizeof text, "dashed lines cross: m = %.0f", cm);
    fig.vlines.push_back({.at = cm, .label = text, .color = plot::palette(2), .dash = plot::Dash::Dashed});
  }
  fig.legend = plot::Corner::TopLeft;
  fig.width = 1000;
  fig.height = 600;
  examples::check_picture(plot::layout_problems(plot::write_png(fig, path)), "forward_vs_reverse", path);
  std::printf("  wrote %s\n", path.c_str());
}

void crossover(const std::string& out, bool quick) {
  const int64_t fixed = 16;
  std::vector<int64_t> sizes = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  if (quick) sizes = {1, 4, 16, 64};
  const int reps = quick ? 5 : 21;
  std::printf("\n4. The crossover: the Jacobian of f: R^n -> R^m, f(x) = W2 tanh(W1 x), hidden 64\n");
  std::printf("   median of %d runs, ms; %d thread(s); vmap: every pass batched into one\n", reps, get_num_threads());
  std::vector<Row> by_n, by_m;
  std::printf("  %6s %6s %12s %12s %10s %12s %12s\n", "n", "m", "jacfwd ms", "jacrev ms", "fwd/rev", "fwd vmap",
              "rev vmap");
  auto print = [](const Row& r) {
    std::printf("  %6lld %6lld %12.3f %12.3f %10.2f %12.3f %12.3f\n", static_cast<long long>(r.n),
                static_cast<long long>(r.m), r.fwd_ms, r.rev_ms, r.fwd_ms / r.rev_ms, r.fwd_vmap_ms, r.rev_vmap_ms);
  };
  for (int64_t n : sizes) print(by_n.emplace_back(time_both(n, fixed, reps)));
  for (int64_t m : sizes) print(by_m.emplace_back(time_both(fixed, m, reps)));
  double cn = 0, cm = 0, bn = 0, bm = 0;
  print_crossings(by_n, by_m, fixed, sizes.back(), false, cn, cm);
  print_crossings(by_n, by_m, fixed, sizes.back(), true, bn, bm);
  if (out.empty()) return;
  std::filesystem::create_directories(out);
  draw(by_n, by_m, cn, cm, false, out + "/crossover.png");
  draw(by_n, by_m, bn, bm, true, out + "/crossover_vmap.png");
}

int program(const std::string& out, bool quick) {
  dual_by_hand();
  jvp_trace();
  both_ways();
  crossover(out, quick);
  std::printf("\n%s\n", examples::failed_checks() == 0 ? "all checks passed" : "SOME CHECKS FAILED");
  return examples::failed_checks() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Forward mode against reverse mode: dual numbers, a JVP's trace, and where each one wins."};
  examples::show_defaults(app);
  std::string out = "out/forward_vs_reverse";
  bool quick = false;
  app.add_option("--out", out, "directory for crossover.png (\"\" for none)");
  app.add_flag("--quick", quick, "four sizes and five runs each, for a quick look");
  EMBER_PARSE("forward_vs_reverse", app, argc, argv);
  return examples::run("forward_vs_reverse", [&] { return program(out, quick); });
}
