// distributed/backend.h over MPI: each function is one MPI call (and its error check).
//
// Errors: MPI's default on MPI_COMM_WORLD is to end the job on any error
// (MPI_ERRORS_ARE_FATAL). init() asks for MPI_ERRORS_RETURN instead, so that a
// failed call becomes an ember::Error with MPI's own text, which the program
// reports (and then ends the job with abort(), see examples/train_gpt.cpp).
#include <mpi.h>

#include <cstdlib>

#include "base/error.h"
#include "distributed/backend.h"

namespace ember::distributed::backend {

namespace {

int rank_ = 0, size_ = 1, local_size_ = 1;

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  EMBER_FAIL("distributed", call << " failed: " << std::string(text, static_cast<size_t>(len)));
}

MPI_Datatype mpi_type(DType dtype) {
  return dtype == DType::Float64 ? MPI_DOUBLE : dtype == DType::Int64 ? MPI_INT64_T : MPI_FLOAT;
}

// Where each rank's part starts, for the v-collectives.
std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> at(counts.size(), 0);
  for (size_t r = 1; r < counts.size(); ++r) at[r] = at[r - 1] + counts[r - 1];
  return at;
}

}  // namespace

bool available() { return true; }

// Open MPI's mpirun gives every rank OMPI_COMM_WORLD_SIZE; PMI_SIZE and
// PMIX_RANK are what MPICH's launcher and Slurm's srun set.
bool launched() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

void init() {
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  EMBER_CHECK(provided >= MPI_THREAD_FUNNELED, "distributed::init",
              "this MPI offers thread level " << provided << "; ember needs MPI_THREAD_FUNNELED (" << MPI_THREAD_FUNNELED
                                              << "): OpenMP threads compute while the main thread calls MPI");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  // The ranks that share this machine's memory: a communicator split by node.
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  check(MPI_Comm_size(local, &local_size_), "MPI_Comm_size");
  check(MPI_Comm_free(&local), "MPI_Comm_free");
}

void finalize() { check(MPI_Finalize(), "MPI_Finalize"); }
int rank() { return rank_; }
int size() { return size_; }
int local_size() { return local_size_; }

std::vector<int64_t> all_gather(const std::vector<int64_t>& mine) {
  std::vector<int64_t> all(mine.size() * static_cast<size_t>(size_));
  check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(), static_cast<int>(mine.size()),
                      MPI_INT64_T, MPI_COMM_WORLD),
        "MPI_Allgather");
  return all;
}

void all_reduce_sum(void* data, int64_t count, DType dtype) {
  check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), mpi_type(dtype), MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void broadcast(void* data, int64_t bytes, int root) {
  check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

void reduce_scatter_sum(const void* send, void* recv, const std::vector<int>& counts, DType dtype) {
  check(MPI_Reduce_scatter(send, recv, counts.data(), mpi_type(dtype), MPI_SUM, MPI_COMM_WORLD), "MPI_Reduce_scatter");
}

void all_gather_in_place(void* data, const std::vector<int>& counts, DType dtype) {
  const std::vector<int> at = displacements(counts);
  check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), at.data(), mpi_type(dtype), MPI_COMM_WORLD),
        "MPI_Allgatherv");
}

void gather(const void* send, void* recv, const std::vector<int>& counts, DType dtype, int root) {
  const std::vector<int> at = displacements(counts);
  check(MPI_Gatherv(send, counts[static_cast<size_t>(rank_)], mpi_type(dtype), recv, counts.data(), at.data(),
                    mpi_type(dtype), root, MPI_COMM_WORLD),
        "MPI_Gatherv");
}

void barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
}

}  // namespace ember::distributed::backend
