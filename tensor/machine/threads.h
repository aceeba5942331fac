/// @file
/// How many threads ember's kernels use: one number, set by the program
/// (set_num_threads) and read when an op starts. tensor/parallel.h cuts work
/// by it; the governor (governor.h) decides how many OS threads run the pieces.
#pragma once

namespace ember {

/// Sets the threads used by ember's kernels (matmul included: ember splits
/// each product itself and runs OpenBLAS single-threaded, see tensor/machine/blas_library.h).
/// Safe to call while other threads run ops: each op reads the count once
/// when it starts (the new count applies to ops that start after the call).
void set_num_threads(int n);
/// The most set_num_threads accepts (OpenMP aborts when it cannot create a thread).
inline constexpr int kMaxThreads = 1024;
int get_num_threads();

}  // namespace ember
