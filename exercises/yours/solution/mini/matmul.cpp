// Stage 5, the reference solution: one loop nest over raw strides for a
// single product, the batch walked around it, and the same nest cut into
// tiles.
#include "mini/matmul.h"

#include <algorithm>
#include <string>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)"
std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

// One (n, k) by (k, m) product into c (contiguous, zeroed), a and b read
// through their strides: a[i][p] is A[i*sa0 + p*sa1]. The order i, p, j
// reads a row of b and writes a row of c one element after another.
void product(const double* A, int64_t sa0, int64_t sa1, const double* B, int64_t sb0, int64_t sb1, double* C,
             int64_t n, int64_t k, int64_t m) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const double aip = A[i * sa0 + p * sa1];
      for (int64_t j = 0; j < m; ++j) C[i * m + j] += aip * B[p * sb0 + j * sb1];
    }
}

// The same, tile by tile: for each block of rows of c, each block of the
// inner dim, each block of columns, the product of the two tiles added into
// c's tile. The last tile of a dim may be smaller than block.
void product_blocked(const double* A, int64_t sa0, int64_t sa1, const double* B, int64_t sb0, int64_t sb1, double* C,
                     int64_t n, int64_t k, int64_t m, int64_t block) {
  for (int64_t i0 = 0; i0 < n; i0 += block)
    for (int64_t p0 = 0; p0 < k; p0 += block)
      for (int64_t j0 = 0; j0 < m; j0 += block) {
        const int64_t i1 = std::min(i0 + block, n), p1 = std::min(p0 + block, k), j1 = std::min(j0 + block, m);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t p = p0; p < p1; ++p) {
            const double aip = A[i * sa0 + p * sa1];
            for (int64_t j = j0; j < j1; ++j) C[i * m + j] += aip * B[p * sb0 + j * sb1];
          }
      }
}

// The batch walked around one product: a and b expanded to the batch shape,
// each batch index a pair of 2-d views (their offsets moved along the batch
// strides), each product into its own (n, m) piece of c.
Tensor batched(const Tensor& a, const Tensor& b, int64_t block) {
  MINI_CHECK(a.dim() >= 2 && b.dim() >= 2, "matmul",
             "a of shape " << str(a.shape()) << " and b of shape " << str(b.shape())
                           << ": each needs at least 2 dims (a matrix, or a batch of them)");
  const int64_t n = a.shape()[a.dim() - 2], k = a.shape()[a.dim() - 1];
  const int64_t k2 = b.shape()[b.dim() - 2], m = b.shape()[b.dim() - 1];
  MINI_CHECK(k == k2, "matmul",
             "a of shape " << str(a.shape()) << " and b of shape " << str(b.shape()) << ": a's last size " << k
                           << " is not b's second-to-last " << k2);
  const Shape batch_a(a.shape().begin(), a.shape().end() - 2), batch_b(b.shape().begin(), b.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcast_shape(batch_a, batch_b, "matmul");
  } catch (const Error&) {  // said again with the whole shapes
    MINI_CHECK(false, "matmul",
               "a of shape " << str(a.shape()) << " and b of shape " << str(b.shape()) << ": their batches "
                             << str(batch_a) << " and " << str(batch_b) << " do not broadcast");
  }
  Shape as = batch, bs = batch, cs = batch;
  as.insert(as.end(), {n, k});
  bs.insert(bs.end(), {k, m});
  cs.insert(cs.end(), {n, m});
  const Tensor ea = a.expand(as), eb = b.expand(bs);
  std::vector<double> c(static_cast<size_t>(numel(cs)), 0.0);
  if (numel(cs) == 0 || k == 0) return Tensor(std::move(c), cs);  // nothing to read: every sum is empty
  const size_t nb = batch.size();
  for (int64_t t = 0; t < numel(batch); ++t) {
    const Index index = unravel(t, batch);
    int64_t oa = ea.offset(), ob = eb.offset();
    for (size_t d = 0; d < nb; ++d) {
      oa += index[d] * ea.strides()[d];
      ob += index[d] * eb.strides()[d];
    }
    const double* A = ea.storage()->data() + oa;
    const double* B = eb.storage()->data() + ob;
    double* C = c.data() + t * n * m;
    if (block == 0) product(A, ea.strides()[nb], ea.strides()[nb + 1], B, eb.strides()[nb], eb.strides()[nb + 1], C, n, k, m);
    else product_blocked(A, ea.strides()[nb], ea.strides()[nb + 1], B, eb.strides()[nb], eb.strides()[nb + 1], C, n, k, m, block);
  }
  return Tensor(std::move(c), cs);
}

// x with its last two dims swapped (a view).
Tensor transposed(const Tensor& x) { return x.transpose(x.dim() - 2, x.dim() - 1); }

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return batched(a, b, 0); }

Tensor matmul_blocked(const Tensor& a, const Tensor& b, int64_t block) {
  MINI_CHECK(block >= 1, "matmul_blocked", "a block of " << block << ": a tile has at least one row");
  return batched(a, b, block);
}

Var matmul(const Var& a, const Var& b) {
  return record(matmul(a.data(), b.data()), "matmul", {a, b},
                [av = Saved(a), bv = Saved(b), sa = a.shape(), sb = b.shape()](const Tensor& g) {
                  // c[i][j] = sum_p a[i][p] b[p][j]: a[i][p] moved c's row i by b's row p, so its gradient is
                  // row i of g times row p of b, summed over j: (g bᵀ)[i][p]. Likewise b[p][j]: (aᵀ g)[p][j].
                  return std::vector<Tensor>{sum_to(matmul(g, transposed(bv.get("matmul"))), sa),
                                             sum_to(matmul(transposed(av.get("matmul")), g), sb)};
                });
}

}  // namespace mini
