// Lesson A: token + positional embeddings, learned vs sinusoidal.
//
// The same token ids go through two composers that differ only in their
// positional module. The program prints each step's shape, the parameter
// counts, and how similar neighbouring positions are, cos(pos[p], pos[p+1]);
// it draws the sinusoidal table as a heatmap and the neighbour similarity as
// curves. Then try `--dim 32` and compare the two heatmaps.
//
//   embeddings_demo [--dim D] [--context-length L] [--seq-len T] [--batch B]
//                   [--vocab V] [--seed N] [--out DIR]
//
// Legend: B batch, T sequence length, D embedding dim, V vocabulary size,
//         L maximum context length.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ember.h"
#include "examples/common/png.h"
#include "nn/embedding.h"

using ember::Shape;
using ember::Tensor;
using ember::shape_str;
using ember::examples::Image;
using ember::examples::Rgb;

namespace {

struct Options {
  int64_t dim = 64, context_length = 128, seq_len = 16, batch = 2, vocab = 1000;
  uint64_t seed = 0;
  std::string out = "out";
};

// Bad flags end the program with exit code 2 and a message saying what was wrong.
const char* kUsage =
    "usage: embeddings_demo [--dim D (64)] [--context-length L (128)] [--seq-len T (16)] [--batch B (2)]\n"
    "                       [--vocab V (1000)] [--seed N (0)] [--out DIR (out)]\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "embeddings_demo: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

int64_t parse_int(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) usage_error(flag + " needs an integer, got '" + text + "'");
  if (v < lo || v > hi)
    usage_error(flag + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + text);
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::printf("%s", kUsage);
      std::exit(0);
    }
    if (i + 1 >= argc) usage_error(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--dim") o.dim = parse_int(flag, value, 1, 4096);
    else if (flag == "--context-length") o.context_length = parse_int(flag, value, 2, 100000);
    else if (flag == "--seq-len") o.seq_len = parse_int(flag, value, 1, 100000);
    else if (flag == "--batch") o.batch = parse_int(flag, value, 1, 1024);
    else if (flag == "--vocab") o.vocab = parse_int(flag, value, 1, 1000000);
    else if (flag == "--seed") o.seed = static_cast<uint64_t>(parse_int(flag, value, 0, INT64_MAX));
    else if (flag == "--out") o.out = value;
    else usage_error("unknown flag " + flag);
  }
  if (o.seq_len > o.context_length)
    usage_error("--seq-len " + std::to_string(o.seq_len) + " exceeds --context-length " +
                std::to_string(o.context_length) + ": no positional row for the positions beyond L");
  return o;
}

// cos(table[p], table[p+1]) for p = 0..L-2: rows dotted pairwise over their norms.
// table:(L,D) -> (L-1)
std::vector<double> adjacent_cosine(const Tensor& table) {
  ember::NoGradGuard no_grad;  // a measurement, not part of any graph
  const int64_t L = table.size(0);
  Tensor a = table.narrow(0, 0, L - 1), b = table.narrow(0, 1, L - 1);  // (L-1, D) each
  Tensor cos = (a * b).sum({1}) / (ember::norm(a, 2.0, {1}) * ember::norm(b, 2.0, {1}));
  return cos.to_vector<double>();
}

// ▁▂▃▄▅▆▇█ on a fixed [-1, 1] scale, so the two variants can be compared by eye.
std::string sparkline(const std::vector<double>& v, size_t width) {
  static const char* bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::string s;
  for (size_t i = 0; i < width && i < v.size(); ++i) {
    size_t j = i * v.size() / std::min(width, v.size());  // sample evenly across positions
    int level = static_cast<int>(std::lround((v[j] + 1.0) / 2.0 * 7.0));
    s += bars[std::clamp(level, 0, 7)];
  }
  return s;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// ---- pictures ----

// Diverging colormap: -1 blue, 0 white, +1 red, so that the sign bands of the
// sin/cos columns stand out.
Rgb diverging(double v) {
  v = std::clamp(v, -1.0, 1.0);
  auto mix = [](double from, double to, double t) { return static_cast<uint8_t>(std::lround(from + (to - from) * t)); };
  if (v < 0) return {mix(255, 33, -v), mix(255, 102, -v), mix(255, 172, -v)};
  return {mix(255, 178, v), mix(255, 24, v), mix(255, 43, v)};
}

// table:(L,D): one row of cells per position (top = position 0), one column per dim.
Image heatmap(const Tensor& table) {
  const int L = static_cast<int>(table.size(0)), D = static_cast<int>(table.size(1));
  const int cw = std::max(1, 512 / D), ch = std::max(1, 512 / L);  // cell size: about 512 x 512 overall
  Image img(D * cw, L * ch);
  std::vector<double> v = table.to_vector<double>();
  for (int p = 0; p < L; ++p)
    for (int i = 0; i < D; ++i) img.fill_rect(i * cw, p * ch, cw, ch, diverging(v[p * D + i]));
  return img;
}

// A line from (x0, y0) to (x1, y1), 2 px thick (Bresenham's algorithm).
void line(Image& img, int x0, int y0, int x1, int y1, Rgb c) {
  int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, err = dx + dy;
  while (true) {
    img.fill_rect(x0, y0, 2, 2, c);
    if (x0 == x1 && y0 == y1) return;
    int e2 = 2 * err;
    if (e2 >= dy) err += dy, x0 += sx;
    if (e2 <= dx) err += dx, y0 += sy;
  }
}

// Curves of values in [-1, 1] against their index, on axes with a zero line
// and ticks every 0.5 (y) and every 16 positions (x).
Image curve_plot(const std::vector<std::pair<std::vector<double>, Rgb>>& curves, size_t n) {
  const int W = 720, H = 360, left = 40, right = 20, top = 20, bottom = 30;
  const int pw = W - left - right, ph = H - top - bottom;
  Image img(W, H);
  auto X = [&](double i) { return left + static_cast<int>(std::lround(i / std::max<double>(1, n - 1) * pw)); };
  auto Y = [&](double v) { return top + static_cast<int>(std::lround((1.0 - v) / 2.0 * ph)); };
  const Rgb grid{225, 225, 225}, axis{60, 60, 60};
  for (double v : {-1.0, -0.5, 0.5, 1.0}) img.fill_rect(left, Y(v), pw, 1, grid);
  img.fill_rect(left, Y(0), pw, 1, {150, 150, 150});  // cos = 0
  img.fill_rect(left, top, 1, ph + 1, axis);           // y axis
  img.fill_rect(left, top + ph, pw + 1, 1, axis);      // x axis (cos = -1)
  for (double v : {-1.0, -0.5, 0.0, 0.5, 1.0}) img.fill_rect(left - 6, Y(v), 6, 1, axis);
  for (size_t p = 0; p < n; p += 16) img.fill_rect(X(static_cast<double>(p)), top + ph, 1, 6, axis);
  for (const auto& [v, color] : curves)
    for (size_t p = 0; p + 1 < v.size(); ++p)
      line(img, X(static_cast<double>(p)), Y(v[p]), X(static_cast<double>(p + 1)), Y(v[p + 1]), color);
  return img;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int64_t B = o.batch, T = o.seq_len, D = o.dim, V = o.vocab, L = o.context_length;

  // One generator, drawn in a fixed order: the same seed gives the same ids and weights.
  ember::Generator gen(o.seed);
  Tensor ids = ember::randint(0, V, {B, T}, gen);
  auto token = std::make_shared<ember::nn::Embedding>(V, D, ember::nn::EmbeddingOptions{.generator = &gen});
  auto learned_pos = std::make_shared<ember::nn::LearnedPositionalEmbedding>(L, D, ember::nn::InitOptions{.generator = &gen});
  auto sinusoidal_pos = std::make_shared<ember::nn::SinusoidalPositionalEmbedding>(L, D);
  // Both composers share the token table: the only difference is the positional part.
  ember::nn::EmbeddingComposer learned(token, learned_pos), sinusoidal(token, sinusoidal_pos);

  std::printf("Lesson A: token + positional embeddings (V=%lld, D=%lld, L=%lld, seed %llu)\n\n", (long long)V,
              (long long)D, (long long)L, (unsigned long long)o.seed);
  std::printf("%s\n%s\n\n", learned.to_string().c_str(), sinusoidal.to_string().c_str());

  // ---- shapes, step by step ----
  Tensor tok = token->forward(ids);
  std::printf("ids               (B, T)     %-14s int64 token ids, e.g. row 0 starts [%lld, %lld, %lld, ...]\n",
              shape_str(ids.shape()).c_str(), (long long)ids.to_vector<int64_t>()[0],
              (long long)ids.to_vector<int64_t>()[1], (long long)ids.to_vector<int64_t>()[2]);
  std::printf("token(ids)        (B, T, D)  %-14s one row of the (V, D) table per id\n", shape_str(tok.shape()).c_str());
  auto show = [&](const char* name, const ember::nn::EmbeddingComposer& composer) {
    Tensor p = composer.positional->forward(T), x = composer.forward(ids);
    std::printf("%-10s pos(T)  (T, D)     %-14s rows 0..T-1, broadcast as (1, T, D)\n", name, shape_str(p.shape()).c_str());
    std::printf("%-10s sum     (B, T, D)  %-14s token + positional: added, so D stays %lld\n", name,
                shape_str(x.shape()).c_str(), (long long)D);
  };
  show("learned", learned);
  show("sinusoidal", sinusoidal);

  // ---- parameter counts ----
  std::printf("\nparameters\n");
  std::printf("  token table        V*D = %lld\n", (long long)token->num_parameters());
  std::printf("  learned composer   %lld = V*D + L*D  (the positional table adds %lld)\n",
              (long long)learned.num_parameters(), (long long)(learned.num_parameters() - token->num_parameters()));
  std::printf("  sinusoidal         %lld = V*D + 0    (its (L, D) table is a buffer: computed, never trained)\n",
              (long long)sinusoidal.num_parameters());

  // ---- neighbouring positions ----
  std::vector<double> cos_learned = adjacent_cosine(learned_pos->weight);
  std::vector<double> cos_sinusoidal = adjacent_cosine(sinusoidal_pos->table);
  std::printf("\ncos(pos[p], pos[p+1]), p = 0..%lld left to right (%zu evenly spaced p), ▁ = -1 .. █ = +1\n",
              (long long)(L - 2), std::min<size_t>(64, cos_learned.size()));
  std::printf("  learned     %s  mean %+.3f\n", sparkline(cos_learned, 64).c_str(), mean_of(cos_learned));
  std::printf("  sinusoidal  %s  mean %+.3f\n", sparkline(cos_sinusoidal, 64).c_str(), mean_of(cos_sinusoidal));
  std::printf("\n  p          ");
  std::vector<int64_t> ps = {0, 1, 2, 4, 8, 16, 32, 64, L - 2};
  ps.erase(std::remove_if(ps.begin(), ps.end(), [&](int64_t p) { return p > L - 2; }), ps.end());
  ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
  for (int64_t p : ps) std::printf("%7lld", (long long)p);
  std::printf("\n  learned    ");
  for (int64_t p : ps) std::printf("%+7.3f", cos_learned[p]);
  std::printf("\n  sinusoidal ");
  for (int64_t p : ps) std::printf("%+7.3f", cos_sinusoidal[p]);
  std::printf("\n");
  std::printf("reading: sinusoidal is high and flat: every step p -> p+1 turns each (sin, cos) pair by the\n"
              "same angle, so neighbours are equally alike everywhere. Learned at init is near 0 and random:\n"
              "its rows are independent normal draws; only training could make neighbours alike.\n");

  // ---- pictures ----
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) {
    std::fprintf(stderr, "embeddings_demo: cannot create --out directory '%s': %s\n", o.out.c_str(), ec.message().c_str());
    return 1;
  }
  const std::string suffix = "_D" + std::to_string(D) + ".png";
  const std::string heat_path = o.out + "/sinusoidal_table" + suffix, cos_path = o.out + "/adjacent_cosine" + suffix;
  const Rgb blue{31, 119, 180}, orange{230, 120, 20};
  bool ok = ember::examples::write_png(heat_path, heatmap(sinusoidal_pos->table)) &&
            ember::examples::write_png(cos_path, curve_plot({{cos_learned, blue}, {cos_sinusoidal, orange}}, cos_learned.size()));
  if (!ok) {
    std::fprintf(stderr, "embeddings_demo: could not write the PNGs in '%s'\n", o.out.c_str());
    return 1;
  }
  std::printf("\nwrote %s\n  the sinusoidal table: position p down (0 at the top), dim i across; blue -1, white 0, red +1.\n"
              "  Left columns turn fast (short wavelengths), right columns slowly: run with --dim 32 and compare.\n",
              heat_path.c_str());
  std::printf("wrote %s\n  cos(pos[p], pos[p+1]) against p (y from -1 to 1, grey line at 0, x ticks every 16):\n"
              "  orange = sinusoidal, blue = learned at init.\n",
              cos_path.c_str());
  return 0;
}
