// Checks exercise 16.1: a sequence decoded through the learner's cache (a
// prompt at once, then one token at a time, and in chunks) against causal
// attention over the whole sequence at once, here in long double. A wrong
// answer is compared with the usual mistakes' (the cache replaced instead of
// appended to, no causal mask inside a chunk, the query's own key left out,
// positions counted from 0 in every call, no 1/sqrt(d)), computed here the
// same way, to name the one it is.
#include <cmath>
#include <string>
#include <vector>

#include "exercises/checks/check.h"

namespace ex16_1 {
using Rows = std::vector<std::vector<double>>;
struct Cache {
  Rows keys, values;
};
void append(Cache& cache, const Rows& k, const Rows& v);
Rows attend(const Cache& cache, const Rows& q);
}  // namespace ex16_1

namespace {

using ex16_1::Rows;

// q, k, v rows of a sequence of n tokens, d wide: fixed, smooth, not symmetric.
struct Sequence {
  Rows q, k, v;
};
Sequence sequence(size_t n, size_t d) {
  Sequence s;
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> q(d), k(d), v(d);
    for (size_t e = 0; e < d; ++e) {
      const double x = static_cast<double>(i), y = static_cast<double>(e);
      q[e] = std::sin(1.3 * x + 0.7 * y);
      k[e] = std::cos(0.9 * x - 0.4 * y + 0.2);
      v[e] = std::sin(0.5 * x * y + x - 2.0 * y);
    }
    s.q.push_back(q), s.k.push_back(k), s.v.push_back(v);
  }
  return s;
}

// How a chunk of T queries attends to n cached rows, right or with a mistake.
struct Way {
  bool appended = true;   // the cache holds every row so far (else only this chunk's)
  bool causal = true;     // inside the chunk, no query sees a later key
  bool own_key = true;    // a query sees its own key
  bool offset = true;     // query t is at position n - T + t (else t)
  bool scaled = true;     // scores divided by sqrt(d)
};

std::vector<double> row(const Rows& keys, const Rows& values, const std::vector<double>& q, size_t last, bool scaled) {
  const size_t d = q.size();
  std::vector<long double> s;
  long double mx = -INFINITY;
  for (size_t j = 0; j <= last && j < keys.size(); ++j) {
    long double dot = 0;
    for (size_t e = 0; e < d; ++e) dot += static_cast<long double>(q[e]) * keys[j][e];
    s.push_back(scaled ? dot / std::sqrt(static_cast<long double>(d)) : dot);
    mx = std::max(mx, s.back());
  }
  std::vector<double> out(values[0].size(), 0.0);
  if (s.empty()) return std::vector<double>(out.size(), NAN);
  long double sum = 0;
  for (auto& x : s) sum += (x = std::exp(x - mx));
  for (size_t e = 0; e < out.size(); ++e) {
    long double acc = 0;
    for (size_t j = 0; j < s.size(); ++j) acc += s[j] / sum * values[j][e];
    out[e] = static_cast<double>(acc);
  }
  return out;
}

// The outputs of decoding `seq` in chunks of the given sizes, the way `way` does it.
Rows decoded(const Sequence& seq, const std::vector<size_t>& chunks, const Way& w) {
  Rows keys, values, out;
  size_t at = 0;
  for (size_t T : chunks) {
    if (!w.appended) keys.clear(), values.clear();
    keys.insert(keys.end(), seq.k.begin() + at, seq.k.begin() + at + T);
    values.insert(values.end(), seq.v.begin() + at, seq.v.begin() + at + T);
    const size_t n = keys.size();
    for (size_t t = 0; t < T; ++t) {
      size_t last = w.offset ? n - T + t : t;
      if (!w.causal) last = n - 1;
      if (!w.own_key) {
        if (last == 0) {
          out.push_back(std::vector<double>(seq.v[0].size(), NAN));
          continue;
        }
        --last;
      }
      out.push_back(row(keys, values, seq.q[at + t], last, w.scaled));
    }
    at += T;
  }
  return out;
}

bool same(const Rows& a, const Rows& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (size_t e = 0; e < a[i].size(); ++e)
      if (!(std::abs(a[i][e] - b[i][e]) <= 1e-12) && !(std::isnan(a[i][e]) && std::isnan(b[i][e]))) return false;
  }
  return true;
}

std::string mistake(const Rows& got, const Sequence& seq, const std::vector<size_t>& chunks) {
  const std::vector<std::pair<Way, std::string>> ways = {
      {{.appended = false}, "the cache holds only the last call's rows: append must add the new keys and values after "
                            "the old ones, not replace them"},
      {{.causal = false}, "inside a chunk every query saw every key, its future too: query t sees keys 0 .. n - T + t"},
      {{.own_key = false}, "a query must see its own key too (j <= n - T + t): the first token has no other"},
      {{.offset = false}, "query t of a chunk is not at position t but at n - T + t: a decode step's query (T = 1) "
                          "is the newest token and sees every key"},
      {{.scaled = false}, "the scores are q . k / sqrt(d), as in chapter 6"},
  };
  for (const auto& [way, hint] : ways)
    if (same(got, decoded(seq, chunks, way))) return hint;
  return "compare one output row by hand: which keys did it weigh, and with which weights?";
}

void check_decoding(const std::vector<size_t>& chunks, size_t d, const std::string& what) {
  size_t n = 0;
  for (size_t T : chunks) n += T;
  const Sequence seq = sequence(n, d);
  ex16_1::Cache cache;
  Rows got;
  size_t at = 0;
  for (size_t T : chunks) {
    const Rows q(seq.q.begin() + at, seq.q.begin() + at + T), k(seq.k.begin() + at, seq.k.begin() + at + T),
        v(seq.v.begin() + at, seq.v.begin() + at + T);
    ex16_1::append(cache, k, v);
    check::expect(cache.keys.size() == at + T && cache.values.size() == at + T,
                  what + ": after appending " + std::to_string(T) + " rows to " + std::to_string(at) + ", the cache has " +
                      std::to_string(cache.keys.size()) + " keys and " + std::to_string(cache.values.size()) +
                      " values, not " + std::to_string(at + T),
                  "append adds the new rows after those the cache holds");
    const Rows out = ex16_1::attend(cache, q);
    check::expect(out.size() == T, what + ": attend gave " + std::to_string(out.size()) + " rows for " +
                                       std::to_string(T) + " queries",
                  "one output row per new query");
    got.insert(got.end(), out.begin(), out.end());
    at += T;
  }
  const Rows want = decoded(seq, {n}, {});  // the whole sequence at once
  for (size_t i = 0; i < n; ++i)
    if (got[i].size() != want[i].size() || !same({got[i]}, {want[i]}))
      check::fail(what + ": the output of token " + std::to_string(i) + " is " + check::show(got[i]) +
                      ", but causal attention over the whole sequence gives " + check::show(want[i]),
                  mistake(got, seq, chunks));
}

}  // namespace

check::Exercise check::exercise() {
  return {"16.1", "A key-value cache", "docs/book/16_generation.md", {
    {"the whole sequence in one call (a prompt, nothing cached before)", [] {
       check_decoding({5}, 4, "5 tokens at once");
     }},
    {"a prompt of 3, then one token at a time", [] {
       check_decoding({3, 1, 1, 1, 1}, 4, "prompt 3, then 4 steps");
     }},
    {"one token at a time from the first", [] {
       check_decoding({1, 1, 1, 1, 1, 1}, 3, "6 steps of one token");
     }},
    {"chunks of several tokens after a prompt", [] {
       check_decoding({2, 3, 1, 2}, 5, "chunks 2, 3, 1, 2");
       check::note("every output equals causal attention over the whole sequence: the cache changes the work "
                   "(each key computed once), not the result");
     }},
  }};
}
