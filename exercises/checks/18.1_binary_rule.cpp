// Checks exercise 18.1: batched_mul against a loop over the batch, for
// operands of equal rank, of different ranks (the padding), with one
// operand unbatched, a batch of 1 (a batch dim that broadcasting could
// mistake for a sample's) and 0-d samples; and that it runs one op per
// call, not one per sample.
#include "exercises/checks/check.h"

namespace ex18_1 {
ember::Tensor batched_mul(const ember::Tensor& a, bool a_batched, const ember::Tensor& b, bool b_batched);
}

namespace {

using namespace ember;

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"cannot be broadcast", "the batch dim met one of a sample's own dims: pad the batched operand with size-1 dims "
                            "right after its batch, up to the rank of one sample's result"},
};


// The loop that vmap replaces: sample b of each, multiplied, stacked.
Tensor loop(const Tensor& a, bool ab, const Tensor& b, bool bb, int64_t size) {
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < size; ++i) rows.push_back((ab ? a.select(0, i) : a) * (bb ? b.select(0, i) : b));
  return stack(rows, 0);
}

void compare(const Shape& sa, bool ab, const Shape& sb, bool bb, int64_t size, const std::string& hint) {
  Generator g(static_cast<uint64_t>(sa.size() * 10 + sb.size() + 100 * size));
  Shape full_a = sa, full_b = sb;
  if (ab) full_a.insert(full_a.begin(), size);
  if (bb) full_b.insert(full_b.begin(), size);
  const Tensor a = randn(full_a, g, kFloat64), b = randn(full_b, g, kFloat64);
  const Tensor want = loop(a, ab, b, bb, size);
  const std::string what = std::string("a ") + check::show(full_a) + (ab ? " batched" : " not batched") + ", b " +
                           check::show(full_b) + (bb ? " batched" : " not batched");
  const Tensor got = ex18_1::batched_mul(a, ab, b, bb);
  check::expect(got.defined() && got.shape() == want.shape(),
                what + ": the result has shape " + (got.defined() ? check::show(got.shape()) : "(undefined)") +
                    ", but the loop over the batch gives " + check::show(want.shape()),
                hint);
  check::expect_close(got, want, what, 1e-12);
}

}  // namespace

check::Exercise check::exercise() {
  return {"18.1", "The binary rule", "docs/book/18_vmap.md", {
    {"both batched, samples of one shape", [] {
       compare({3}, true, {3}, true, 4, "both carry the batch as dim 0: sample b of a meets sample b of b");
     }, kRefusals},
    {"one operand not batched", [] {
       compare({3}, true, {3}, false, 4, "b is the same for every sample: leave it as it is");
       compare({2, 3}, false, {2, 3}, true, 5, "a is the same for every sample: leave it as it is");
     }, kRefusals},
    {"samples of different ranks: the padding", [] {
       const std::string pad = "a sample of a has fewer dims than one of b: pad a with size-1 dims after its batch dim, "
                               "so that its batch lines up with b's batch and its own dims with b's last ones";
       compare({3}, true, {4, 3}, true, 2, pad);
       compare({3}, true, {4, 3}, false, 2,
               "b (4, 3) is not batched: one sample's result is (4, 3), so the batch's is (B, 4, 3), and a (B, 3) "
               "must become (B, 1, 3)");
       compare({4, 1}, true, {5}, true, 3, "b's samples have fewer dims: pad b after its batch dim");
     }, kRefusals},
    {"a batch of 1 and 0-d samples", [] {
       compare({3}, true, {2, 3}, false, 1,
               "with a batch of 1 a wrong padding can still broadcast; a (1, 3) batch with b (2, 3) gives (1, 2, 3)");
       compare({}, true, {2, 2}, false, 3, "a's samples are numbers (0-d): a (B) becomes (B, 1, 1)");
       compare({}, true, {}, true, 3, "two batches of numbers: (B) times (B)");
     }, kRefusals},
    {"one op for the whole batch, not one per sample", [] {
       Generator g(9);
       const Tensor a = randn({64, 3}, g, kFloat64), b = randn({4, 3}, g, kFloat64);
       const int64_t ops = check::ops_called([&] { (void)ex18_1::batched_mul(a, true, b, false); });
       check::expect(ops <= 8, "batched_mul ran " + std::to_string(ops) + " ops for a batch of 64",
                     "a loop over the samples is what vmap replaces: reshape or unsqueeze, then one multiply");
     }},
  }};
}
