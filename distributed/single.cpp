// distributed/backend.h without MPI (EMBER_WITH_MPI off): a job of one process.
// Rank 0 of 1; the sum over one rank is the tensor itself, a broadcast from
// rank 0 to rank 0 changes nothing.
#include <cstdlib>
#include <cstring>

#include "distributed/backend.h"

namespace ember::distributed::backend {

bool available() { return false; }
bool launched() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}
void init() {}
void finalize() {}
int rank() { return 0; }
int size() { return 1; }
int local_size() { return 1; }
std::vector<int64_t> all_gather(const std::vector<int64_t>& mine) { return mine; }
void all_reduce_sum(void*, int64_t, DType) {}
void broadcast(void*, int64_t, int) {}
// One rank: its part is the whole.
void reduce_scatter_sum(const void* send, void* recv, const std::vector<int>& counts, DType dtype) {
  if (send != recv) std::memmove(recv, send, static_cast<size_t>(counts[0]) * dtype_size(dtype));
}
void all_gather_in_place(void*, const std::vector<int>&, DType) {}
void gather(const void* send, void* recv, const std::vector<int>& counts, DType dtype, int) {
  if (send != recv) std::memmove(recv, send, static_cast<size_t>(counts[0]) * dtype_size(dtype));
}
void barrier() {}
void abort(int code) { std::exit(code); }

}  // namespace ember::distributed::backend
