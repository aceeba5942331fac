// Weight tying (lesson A): the token embedding and the LM head can share one
// (V, D) matrix. This program runs one backward pass with and without tying
// on a batch that uses only 2 of the V ids, and shows where the gradient lands:
//
//   untied: the embedding's gradient touches only the 2 rows looked up; the
//           head's touches all V rows (every logit depends on every row);
//   tied:   the one shared matrix gets both, so all V rows move.
//
// Then it checks the sum rule: the tied gradient equals the lookup-only
// gradient plus the projection-only gradient, computed separately, and shows
// what a sparse table keeps (chapter 4). Exit code 1 if any check fails.
//
// Legend: B batch, T sequence length, D embedding dim, V vocabulary size.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "common/program.h"
#include "ember.h"
#include "inspect/trace.h"
#include "nn/embedding.h"

using ember::Tensor;
namespace nn = ember::nn;

namespace {

constexpr int64_t V = 10, D = 4, B = 2, T = 3;

// The two ends of a language model, as one module so that its parameter list
// shows what tying does: one matrix, listed once.
class TinyLM : public nn::Module {
 public:
  explicit TinyLM(bool tied, bool sparse = false) {
    ember::Generator gen(0);
    embed = register_module("embed", std::make_shared<nn::Embedding>(
                                         V, D, nn::EmbeddingOptions{.dtype = ember::kFloat64, .generator = &gen,
                                                                    .sparse = sparse}));
    head = register_module("head", std::make_shared<nn::LMHead>(D, V, nn::InitOptions{.dtype = ember::kFloat64, .generator = &gen}));
    if (tied) nn::tie_weights(*head, *embed);
  }
  std::string type_name() const override { return "TinyLM"; }
  // ids (B, T) -> logits (B, T, V)
  Tensor forward(const Tensor& ids) const { return head->forward(embed->forward(ids)); }

  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::LMHead> head;
};

// "■" for a row of the (V, D) gradient with any non-zero entry, "·" otherwise.
std::string rows_picture(const Tensor& grad, int* count) {
  std::vector<double> g = grad.to_vector<double>();
  std::string s;
  *count = 0;
  for (int64_t r = 0; r < V; ++r) {
    bool touched = std::any_of(g.begin() + r * D, g.begin() + (r + 1) * D, [](double x) { return x != 0.0; });
    s += touched ? "■" : "·";
    *count += touched;
  }
  return s;
}

void show(const char* what, const Tensor& grad) {
  int n = 0;
  std::string pic = rows_picture(grad, &n);
  std::printf("  %-24s %s  %2d of %lld rows have gradient\n", what, pic.c_str(), n, (long long)V);
}

}  // namespace

// The program; main() below adds --help and turns any error into one line.
int program() {
  // A batch that uses only ids 3 and 7, and fixed weights R for a stand-in
  // loss sum(logits * R): any loss would do, this one keeps the example short.
  Tensor ids = ember::tensor(std::vector<int64_t>{3, 7, 7, 7, 3, 3}, {B, T});
  ember::Generator gen(1);
  Tensor R = ember::randn({B, T, V}, gen, ember::kFloat64);
  std::printf("V = %lld, D = %lld, ids (B, T) = (%lld, %lld) using only ids 3 and 7; loss = sum(logits * R)\n\n",
              (long long)V, (long long)D, (long long)B, (long long)T);

  TinyLM untied(false), tied(true);
  for (TinyLM* m : {&untied, &tied}) {
    std::printf("%s: %lld parameters:", m->head->is_tied() ? "tied" : "untied", (long long)m->num_parameters());
    for (const auto& [name, p] : m->named_parameters())
      std::printf(" %s %s", name.c_str(), ember::shape_str(p.shape()).c_str());
    std::printf("\n");
  }

  // Both backward passes run under a trace, so a gradient can be split by
  // the node that sent each part (gradient provenance).
  ember::inspect::BackwardTrace untied_trace;
  (untied.forward(ids) * R).sum().backward();
  untied_trace.stop_watching();
  ember::inspect::BackwardTrace trace;
  (tied.forward(ids) * R).sum().backward();
  trace.stop_watching();  // it keeps this backward; the ones below are not traced
  std::printf("\nafter one backward (■ = row with non-zero gradient, rows 0..%lld):\n", (long long)(V - 1));
  show("untied embed.weight", untied.embed->weight.grad());
  show("untied head.weight", untied.head->weight.grad());
  show("tied (shared) weight", tied.embed->weight.grad());

  // The sum rule. The tied matrix W plays two roles; its gradient is the sum
  // of what each role contributes. Measure each role alone by giving the other
  // role a detached copy (a constant) of the same numbers.
  Tensor W = tied.embed->weight.detach();
  Tensor for_lookup = W.clone().requires_grad_(), for_projection = W.clone().requires_grad_();
  (ember::matmul(nn::embedding(for_lookup, ids), W.t()) * R).sum().backward();      // lookup only
  (ember::matmul(nn::embedding(W, ids), for_projection.t()) * R).sum().backward();  // projection only
  std::printf("\nthe two roles measured separately:\n");
  show("lookup only", for_lookup.grad());
  show("projection only", for_projection.grad());

  Tensor diff = ember::abs(tied.embed->weight.grad() - (for_lookup.grad() + for_projection.grad()));
  double max_diff = ember::max(diff).item<double>();
  bool ok = max_diff <= 1e-12;
  std::printf("\nsum rule: tied grad == lookup-only + projection-only: max |difference| = %.3g  %s\n", max_diff,
              ok ? "OK" : "FAIL");

  // The same split, read from the traces of the two backward passes: who sent what.
  auto print_parts = [](const std::vector<ember::inspect::BackwardTrace::GradPart>& parts) {
    for (const auto& p : parts) {
      int n = 0;
      std::string pic = rows_picture(p.grad, &n);
      std::printf("  step %2lld %-20s %-16s %s  %2d rows\n", (long long)p.step, p.node.c_str(), p.label.c_str(),
                  pic.c_str(), n);
    }
  };
  std::printf("\nprovenance of the untied embed.weight's gradient (from the backward trace): the lookup only\n");
  const auto untied_parts = untied_trace.provenance(untied.embed->weight);
  print_parts(untied_parts);
  std::printf("provenance of the tied weight's gradient: the head sends all rows, the lookup the batch's\n");
  const auto parts = trace.provenance(tied.embed->weight);
  print_parts(parts);
  const bool exact = ember::equal_bits(ember::inspect::BackwardTrace::sum(parts), tied.embed->weight.grad());
  std::printf("  the parts add up to .grad bit for bit: %s\n", exact ? "yes" : "NO");
  ok = ok && exact && parts.size() == 2 && untied_parts.size() == 1;

  // A sparse table (EmbeddingOptions::sparse): the lookup's gradient stays
  // the rows it read until someone asks .grad() for the dense table.
  std::printf("\nsparse tables (nn::EmbeddingOptions{.sparse = true}), the same backward:\n");
  for (bool tie : {false, true}) {
    TinyLM sparse(tie, /*sparse=*/true);
    (sparse.forward(ids) * R).sum().backward();
    const Tensor& w = sparse.embed->weight;
    std::string kept = "none: the head's gradient is dense, so the rows were added into it";
    if (!w.row_grad().empty()) {
      const auto& rows = w.row_grad().front();
      kept = "ids";
      for (int64_t id : rows.ids.to_vector<int64_t>()) kept += " " + std::to_string(id);
      kept += ", rows " + ember::shape_str(rows.rows.shape());
    }
    std::printf("  %-8s row_grad(): %s\n", tie ? "tied" : "untied", kept.c_str());
    const bool same = ember::equal_bits(w.grad(), (tie ? tied : untied).embed->weight.grad());
    std::printf("  %-8s .grad() equals the dense table's gradient bit for bit: %s\n", "", same ? "yes" : "NO");
    ok = ok && same && w.row_grad().empty() && !w.grad().requires_grad();
  }
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  CLI::App app{"Weight tying: which rows of the (V, D) matrix get gradient with and without a tied LM head."};
  EMBER_PARSE("weight_tying", app, argc, argv);
  return ember::examples::run("weight_tying", program);
}
