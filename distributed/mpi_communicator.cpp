#include "tinygpt/distributed/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "tinygpt/distributed/job.h"
#include "tinygpt/tensor/error.h"

namespace tg::dist {

namespace {

// MPI counts are ints: larger buffers go in pieces of this many elements.
constexpr size_t kMaxPiece = size_t{1} << 30;

void check_mpi(int result, const char* call) {
  if (result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(result, text, &length);
  fail("MPI: ", call, " failed: ", std::string(text, static_cast<size_t>(length)));
}

template <class Value>
void all_reduce_sum_in_pieces(std::span<Value> values, MPI_Datatype type) {
  for (size_t first = 0; first < values.size(); first += kMaxPiece) {
    const size_t count = std::min(kMaxPiece, values.size() - first);
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data() + first, static_cast<int>(count), type, MPI_SUM,
                            MPI_COMM_WORLD),
              "MPI_Allreduce");
  }
}

class MpiWorld final : public Communicator {
 public:
  MpiWorld() {
    int provided = 0;
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Errors come back as codes (check_mpi turns them into tg::Error) instead of aborting silently.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiWorld() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string description() const override {
    return std::to_string(size_) + (size_ == 1 ? " rank" : " ranks") + " over " + mpi_library_version();
  }
  void all_reduce_sum(std::span<float> values) override { all_reduce_sum_in_pieces(values, MPI_FLOAT); }
  void all_reduce_sum(std::span<double> values) override { all_reduce_sum_in_pieces(values, MPI_DOUBLE); }
  std::vector<uint64_t> all_gather(std::span<const uint64_t> values) override {
    check(values.size() <= INT_MAX, "MPI all_gather: ", values.size(), " values is too many");
    std::vector<uint64_t> gathered(values.size() * static_cast<size_t>(size_));
    check_mpi(MPI_Allgather(values.data(), static_cast<int>(values.size()), MPI_UINT64_T, gathered.data(),
                            static_cast<int>(values.size()), MPI_UINT64_T, MPI_COMM_WORLD),
              "MPI_Allgather");
    return gathered;
  }
  [[noreturn]] void abort(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // MPI_Abort does not return; this is for the compiler
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

Communicator& mpi_world() {
  static MpiWorld world;
  return world;
}

namespace {

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<size_t>(length));
  // "Open MPI v4.1.4, package: Debian OpenMPI, ...": the name and version are enough.
  if (const size_t comma = version.find(','); comma != std::string::npos) version.resize(comma);
  while (!version.empty() && (version.back() == '\n' || version.back() == ' ')) version.pop_back();
  return version;
}

}  // namespace

void enable_mpi_jobs() { use_mpi({&mpi_world, &library_version}); }

}  // namespace tg::dist
