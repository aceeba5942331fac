// Lesson B: how a token id selects a vector.
//
// "The cat sleeps" -> ids [2, 4, 0] -> three rows of a 5x2 table -> a
// (B=1, T=3, D=2) tensor. The walkthrough prints each step, shows that the
// lookup is the same as one_hot(ids) x E (without building the one-hot), and
// that "cat" selects row 4 wherever it stands: no context yet.
//
// Every number is checked against the lesson; the exit code is 1 if one differs.
//
// Legend: B batch, T sequence length, D embedding dim, V vocabulary size.
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/program.h"
#include "ember.h"
#include "nn/embedding.h"

using ember::Tensor;
using ember::shape_str;

namespace {

const std::vector<std::string> kVocabulary = {"sleeps", "dog", "The", "runs", "cat"};  // id -> word

// One token per word (the lesson's tokenizer); ids (1, T).
Tensor tokenize(const std::string& sentence) {
  std::map<std::string, int64_t> id_of;
  for (size_t i = 0; i < kVocabulary.size(); ++i) id_of[kVocabulary[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> ids;
  std::istringstream words(sentence);
  for (std::string w; words >> w;) ids.push_back(id_of.at(w));
  return ember::tensor(ids, {1, static_cast<int64_t>(ids.size())});
}

std::string vec(const std::vector<float>& v) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%4.1f", i ? ", " : "", v[i]);
    s += buf;
  }
  return s + "]";
}

int failures = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("  MISMATCH: %s\n", what.c_str());
    ++failures;
  }
}

}  // namespace

// The program; main() below adds --help and turns any error into one line.
int program() {
  std::printf("1. The vocabulary: every word has an id.\n  ");
  for (size_t i = 0; i < kVocabulary.size(); ++i) std::printf("%zu %s   ", i, kVocabulary[i].c_str());

  Tensor ids = tokenize("The cat sleeps");
  std::vector<int64_t> id = ids.to_vector<int64_t>();
  std::printf("\n\n2. \"The cat sleeps\" -> ids [%lld, %lld, %lld], shape %s = (B, T): one sentence, 3 positions.\n",
              (long long)id[0], (long long)id[1], (long long)id[2], shape_str(ids.shape()).c_str());
  check(id == std::vector<int64_t>{2, 4, 0}, "ids should be [2, 4, 0]");

  // The table E (V=5, D=2): row i is the vector of word i.
  Tensor E = ember::tensor({-0.4f, 0.8f, 0.1f, 0.5f, 0.2f, -0.1f, -0.2f, 0.6f, 0.7f, 0.3f}, {5, 2});
  auto embedding = ember::nn::Embedding::from_pretrained(E);  // frozen: this lesson does not train
  std::printf("\n3. The embedding table E, shape %s = (V, D): one row per word.\n", shape_str(E.shape()).c_str());
  for (int64_t r = 0; r < 5; ++r)
    std::printf("  row %lld %-7s %s\n", (long long)r, kVocabulary[r].c_str(), vec(E.select(0, r).to_vector<float>()).c_str());

  std::printf("\n4. The lookup, position by position: the id is an address, not a magnitude.\n");
  Tensor out = embedding->forward(ids);  // (1, 3) -> (1, 3, 2)
  for (int64_t t = 0; t < 3; ++t) {
    std::vector<float> row = out.select(1, t).to_vector<float>();
    std::string word = "\"" + kVocabulary[id[t]] + "\"";
    std::printf("  position %lld: %-9s id %lld selects row %lld = %s\n", (long long)t, word.c_str(), (long long)id[t],
                (long long)id[t], vec(row).c_str());
  }

  std::printf("\n5. The result has shape %s = [B, T, D]:\n%s\n", shape_str(out.shape()).c_str(), out.to_string().c_str());
  check(out.shape() == ember::Shape{1, 3, 2}, "shape should be [1, 3, 2]");
  check(out.to_vector<float>() == std::vector<float>{0.2f, -0.1f, 0.7f, 0.3f, -0.4f, 0.8f},
        "values should be [[[0.2, -0.1], [0.7, 0.3], [-0.4, 0.8]]]");

  // one_hot(i) x E picks row i: a row of zeros with a single 1 at column i.
  Tensor onehot = ember::one_hot(ids, 5).to(ember::kFloat32);  // (1, 3, 5)
  Tensor product = ember::matmul(onehot, E);                  // (1, 3, 5) @ (5, 2) -> (1, 3, 2)
  std::printf("\n6. The same as one_hot(ids) x E. one_hot(ids, 5), shape %s:\n", shape_str(onehot.shape()).c_str());
  for (int64_t t = 0; t < 3; ++t) {
    std::printf("  ");
    for (float x : onehot.select(1, t).to_vector<float>()) std::printf("%.0f ", x);
    std::printf("  x E = %s\n", vec(product.select(1, t).to_vector<float>()).c_str());
  }
  bool same = product.to_vector<float>() == out.to_vector<float>();
  std::printf("  equal to the lookup: %s. But the lookup never builds the one-hot rows: with V = 50257\n"
              "  that would be 50257 multiplications per number, all but one of them by zero.\n",
              same ? "yes" : "NO");
  check(same, "one_hot(ids) x E should equal the lookup");

  // Same id, same row, wherever it stands: the embedding knows nothing of context.
  Tensor ids2 = tokenize("The dog runs The dog runs The cat");
  Tensor out2 = embedding->forward(ids2);
  std::vector<float> cat7 = out2.select(1, 7).to_vector<float>(), cat1 = out.select(1, 1).to_vector<float>();
  std::printf("\n7. \"The dog runs The dog runs The cat\": \"cat\" is at position 7.\n"
              "  position 7: id %lld selects row 4 = %s, the same vector as at position 1 of \"The cat sleeps\" %s.\n"
              "  Position is not in the lookup at all: that is what positional embeddings add (lesson A).\n",
              (long long)ids2.to_vector<int64_t>()[7], vec(cat7).c_str(), vec(cat1).c_str());
  check(cat7 == cat1 && cat7 == std::vector<float>{0.7f, 0.3f}, "cat at position 7 should select row 4 = [0.7, 0.3]");

  std::printf("\n%s\n", failures == 0 ? "All numbers match the lesson." : "Some numbers differ from the lesson!");
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  CLI::App app{"Lesson B: how a token id selects a vector (The cat sleeps -> ids -> rows of a 5x2 table)."};
  EMBER_PARSE("the_cat_sleeps", app, argc, argv);
  return ember::examples::run("the_cat_sleeps", program);
}
