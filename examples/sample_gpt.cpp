// Sample text from a GPT that train_gpt saved, or from a GPT-2 checkpoint.
//
//   ./build/examples/sample_gpt --model out/gpt --prompt "ROMEO:" --chars 300
//   ./build/examples/sample_gpt --model out/gpt --temperature 0.5 --top-k 10 --seed 2
//   ./build/examples/sample_gpt --model out/gpt --top-p 0.9 --stop $'\n' --no-cache
//   ./build/examples/sample_gpt --gpt2 DIR --prompt "Hello, I'm a language model," --tokens 40
//
// Everything needed to rebuild a train_gpt model is in DIR/model.safetensors:
// the weights, and in its metadata the config and the tokenizer: characters,
// or the BPE of train_gpt --bpe (train::load_gpt reads both). A GPT-2 directory is Hugging Face's:
// config.json, model.safetensors, and the tokenizer's vocab.json and
// merges.txt (or GPT-2's encoder.json and vocab.bpe); see train/gpt2.h and
// train/bpe.h.
// Prints the prompt followed by the continuation. The same seed gives the
// same text. Decoding uses a KV cache (nn/kv_cache.h) unless --no-cache;
// the speed, in new tokens per second, goes to stderr.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>

#include "common/program.h"
#include "ember.h"

using namespace ember;

int main(int argc, char** argv) {
  CLI::App app{"Sample text from a character-level GPT saved by train_gpt, or from a GPT-2 checkpoint."};
  examples::show_defaults(app);
  std::string model_dir = "out/gpt", gpt2_dir, prompt = "\n";
  int64_t chars = 300, top_k = 0;
  double temperature = 0.8, top_p = 1.0;
  uint64_t seed = 1;
  std::string stop;
  bool no_cache = false;
  int threads = 2;
  app.add_option("--model", model_dir, "directory that train_gpt wrote (holds model.safetensors)");
  app.add_option("--gpt2", gpt2_dir, "a GPT-2 checkpoint's directory (Hugging Face's files) instead of --model");
  app.add_option("--prompt", prompt, "text to continue; every character must be in the model's vocabulary");
  app.add_option("--chars,--tokens", chars, "tokens to generate (characters, for a character-level model)")
      ->check(ember::examples::at_least<int64_t>(0));
  app.add_option("--temperature", temperature, "softmax temperature (< 1: more conservative; 0: greedy)")
      ->check(ember::examples::at_least(0.0));
  app.add_option("--top-k", top_k, "sample among the k most likely characters only (0: all)")
      ->check(ember::examples::at_least<int64_t>(0));
  app.add_option("--top-p", top_p, "sample among the most likely characters whose probability sums to p (1: all)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--stop", stop,
                 "stop after generating any of these characters (kept in the output); for a BPE (GPT-2, train_gpt --bpe), the text of "
                 "one token, which stops only as that token, not inside a longer one (GPT-2 always stops at "
                 "<|endoftext|>)");
  app.add_flag("--no-cache", no_cache, "recompute the whole context for every token instead of using a KV cache");
  app.add_option("--seed", seed, "seed of the sampling")->check(ember::examples::any_number<uint64_t>());
  app.add_option("--threads", threads, "threads for ember and OpenBLAS")->check(ember::examples::at_least<int64_t>(1));
  EMBER_PARSE("sample_gpt", app, argc, argv);

  return examples::run("sample_gpt", [&] {
    set_num_threads(threads);
    // The weights, and in the metadata what rebuilds the model (its config
    // and vocabulary): see train/checkpoint.h. Or a GPT-2 and its BPE.
    std::unique_ptr<nn::GPT> model;
    std::function<std::vector<int64_t>(const std::string&)> encode;
    std::function<std::string(const std::vector<int64_t>&)> decode;
    std::vector<int64_t> stops;
    if (!gpt2_dir.empty()) {
      model = train::load_gpt2(gpt2_dir);
      auto bpe = std::make_shared<train::BPETokenizer>(train::BPETokenizer::from_dir(gpt2_dir));
      EMBER_CHECK(bpe->vocab_size() <= model->config().vocab_size, "sample_gpt",
                  "the tokenizer has " << bpe->vocab_size() << " tokens, the model " << model->config().vocab_size);
      encode = [bpe](const std::string& t) { return bpe->encode(t); };
      decode = [bpe](const std::vector<int64_t>& ids) { return bpe->decode(ids); };
      if (bpe->vocab_size() > 50256 && bpe->token(50256) == "<|endoftext|>") stops.push_back(50256);
      if (!stop.empty()) {
        std::vector<int64_t> one = bpe->encode(stop);
        EMBER_CHECK(one.size() == 1, "sample_gpt",
                    "--stop \"" << stop << "\" is " << one.size() << " GPT-2 tokens; give the text of one token");
        stops.push_back(one[0]);
      }
    } else {
      train::LoadedGPT ck = train::load_gpt(model_dir + "/model.safetensors");
      model = std::move(ck.model);
      const train::Tokenizer tok = ck.tokenizer;  // characters, or the BPE train_gpt --bpe learned
      encode = [tok](const std::string& t) { return tok.encode(t); };  // names a character outside the vocabulary
      decode = [tok](const std::vector<int64_t>& ids) { return tok.decode(ids); };
      if (!stop.empty()) stops = tok.encode(stop);
      EMBER_CHECK(!tok.is_bpe() || stops.size() <= 1, "sample_gpt",
                  "--stop \"" << stop << "\" is " << stops.size() << " BPE tokens; give the text of one token");
    }

    EMBER_CHECK(!prompt.empty(), "sample_gpt", "the prompt is empty; give at least one character");
    std::vector<int64_t> ids = encode(prompt);
    // Greedy decoding draws nothing: a seed or a top-k could not change a character.
    for (const char* flag : {"--seed", "--top-k", "--top-p"})
      if (temperature == 0 && app.count(flag))
        std::cerr << "sample_gpt: note: " << flag << " has no effect with --temperature 0 (greedy: always the most likely "
                  << "character)" << std::endl;
    nn::SampleOptions options{.temperature = temperature, .top_k = top_k, .top_p = top_p, .seed = seed,
                              .stop = stops, .cache = !no_cache};
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<int64_t> out = model->generate(ids, chars, options);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << decode(out) << std::endl;
    const size_t fresh = out.size() - ids.size();
    std::cerr << "sample_gpt: " << fresh << " new tokens in " << s << " s (" << (s > 0 ? double(fresh) / s : 0.0)
              << " tokens/s, " << (no_cache ? "recomputing the context" : "KV cache") << ", prompt "
              << ids.size() << " tokens)" << std::endl;
    return 0;
  });
}
