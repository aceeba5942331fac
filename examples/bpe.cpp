// Byte-pair encoding from the command line: GPT-2's tokenizer, or one
// learned from a text (train/bpe.h).
//
//   ./build/examples/bpe encode --vocab DIR FILE    ids of FILE's text, space-separated
//   ./build/examples/bpe decode --vocab DIR FILE    the text of FILE's ids
//   ./build/examples/bpe train --vocab-size 512 --out DIR FILE
//   ./build/examples/bpe pieces FILE                GPT-2's pre-tokenization, one piece per line
//                                                   (a newline, tab or return shown as \n, \t, \r)
//
// DIR holds GPT-2's encoder.json and vocab.bpe (or Hugging Face's vocab.json
// and merges.txt); bpe train writes such a DIR. FILE "-" is standard input;
// a .gz file is decompressed. encode also prints, on stderr, how many tokens
// and how fast (the encoding alone, the text already in memory).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <iterator>
#include <sstream>

#include "common/program.h"
#include "ember.h"

using namespace ember;

namespace {
std::string input(const std::string& file) {
  if (file != "-") return train::read_text_file(file);
  return std::string(std::istreambuf_iterator<char>(std::cin), {});
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Byte-pair encoding: GPT-2's tokenizer, or one learned from a text."};
  examples::show_defaults(app);
  app.require_subcommand(0, 1);
  std::string vocab, file = "-", out;
  int64_t vocab_size = 512;
  CLI::App* enc = app.add_subcommand("encode", "print the ids of a text");
  CLI::App* dec = app.add_subcommand("decode", "print the text of space-separated ids");
  CLI::App* learn = app.add_subcommand("train", "learn a BPE from a text and write it as GPT-2's two files");
  CLI::App* pieces = app.add_subcommand("pieces", "print GPT-2's pre-tokenization of a text, one piece per line");
  for (CLI::App* sub : {enc, dec}) {
    sub->add_option("--vocab", vocab, "directory of encoder.json + vocab.bpe (or vocab.json + merges.txt)")->required();
  }
  for (CLI::App* sub : {enc, dec, learn, pieces}) sub->add_option("file", file, "input file (- : standard input)");
  learn->add_option("--vocab-size", vocab_size, "tokens to learn, the 256 bytes included")
      ->check(examples::at_least<int64_t>(256));
  learn->add_option("--out", out, "directory to write encoder.json and vocab.bpe into")->required();
  EMBER_PARSE("bpe", app, argc, argv);

  return examples::run("bpe", [&] {
    EMBER_CHECK(*enc || *dec || *learn || *pieces, "bpe", "give a command: encode, decode, train or pieces");
    const std::string text = input(file);
    if (*pieces) {
      for (std::string_view p : train::pretokenize(text)) {  // a newline, tab or return shown as \n, \t, \r
        std::string shown;
        for (char ch : p) shown += ch == '\n' ? "\\n" : ch == '\t' ? "\\t" : ch == '\r' ? "\\r" : std::string(1, ch);
        std::cout << '[' << shown << "]\n";
      }
      return 0;
    }
    if (*learn) {
      const auto t0 = std::chrono::steady_clock::now();
      train::BPETokenizer t = train::train_bpe(text, vocab_size);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      t.save(out);
      const size_t n = t.encode(text).size();
      std::cout << "learned " << t.merge_count() << " merges (" << t.vocab_size() << " tokens); the text: " << text.size()
                << " bytes -> " << n << " tokens (" << static_cast<double>(text.size()) / double(n)
                << " bytes per token); wrote " << out << "/encoder.json and " << out << "/vocab.bpe\n";
      std::cout << "the first merges:";
      for (int64_t r = 0; r < std::min<int64_t>(8, t.merge_count()); ++r) {
        const auto [a, b] = t.merges()[static_cast<size_t>(r)];
        std::cout << " [" << t.token(a) << "][" << t.token(b) << "]";
      }
      std::cout << "\n";
      std::cerr << "bpe: learned in " << s << " s\n";
      return 0;
    }
    train::BPETokenizer t = train::BPETokenizer::from_dir(vocab);
    if (*dec) {
      std::vector<int64_t> ids;
      std::istringstream in(text);
      std::string word;
      while (in >> word) ids.push_back(parse_int64(word, "bpe decode", "a token id"));
      std::cout << t.decode(ids);
      return 0;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<int64_t> ids = t.encode(text);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
    std::cout << line << "\n";
    std::cerr << "bpe: " << ids.size() << " tokens in " << s << " s (" << static_cast<double>(ids.size()) / s / 1e6
              << " M tokens/s)\n";
    return 0;
  });
}
