#include "tinygpt/distributed/job.h"

#include <cstdlib>
#include <memory>

#include "tinygpt/tensor/error.h"

namespace tg::dist {

namespace {

Communicator* the_job = nullptr;
MpiSupport mpi_support = {nullptr, nullptr};

}  // namespace

void use_mpi(const MpiSupport& support) { mpi_support = support; }

bool built_with_mpi() { return mpi_support.world != nullptr; }

std::string mpi_library_version() { return mpi_support.library_version ? mpi_support.library_version() : ""; }

int launcher_world_size() {
  // Open MPI's mpirun, then the PMI and PMIx variables of Slurm's srun and MPICH's Hydra.
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* value = std::getenv(variable)) {
      char* end = nullptr;
      const long size = std::strtol(value, &end, 10);
      if (end != value && *end == '\0' && size > 0 && size < (1 << 24)) return static_cast<int>(size);
    }
  }
  return 0;
}

Communicator& join_job() {
  if (the_job) return *the_job;
  const int launched = launcher_world_size();
  if (launched == 0) {
    the_job = &single_process();
  } else {
    check(built_with_mpi() || launched == 1, "this tinygpt was built without MPI, but a launcher started it as one of ",
          launched, " processes, each of which would train alone; install Open MPI (bash scripts/setup.sh installs "
          "libopenmpi-dev) and rebuild, or run a single process");
    the_job = built_with_mpi() ? &mpi_support.world() : &single_process();
  }
  return *the_job;
}

Communicator* joined_job() { return the_job; }

}  // namespace tg::dist
