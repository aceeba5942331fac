// Lesson A: token + positional embeddings, learned vs sinusoidal.
//
// The same token ids go through two composers that differ only in their
// positional module. The program prints each step's shape, the parameter
// counts, and how similar neighbouring positions are, cos(pos[p], pos[p+1]);
// it draws the sinusoidal table as a heatmap and the neighbour similarity as
// curves. Then try `--dim 32` and compare the two heatmaps.
//
//   embeddings_demo [--dim D] [--context-length L] [--seq-len T] [--batch B]
//                   [--vocab V] [--seed N] [--out DIR]      (--help shows the defaults)
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

#include "common/program.h"
#include "ember.h"
#include "plot/plot.h"

using ember::Shape;
using ember::Tensor;
using ember::shape_str;

namespace {

struct Options {
  int64_t dim = 64, context_length = 128, seq_len = 16, batch = 2, vocab = 1000;
  uint64_t seed = 0;
  std::string out = "out";
};

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

// ---- pictures (ember::plot) ----

// table:(L,D) as a heatmap: position p down (0 at the top), dimension i across.
void write_heatmap(const Tensor& table, const std::string& path) {
  ember::plot::Heatmap h;
  h.title = "Sinusoidal positional table, D = " + std::to_string(table.size(1)) + ", L = " + std::to_string(table.size(0));
  h.x_label = "dimension i (sin at even i, cos at odd i)";
  h.y_label = "position p";
  h.value_label = "table[p, i]";
  h.rows = table.size(0);
  h.cols = table.size(1);
  h.values = table.to_vector<double>();
  h.min = -1;
  h.max = 1;
  ember::plot::write_png(h, path);
}

// Both neighbour-similarity curves against p, on the fixed scale [-1, 1].
void write_cosines(const std::vector<double>& learned, const std::vector<double>& sinusoidal, int64_t D,
                   const std::string& path) {
  ember::plot::Series l{"learned, at init"}, s{"sinusoidal"};
  for (size_t p = 0; p < learned.size(); ++p) {
    l.x.push_back(static_cast<double>(p));
    l.y.push_back(learned[p]);
    s.x.push_back(static_cast<double>(p));
    s.y.push_back(sinusoidal[p]);
  }
  ember::plot::LinePlot fig;
  fig.title = "Cosine similarity of neighbouring positions, D = " + std::to_string(D);
  fig.x.label = "position p";
  fig.y = {.label = "cos(pos[p], pos[p + 1])", .min = -1.0, .max = 1.0};
  fig.series = {s, l};
  fig.hlines = {{0.0, "", ember::plot::Color{150, 150, 150}}};
  fig.legend = ember::plot::Corner::BottomRight;
  ember::plot::write_png(fig, path);
}

}  // namespace

int program(const Options& o) {
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
  std::filesystem::create_directories(o.out);
  const std::string suffix = "_D" + std::to_string(D) + ".png";
  const std::string heat_path = o.out + "/sinusoidal_table" + suffix, cos_path = o.out + "/adjacent_cosine" + suffix;
  write_heatmap(sinusoidal_pos->table, heat_path);
  write_cosines(cos_learned, cos_sinusoidal, D, cos_path);
  std::printf("\nwrote %s\n  the sinusoidal table: position p down (0 at the top), dimension i across, colour -1..+1.\n"
              "  Left columns turn fast (short wavelengths), right columns slowly: run with --dim 32 and compare.\n",
              heat_path.c_str());
  std::printf("wrote %s\n  cos(pos[p], pos[p+1]) against p for both variants, on a -1..1 scale.\n", cos_path.c_str());
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"Lesson A: token + positional embeddings, learned vs sinusoidal, with pictures of the sinusoidal table."};
  ember::examples::show_defaults(app);
  Options o;
  app.add_option("--dim", o.dim, "embedding dim D")->check(ember::examples::between(int64_t{1}, int64_t{4096}));
  app.add_option("--context-length", o.context_length, "maximum context length L")->check(ember::examples::between(int64_t{2}, int64_t{100000}));
  app.add_option("--seq-len", o.seq_len, "sequence length T (<= L)")->check(ember::examples::between(int64_t{1}, int64_t{100000}));
  app.add_option("--batch", o.batch, "batch size B")->check(ember::examples::between(int64_t{1}, int64_t{1024}));
  app.add_option("--vocab", o.vocab, "vocabulary size V")->check(ember::examples::between(int64_t{1}, int64_t{1000000}));
  app.add_option("--seed", o.seed, "seed of the ids and the weights")->check(ember::examples::any_number<uint64_t>());
  app.add_option("--out", o.out, "directory for the pictures");
  EMBER_PARSE("embeddings_demo", app, argc, argv);
  return ember::examples::run("embeddings_demo", [&] {
    EMBER_CHECK(o.seq_len <= o.context_length, "embeddings_demo",
                "--seq-len " << o.seq_len << " exceeds --context-length " << o.context_length
                             << ": no positional row for the positions beyond L");
    return program(o);
  });
}
