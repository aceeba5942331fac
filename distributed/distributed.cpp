// The collectives of distributed/distributed.h: argument checks (collective ones, so that
// every rank throws the same error), then one call into the transport
// (distributed/backend.h: MPI in distributed/mpi.cpp, one process in distributed/single.cpp).
#include "distributed/distributed.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sstream>

#include "distributed/backend.h"

namespace ember::distributed {

namespace {

enum class State { Fresh, Running, Finished };
State state = State::Fresh;

void require_running(const char* op) {
  EMBER_CHECK(state == State::Running, op,
              (state == State::Fresh ? "called before distributed::init()" : "called after distributed::finalize()"));
}

// The part of a collective call every rank can compare: what it passes.
constexpr int kFields = 5;  // defined, dtype, numel, contiguous, the op or the root
std::vector<int64_t> describe(const Tensor& t, int64_t arg) {
  if (!t.defined()) return {0, -1, 0, 0, arg};
  return {1, static_cast<int64_t>(t.dtype()), t.numel(), t.is_contiguous() ? 1 : 0, arg};
}

std::string who(int r) {
  std::ostringstream os;
  os << "rank " << r << (r == backend::rank() ? " (this rank)" : "");
  return os.str();
}

// Every rank's arguments are gathered (one small MPI_Allgather) and judged
// alike on every rank: a tensor refused on any rank, or ranks that pass
// different sizes, is an ember::Error on all of them. A check made on one
// rank only would let that rank throw while the others wait in the
// collective for it, forever.
void check_collective(const char* op, const Tensor& t, int64_t arg, bool floats_only, const char* arg_name,
                      std::string (*arg_text)(int64_t)) {
  const std::vector<int64_t> all = backend::all_gather(describe(t, arg));
  const int n = backend::size();
  auto field = [&](int r, int k) { return all[static_cast<size_t>(r * kFields + k)]; };
  for (int r = 0; r < n; ++r) {
    EMBER_CHECK(field(r, 0) == 1, op, "the tensor of " << who(r) << " is undefined");
    const DType dt = static_cast<DType>(field(r, 1));
    EMBER_CHECK(!floats_only || is_floating(dt), op,
                "the tensor of " << who(r) << " is " << dtype_name(dt) << "; only float32 and float64 tensors are reduced");
    if (field(r, 3) == 0) {
      std::ostringstream detail;
      if (r == backend::rank()) detail << " (shape " << shape_str(t.shape()) << ", strides " << shape_str(t.stride()) << ")";
      EMBER_FAIL(op, "the tensor of " << who(r) << " is not contiguous" << detail.str()
                                      << "; pass t.contiguous() and copy the result back");
    }
    EMBER_CHECK(field(r, 2) <= INT_MAX, op,
                "the tensor of " << who(r) << " has " << field(r, 2) << " elements; MPI counts stop at " << INT_MAX);
    const std::string bad = arg_text(field(r, 4));
    EMBER_CHECK(!bad.empty(), op, who(r) << " passed " << arg_name << " " << field(r, 4) << ", outside the job's ranks 0.."
                                         << n - 1);
  }
  bool same = true;
  for (int r = 1; r < n; ++r)
    for (int k = 1; k < kFields; ++k) same = same && field(r, k) == field(0, k);
  if (same) return;
  std::ostringstream os;
  for (int r = 0; r < n; ++r)
    os << (r ? "; " : "") << who(r) << ": " << dtype_name(static_cast<DType>(field(r, 1))) << ", " << field(r, 2)
       << " elements, " << arg_name << " " << arg_text(field(r, 4));
  EMBER_FAIL(op, "the ranks' calls differ (" << os.str() << "); every rank must pass the same dtype, size and " << arg_name);
}

std::string op_text(int64_t op) {
  if (op == static_cast<int64_t>(ReduceOp::Sum)) return "sum";
  if (op == static_cast<int64_t>(ReduceOp::Mean)) return "mean";
  return "";
}
std::string root_text(int64_t root) { return root >= 0 && root < backend::size() ? std::to_string(root) : ""; }

// The sum is what MPI computes; the mean divides it by the number of ranks
// here, on every rank alike (division, not a multiplication by 1/N: the same
// bits as sum / N computed by hand).
void finish_reduce(const Tensor& t, ReduceOp op) {
  const int n = backend::size();
  if (op == ReduceOp::Mean && n > 1) {
    EMBER_DISPATCH_FLOAT(t.dtype(), "distributed::all_reduce", [&]<typename T>() {
      T* p = t.data_ptr<T>();
      const T div = static_cast<T>(n);
      for (int64_t i = 0, e = t.numel(); i < e; ++i) p[i] /= div;
    });
  }
  t.storage()->bump_version();  // an in-place write, like any other
}

// Local checks of the unchecked reduction (a caller's own mistake).
void check_local(const char* op, const Tensor& t) {
  EMBER_CHECK(t.defined(), op, "the tensor is undefined");
  EMBER_CHECK(is_floating(t.dtype()), op,
              "the tensor is " << dtype_name(t.dtype()) << "; only float32 and float64 tensors are reduced");
  EMBER_CHECK(t.is_contiguous(), op, "the tensor of shape " << shape_str(t.shape()) << " is not contiguous");
  EMBER_CHECK(t.numel() <= INT_MAX, op, t.numel() << " elements; MPI counts stop at " << INT_MAX);
}

// The parts of a v-collective: one count per rank, each >= 0 and within MPI's
// int, adding up to `total` (the tensor that holds all the parts).
std::vector<int> part_counts(const char* op, const std::vector<int64_t>& counts, int64_t total) {
  EMBER_CHECK(counts.size() == static_cast<size_t>(backend::size()), op,
              counts.size() << " counts for a job of " << backend::size() << " ranks; give one per rank");
  std::vector<int> out;
  int64_t sum = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    EMBER_CHECK(counts[r] >= 0 && counts[r] <= INT_MAX, op, "count " << counts[r] << " for rank " << r << " is outside 0.." << INT_MAX);
    out.push_back(static_cast<int>(counts[r]));
    sum += counts[r];
  }
  EMBER_CHECK(sum == total, op, "the counts add up to " << sum << " but the tensor of all the parts has " << total << " elements");
  return out;
}

}  // namespace

bool available() { return backend::available(); }
bool launched() { return backend::launched(); }

void init() {
  EMBER_CHECK(state == State::Fresh, "distributed::init",
              (state == State::Running ? "called twice" : "called after distributed::finalize(): MPI cannot be joined again"));
  EMBER_CHECK(backend::available() || !backend::launched(), "distributed::init",
              "this program was started by mpirun, but ember was built without MPI (EMBER_WITH_MPI=OFF): every "
              "process would train alone; install libopenmpi-dev and rebuild");
  backend::init();
  state = State::Running;
}

void finalize() {
  require_running("distributed::finalize");
  state = State::Finished;
  backend::finalize();
}

bool is_initialized() { return state == State::Running; }

int rank() {
  require_running("distributed::rank");
  return backend::rank();
}
int world_size() {
  require_running("distributed::world_size");
  return backend::size();
}
int local_world_size() {
  require_running("distributed::local_world_size");
  return backend::local_size();
}

const char* reduce_op_name(ReduceOp op) { return op == ReduceOp::Sum ? "sum" : "mean"; }

void all_reduce(const Tensor& t, ReduceOp op) {
  require_running("distributed::all_reduce");
  check_collective("distributed::all_reduce", t, static_cast<int64_t>(op), /*floats_only=*/true, "op", op_text);
  backend::all_reduce_sum(t.raw_data(), t.numel(), t.dtype());
  finish_reduce(t, op);
}

void all_reduce_unchecked(const Tensor& t, ReduceOp op) {
  require_running("distributed::all_reduce_unchecked");
  check_local("distributed::all_reduce_unchecked", t);
  backend::all_reduce_sum(t.raw_data(), t.numel(), t.dtype());
  finish_reduce(t, op);
}

void reduce_scatter_unchecked(const Tensor& in, const Tensor& out, const std::vector<int64_t>& counts, ReduceOp op) {
  const char* name = "distributed::reduce_scatter_unchecked";
  require_running(name);
  check_local(name, in);
  check_local(name, out);
  EMBER_CHECK(in.dtype() == out.dtype(), name, "in is " << dtype_name(in.dtype()) << " but out " << dtype_name(out.dtype()));
  const std::vector<int> parts = part_counts(name, counts, in.numel());
  EMBER_CHECK(out.numel() == counts[static_cast<size_t>(backend::rank())], name,
              "out has " << out.numel() << " elements but this rank's part (" << backend::rank() << ") has "
                         << counts[static_cast<size_t>(backend::rank())]);
  backend::reduce_scatter_sum(in.raw_data(), out.raw_data(), parts, in.dtype());
  finish_reduce(out, op);
}

void all_gather_unchecked(const Tensor& t, const std::vector<int64_t>& counts) {
  const char* name = "distributed::all_gather_unchecked";
  require_running(name);
  check_local(name, t);
  backend::all_gather_in_place(t.raw_data(), part_counts(name, counts, t.numel()), t.dtype());
  t.storage()->bump_version();
}

void gather_unchecked(const Tensor& mine, const Tensor& out, const std::vector<int64_t>& counts, int root) {
  const char* name = "distributed::gather_unchecked";
  require_running(name);
  EMBER_CHECK(root >= 0 && root < backend::size(), name, "root " << root << " is outside the job's ranks 0.." << backend::size() - 1);
  EMBER_CHECK(mine.defined() && mine.is_contiguous() && mine.dtype() != kBool, name,
              "mine must be a defined contiguous float32, float64 or int64 tensor");
  const std::vector<int64_t> total{std::accumulate(counts.begin(), counts.end(), int64_t{0})};
  const std::vector<int> parts = part_counts(name, counts, total[0]);
  EMBER_CHECK(mine.numel() == counts[static_cast<size_t>(backend::rank())], name,
              "mine has " << mine.numel() << " elements but this rank's count is " << counts[static_cast<size_t>(backend::rank())]);
  void* recv = nullptr;
  if (backend::rank() == root) {
    EMBER_CHECK(out.defined() && out.is_contiguous() && out.dtype() == mine.dtype() && out.numel() == total[0], name,
                "out on the root must be a contiguous " << dtype_name(mine.dtype()) << " tensor of " << total[0] << " elements");
    recv = out.raw_data();
  }
  backend::gather(mine.raw_data(), recv, parts, mine.dtype(), root);
  if (recv) out.storage()->bump_version();
}

void broadcast(const Tensor& t, int root) {
  require_running("distributed::broadcast");
  check_collective("distributed::broadcast", t, root, /*floats_only=*/false, "root", root_text);
  // (the same on every rank now that they agree on dtype and size)
  const int64_t bytes = t.numel() * static_cast<int64_t>(dtype_size(t.dtype()));
  EMBER_CHECK(bytes <= INT_MAX, "distributed::broadcast", "the tensor has " << bytes << " bytes; MPI counts stop at " << INT_MAX);
  backend::broadcast(t.raw_data(), bytes, root);
  t.storage()->bump_version();
}

void barrier() {
  require_running("distributed::barrier");
  backend::barrier();
}

std::vector<std::string> all_gather_text(const std::string& mine) {
  require_running("distributed::all_gather_text");
  const int n = backend::size();
  const std::vector<int64_t> lengths = backend::all_gather({static_cast<int64_t>(mine.size())});
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const size_t words = static_cast<size_t>((longest + 7) / 8);  // the bytes, 8 to an int64, zero-padded
  std::vector<int64_t> packed(words, 0);
  std::memcpy(packed.data(), mine.data(), mine.size());
  const std::vector<int64_t> all = backend::all_gather(packed);
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r)
    out.emplace_back(reinterpret_cast<const char*>(all.data() + static_cast<size_t>(r) * words),
                     static_cast<size_t>(lengths[static_cast<size_t>(r)]));
  return out;
}

namespace {
// "4:name5:value" per setting: each part after its length, so that a name
// or value may hold any byte (a vocabulary, a path).
std::string pack(const std::vector<std::pair<std::string, std::string>>& settings) {
  std::string out;
  for (const auto& [name, value] : settings)
    out += std::to_string(name.size()) + ':' + name + std::to_string(value.size()) + ':' + value;
  return out;
}
std::vector<std::pair<std::string, std::string>> unpack(const std::string& text) {
  size_t at = 0;
  auto part = [&] {
    const size_t colon = text.find(':', at);
    const size_t n = std::stoul(text.substr(at, colon - at));
    at = colon + 1 + n;
    return text.substr(colon + 1, n);
  };
  std::vector<std::pair<std::string, std::string>> out;
  while (at < text.size()) {
    std::string name = part();
    out.emplace_back(std::move(name), part());
  }
  return out;
}
// "rank 1", "ranks 0 and 2", "ranks 0, 2 and 3"
std::string ranks_text(const std::vector<int>& rs) {
  std::string out = rs.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < rs.size(); ++i) out += (i == 0 ? "" : i + 1 == rs.size() ? " and " : ", ") + std::to_string(rs[i]);
  return out;
}
std::string shown(const std::string& value) { return value.size() <= 60 ? value : value.substr(0, 57) + "..."; }
}  // namespace

void check_agreement(const char* op, const std::vector<std::pair<std::string, std::string>>& settings) {
  require_running("distributed::check_agreement");
  std::vector<std::vector<std::pair<std::string, std::string>>> ranks;
  for (const std::string& text : all_gather_text(pack(settings))) ranks.push_back(unpack(text));
  const int n = static_cast<int>(ranks.size());
  std::ostringstream names_differ, values_differ;
  for (int r = 1; r < n; ++r) {
    bool same_names = ranks[static_cast<size_t>(r)].size() == ranks[0].size();
    for (size_t k = 0; same_names && k < ranks[0].size(); ++k) same_names = ranks[static_cast<size_t>(r)][k].first == ranks[0][k].first;
    if (!same_names) names_differ << (names_differ.tellp() > 0 ? ", " : "") << r;
  }
  EMBER_CHECK(names_differ.tellp() == 0, op,
              "the ranks compare different settings (rank " << names_differ.str()
                                                            << " lists others than rank 0): run the same program on every rank");
  for (size_t k = 0; k < ranks[0].size(); ++k) {
    // Each distinct value once, with the ranks that have it.
    std::vector<std::pair<std::string, std::vector<int>>> values;
    for (int r = 0; r < n; ++r) {
      const std::string& v = ranks[static_cast<size_t>(r)][k].second;
      auto it = std::find_if(values.begin(), values.end(), [&](const auto& e) { return e.first == v; });
      if (it == values.end()) values.push_back({v, {r}});
      else it->second.push_back(r);
    }
    if (values.size() == 1) continue;
    values_differ << (values_differ.tellp() > 0 ? "; " : "") << ranks[0][k].first << " is ";
    for (size_t i = 0; i < values.size(); ++i)
      values_differ << (i == 0 ? "" : i + 1 == values.size() ? " and " : ", ") << shown(values[i].first) << " on "
                    << ranks_text(values[i].second);
  }
  EMBER_CHECK(values_differ.tellp() == 0, op,
              "the ranks disagree: " << values_differ.str() << "; every rank must be given the same settings");
}

void abort(int code) {
  if (state == State::Running) backend::abort(code);
  std::exit(code);
}

std::string where() {
  if (state != State::Running || backend::size() == 1) return "";
  return "rank " + std::to_string(backend::rank()) + " of " + std::to_string(backend::size());
}

}  // namespace ember::distributed
