// Writes the seed corpus of fuzz_safetensors (small valid files, written by
// ember): ./make_corpus DIR. The files are committed in fuzz/corpus/.
#include <iostream>
#include <string>

#include "ember.h"
#include "train/safetensors.h"

using namespace ember;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_corpus DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  Generator g(1);
  train::write_safetensors(dir + "/empty_file.safetensors", {});
  train::write_safetensors(dir + "/one_f32.safetensors", {{"w", randn({2, 3}, g)}}, {{"note", "seed"}});
  train::write_safetensors(dir + "/all_dtypes.safetensors",
                        {{"f32", randn({3}, g)},
                         {"f64", randn({2, 2}, g, kFloat64)},
                         {"i64", randint(-5, 5, {4}, g)},
                         {"bool", tensor(std::vector<bool>{true, false, true})},
                         {"scalar", scalar_tensor(1.5, kFloat64)},
                         {"empty", zeros({0, 4})}},
                        {{"ember.tied", "head.weight=embed.token.weight"}});
  train::write_safetensors(dir + "/nested_names.safetensors",
                        {{"block0.attn.w_q.weight", randn({4, 4}, g)}, {"block0.attn.w_q.bias", zeros({4})}});
  return 0;
}
