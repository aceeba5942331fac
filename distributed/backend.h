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
void barrier();
[[noreturn]] void abort(int code);

}  // namespace ember::distributed::backend
