// A tour of ember's tensors: shapes and strides, views that share memory,
// broadcasting, reductions, matmul, softmax, and the embedding lookup of
// lesson B done with one index_select.
//
// Build and run:  cmake --build build --target tensor_tour && ./build/examples/tensor_tour
#include <cstdint>
#include <iostream>
#include <vector>

#include "common/program.h"
#include "ember.h"

using ember::Shape;
using ember::Tensor;
using ember::shape_str;

static void section(const char* title) { std::cout << "\n=== " << title << " ===\n"; }

// The program; main() below adds --help and turns any error into one line.
int program() {
  std::cout << "machine: " << ember::examples::machine_line() << "\n";
  // ---------------------------------------------------------------------------
  section("1. shape and strides");
  // A tensor is a view of a flat buffer: element (i, j) of x lives at
  // buffer[offset + i*stride[0] + j*stride[1]]. Row-major (2, 3) -> strides (3, 1).
  Tensor x = ember::arange(6).reshape({2, 3});
  std::cout << "x = arange(6).reshape({2, 3})\n" << x << "\n";
  std::cout << "shape " << shape_str(x.shape()) << ", strides " << shape_str(x.stride())
            << ", contiguous: " << std::boolalpha << x.is_contiguous() << "\n";

  // ---------------------------------------------------------------------------
  section("2. a transpose is a view: same storage, swapped strides");
  // No numbers move: x.t() only swaps shape and strides, so reading it row by
  // row jumps through the buffer (it is no longer contiguous).
  Tensor xt = x.t();
  std::cout << "xt = x.t()\n" << xt << "\n";
  std::cout << "shape " << shape_str(xt.shape()) << ", strides " << shape_str(xt.stride())
            << ", contiguous: " << xt.is_contiguous()
            << ", shares x's storage: " << (xt.storage() == x.storage()) << "\n";
  // contiguous() is what copies: a fresh buffer in xt's row-major order.
  Tensor xc = xt.contiguous();
  std::cout << "xt.contiguous(): strides " << shape_str(xc.stride())
            << ", shares x's storage: " << (xc.storage() == x.storage()) << "\n";

  // ---------------------------------------------------------------------------
  section("3. broadcasting");
  // Shapes are aligned from the right; a size-1 (or missing) dim is repeated
  // to match. (2, 1) + (1, 3) -> (2, 3), without copying either input.
  Tensor col = ember::tensor(std::vector<float>{10, 20}, {2, 1});
  Tensor row = ember::tensor(std::vector<float>{1, 2, 3}, {1, 3});
  Tensor grid = col + row;
  std::cout << shape_str(col.shape()) << " + " << shape_str(row.shape()) << " -> "
            << shape_str(grid.shape()) << "\n" << grid << "\n";
  // The broadcast view behind it: the repeated dim has stride 0.
  Tensor col_wide = col.expand({2, 3});
  std::cout << "col.expand({2, 3}) has strides " << shape_str(col_wide.stride()) << "\n";

  // ---------------------------------------------------------------------------
  section("4. reductions");
  // sum over dim 1 removes that dim: (2, 3) -> (2,); over everything -> a scalar.
  std::cout << "x.sum({1}) = " << x.sum({1}) << "\n";
  std::cout << "x.sum({0}, keepdim=true) has shape " << shape_str(x.sum({0}, true).shape()) << "\n";
  std::cout << "x.mean() = " << x.mean().item<float>() << "\n";

  // ---------------------------------------------------------------------------
  section("5. matmul");
  // (2, 3) @ (3, 2) -> (2, 2). Passing the transpose view costs no copy: the
  // BLAS call reads it through its "transposed" flag.
  Tensor gram = ember::matmul(x, xt);
  std::cout << "x @ x.t() = \n" << gram << "\n";

  // ---------------------------------------------------------------------------
  section("6. softmax (lesson C: two attention scores)");
  // softmax(s)_j = exp(s_j) / sum_k exp(s_k): scores (2, 1) -> weights (0.731, 0.269).
  Tensor scores = ember::tensor(std::vector<float>{2, 1});
  Tensor weights = scores.softmax(0);
  std::cout << "softmax(" << scores << ") = " << weights << "\n";
  // The context vector is the weighted sum of the values: 0.731*10 + 0.269*4 = 8.386.
  Tensor values = ember::tensor(std::vector<float>{10, 4});
  std::cout << "context = sum(weights * values) = " << (weights * values).sum().item<float>() << "\n";

  // ---------------------------------------------------------------------------
  section("7. embedding lookup (lesson B: \"The cat sleeps\")");
  // Vocabulary: 0 sleeps, 1 dog, 2 The, 3 runs, 4 cat. The table E has one
  // D=2 row per word (V=5).
  Tensor E = ember::tensor(std::vector<float>{-0.4f, 0.8f,    // 0 sleeps
                                              0.1f, 0.5f,     // 1 dog
                                              0.2f, -0.1f,    // 2 The
                                              -0.2f, 0.6f,    // 3 runs
                                              0.7f, 0.3f},    // 4 cat
                           {5, 2});
  // The sentence as ids, batch of one: (B, T) = (1, 3).
  Tensor ids = ember::tensor(std::vector<int64_t>{2, 4, 0}, {1, 3});
  // An id is an address: the lookup copies row ids[b, t] of E. index_select
  // takes a 1-D list of rows, so flatten (B, T) -> (B*T,), select -> (B*T, D),
  // then restore (B, T, D).
  Tensor emb = ember::index_select(E, 0, ids.flatten()).reshape({1, 3, 2});
  std::cout << "ids " << shape_str(ids.shape()) << " -> embeddings " << shape_str(emb.shape()) << "\n"
            << emb << "\n";
  // The same numbers as one_hot(ids) @ E, but without building the (B, T, V)
  // one-hot tensor, which for a real vocabulary would be mostly zeros.
  Tensor via_one_hot = ember::matmul(ember::one_hot(ids, 5).to(ember::kFloat32), E);
  std::cout << "one_hot(ids, 5) @ E gives the same: "
            << (emb.to_vector<float>() == via_one_hot.to_vector<float>()) << "\n";
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"A tour of ember tensors: strides, views, broadcasting, reductions, matmul, softmax, the lesson-B lookup."};
  EMBER_PARSE("tensor_tour", app, argc, argv);
  return ember::examples::run("tensor_tour", program);
}
