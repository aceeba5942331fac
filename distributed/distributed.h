/// @file
/// Several processes, one job: the few collective operations data-parallel
/// training needs, each a thin wrapper over one MPI call (Open MPI, Debian
/// libopenmpi-dev; the library ember::distributed, built with EMBER_WITH_MPI).
///
/// A job is N copies of the same program started by a launcher:
///   mpirun -np 2 ./build/examples/train_gpt
/// Each copy is a *rank* (0 .. N-1) with its own memory; they share numbers
/// only through these calls. A collective must be called by every rank, in
/// the same order, with the same sizes: a rank that skips one leaves the
/// others waiting inside it. So the checks here are collective too (every
/// rank learns that the sizes differ and throws the same ember::Error), and a
/// rank that fails on its own must end the job with abort().
///
/// Built without MPI, the same functions describe a job of one process:
/// rank 0 of 1, every collective leaves its tensor as it is.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace ember::distributed {

/// True when ember was built with MPI (EMBER_WITH_MPI).
bool available();
/// True when this process was started by a launcher such as mpirun (which
/// tells each rank its place through environment variables), i.e. when
/// init() would join a job of several processes.
bool launched();

/// Joins the job (MPI_Init_thread; ember calls MPI from the thread that
/// called init() only: MPI_THREAD_FUNNELED). MPI errors then come back as
/// ember::Error instead of ending the job. Error if called twice.
void init();
/// Leaves the job (MPI_Finalize): every rank must call it, after its last
/// collective. Nothing in distributed/ works after it.
void finalize();
bool is_initialized();  // init() was called and finalize() not yet

/// This process's place in the job, 0 .. world_size() - 1; error before init().
int rank();
int world_size();
/// How many ranks run on this machine (they share its cores).
int local_world_size();

enum class ReduceOp { Sum, Mean };  // Mean: the sum divided by world_size(), on every rank
const char* reduce_op_name(ReduceOp op);

/// In place: every rank's t becomes the elementwise sum (or mean) of all
/// ranks' t (MPI_Allreduce). float32 or float64, contiguous. Before the
/// reduction, one small collective checks that every rank passes the same
/// dtype, element count and op: a mismatch is an ember::Error on every rank
/// (naming this rank's values and the range across ranks), not a hang or a
/// half-filled buffer.
void all_reduce(const Tensor& t, ReduceOp op = ReduceOp::Sum);
/// The same without the agreement check, for callers whose layout is checked
/// once (DataParallel's buckets, every step): the local checks remain, but
/// ranks that pass different sizes get what MPI gives them (an MPI error, or
/// a hang).
void all_reduce_unchecked(const Tensor& t, ReduceOp op = ReduceOp::Sum);

/// The collectives of sharding (distributed/zero.h), unchecked across the
/// ranks like all_reduce_unchecked (the caller agrees on the layout once):
/// `counts` has one entry per rank, the size of that rank's part, and the
/// parts lie side by side in rank order. The local checks name the op.
///
/// Reduce-scatter (MPI_Reduce_scatter): rank r's `out` (counts[r] elements)
/// becomes the elementwise sum (or mean) over the ranks of their `in`'s r-th
/// part. float32 or float64, contiguous, one dtype. Under a ring each rank
/// sends (N-1)/N of `in`: half of what an all-reduce of `in` sends.
void reduce_scatter_unchecked(const Tensor& in, const Tensor& out, const std::vector<int64_t>& counts,
                              ReduceOp op = ReduceOp::Sum);
/// All-gather in place (MPI_Allgatherv): each rank has filled its own part of
/// t; afterwards t holds every rank's part on every rank. float32 or float64.
void all_gather_unchecked(const Tensor& t, const std::vector<int64_t>& counts);
/// Gather (MPI_Gatherv): root's `out` (all the parts) gets every rank's
/// `mine` (counts[rank()] elements), side by side in rank order. `out` is
/// only used on root (elsewhere it may be undefined). float32, float64 or int64.
void gather_unchecked(const Tensor& mine, const Tensor& out, const std::vector<int64_t>& counts, int root = 0);

/// In place: every rank's t becomes root's t (MPI_Bcast). Any dtype,
/// contiguous; the same agreement check as all_reduce (dtype, count, root).
void broadcast(const Tensor& t, int root = 0);

/// Returns when every rank has called it (MPI_Barrier).
void barrier();

/// Every rank's text, rank by rank, on every rank (two all-gathers: the
/// lengths, then the bytes).
std::vector<std::string> all_gather_text(const std::string& mine);
/// The ranks' agreement, checked collectively: every rank passes the same
/// settings by name ({"lr", "0.003"}, ...) with its own values. Unless every
/// value is equal on every rank, every rank throws the same ember::Error (op),
/// naming each setting that differs and its value on each rank:
///   the ranks disagree: lr is 0.003 on rank 0 and 0.001 on rank 1; ...
void check_agreement(const char* op, const std::vector<std::pair<std::string, std::string>>& settings);

/// Ends every rank of the job with exit status `code` (MPI_Abort): for a rank
/// that cannot go on while the others may be waiting for it in a collective.
/// Print the reason first. In a job of one process: std::exit(code).
[[noreturn]] void abort(int code);

/// "rank 1 of 2" (empty in a job of one process): for messages.
std::string where();

}  // namespace ember::distributed
