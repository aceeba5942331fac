// The transport under distributed/distributed.cpp: the only functions that talk to MPI.
// distributed/mpi.cpp implements them with Open MPI (EMBER_WITH_MPI); distributed/single.cpp
// for a job of one process, when ember is built without MPI. distributed.cpp does
// every check before calling them, so they assume valid arguments: contiguous
// buffers of float32/float64 (reductions) or any bytes (broadcast), the same
// counts on every rank.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/dtype.h"

namespace ember::distributed::backend {

bool available();
bool launched();
void init();      // the job is joined; rank/size/local_size are known
void finalize();
int rank();
int size();
int local_size();  // ranks on this machine

// Every rank's `mine` (the same length everywhere), rank by rank: MPI_Allgather.
std::vector<int64_t> all_gather(const std::vector<int64_t>& mine);
// In place, elementwise sum over the ranks: MPI_Allreduce(MPI_IN_PLACE, ..., MPI_SUM).
void all_reduce_sum(void* data, int64_t count, DType dtype);
void broadcast(void* data, int64_t bytes, int root);  // MPI_Bcast of bytes
// Rank r's recv (counts[r] elements) becomes the elementwise sum over the ranks
// of their send's r-th part (the parts side by side in rank order):
// MPI_Reduce_scatter.
void reduce_scatter_sum(const void* send, void* recv, const std::vector<int>& counts, DType dtype);
// In place: data holds the parts of every rank side by side (counts, in rank
// order), this rank's already filled in; afterwards every rank's part is
// everywhere: MPI_Allgatherv(MPI_IN_PLACE, ...).
void all_gather_in_place(void* data, const std::vector<int>& counts, DType dtype);
// root's recv gets every rank's send (counts[r] elements each), side by
// side in rank order: MPI_Gatherv. recv is only read on root.
void gather(const void* send, void* recv, const std::vector<int>& counts, DType dtype, int root);
void barrier();
[[noreturn]] void abort(int code);

}  // namespace ember::distributed::backend
