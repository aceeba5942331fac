// Sample text from a GPT that train_gpt saved.
//
//   ./build/examples/sample_gpt --model out/gpt --prompt "ROMEO:" --chars 300
//   ./build/examples/sample_gpt --model out/gpt --temperature 0.5 --top-k 10 --seed 2
//   ./build/examples/sample_gpt --model out/gpt --top-p 0.9 --stop $'\n' --no-cache
//
// Everything needed to rebuild the model is in DIR/model.safetensors: the
// weights, and in its metadata the config and the vocabulary
// (train::load_gpt reads both).
// Prints the prompt followed by the continuation. The same seed gives the
// same text. Decoding uses a KV cache (nn/kv_cache.h) unless --no-cache;
// the speed, in new tokens per second, goes to stderr.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "common/program.h"
#include "ember.h"

using namespace ember;

int main(int argc, char** argv) {
  CLI::App app{"Sample text from a character-level GPT saved by train_gpt."};
  examples::show_defaults(app);
  std::string model_dir = "out/gpt", prompt = "\n";
  int64_t chars = 300, top_k = 0;
  double temperature = 0.8, top_p = 1.0;
  uint64_t seed = 1;
  std::string stop;
  bool no_cache = false;
  int threads = 2;
  app.add_option("--model", model_dir, "directory that train_gpt wrote (holds model.safetensors)");
  app.add_option("--prompt", prompt, "text to continue; every character must be in the model's vocabulary");
  app.add_option("--chars", chars, "characters to generate")->check(ember::examples::at_least<int64_t>(0));
  app.add_option("--temperature", temperature, "softmax temperature (< 1: more conservative; 0: greedy)")
      ->check(ember::examples::at_least(0.0));
  app.add_option("--top-k", top_k, "sample among the k most likely characters only (0: all)")
      ->check(ember::examples::at_least<int64_t>(0));
  app.add_option("--top-p", top_p, "sample among the most likely characters whose probability sums to p (1: all)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--stop", stop, "stop after generating any of these characters (kept in the output)");
  app.add_flag("--no-cache", no_cache, "recompute the whole context for every token instead of using a KV cache");
  app.add_option("--seed", seed, "seed of the sampling")->check(ember::examples::any_number<uint64_t>());
  app.add_option("--threads", threads, "threads for ember and OpenBLAS")->check(ember::examples::at_least<int64_t>(1));
  EMBER_PARSE("sample_gpt", app, argc, argv);

  return examples::run("sample_gpt", [&] {
    set_num_threads(threads);
    // The weights, and in the metadata what rebuilds the model (its config
    // and vocabulary): see train/checkpoint.h.
    train::LoadedGPT ck = train::load_gpt(model_dir + "/model.safetensors");
    nn::GPT& model = *ck.model;
    const train::CharTokenizer& tok = ck.tokenizer;

    EMBER_CHECK(!prompt.empty(), "sample_gpt", "the prompt is empty; give at least one character");
    std::vector<int64_t> ids = tok.encode(prompt);  // names a character outside the vocabulary
    // Greedy decoding draws nothing: a seed or a top-k could not change a character.
    for (const char* flag : {"--seed", "--top-k", "--top-p"})
      if (temperature == 0 && app.count(flag))
        std::cerr << "sample_gpt: note: " << flag << " has no effect with --temperature 0 (greedy: always the most likely "
                  << "character)" << std::endl;
    nn::SampleOptions options{.temperature = temperature, .top_k = top_k, .top_p = top_p, .seed = seed,
                              .stop = stop.empty() ? std::vector<int64_t>{} : tok.encode(stop), .cache = !no_cache};
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<int64_t> out = model.generate(ids, chars, options);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << tok.decode(out) << std::endl;
    const size_t fresh = out.size() - ids.size();
    std::cerr << "sample_gpt: " << fresh << " new tokens in " << s << " s (" << (s > 0 ? double(fresh) / s : 0.0)
              << " tokens/s, " << (no_cache ? "recomputing the context" : "KV cache") << ", prompt "
              << ids.size() << " tokens)" << std::endl;
    return 0;
  });
}
