// The job this process belongs to.
//
// Started by an MPI launcher (mpirun, or srun under Slurm), a process is one
// rank of a data-parallel job: join_job() initialises MPI, once, and returns
// the world of all its ranks. Started any other way it is a job of one rank,
// and MPI is never initialised (so `tinygpt train` alone behaves, and starts,
// as a build without MPI does).
//
// MPI is a program's choice, not the library's: a program that calls
// enable_mpi_jobs() (distributed/mpi_communicator.h, the tinygpt_mpi library;
// the CLI does) runs under a launcher as one rank of the job. A program that
// does not, or one built without MPI (no libopenmpi-dev when it was configured),
// refuses to be started by a launcher as one of several processes: each would
// otherwise train alone and write the same checkpoints.
#pragma once
#include <string>

#include "tinygpt/distributed/communicator.h"

namespace tg::dist {

// What a program that links MPI hands the library (enable_mpi_jobs does).
struct MpiSupport {
  Communicator& (*world)();             // MPI's world, initialised on first use
  std::string (*library_version)();     // the MPI library's own name for itself, e.g. "Open MPI v4.1.4"
};
// Call before join_job(); once is enough.
void use_mpi(const MpiSupport& support);

// Whether this program runs data-parallel jobs over MPI (use_mpi was called); the MPI library's name.
bool built_with_mpi();
std::string mpi_library_version();  // "" without MPI

// The number of processes the launcher started, read from its environment
// (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_SIZE); 0 when no launcher started this one.
int launcher_world_size();

// This process's job: MPI's world under a launcher, else single_process().
// Throws tg::Error when a launcher started several processes of a build without MPI.
Communicator& join_job();

// The job join_job() returned, or nullptr before it was called.
Communicator* joined_job();

}  // namespace tg::dist
