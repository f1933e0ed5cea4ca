// MPI's world as a Communicator (distributed/communicator.h): one rank per
// process that mpirun started. Its own library, tinygpt_mpi (the package's
// tinygpt::mpi), so that only programs that run jobs link MPI. Built from
// mpi_communicator.cpp when CMake found MPI, else from no_mpi.cpp, whose
// enable_mpi_jobs() does nothing.
#pragma once
#include "tinygpt/distributed/communicator.h"

namespace tg::dist {

// Makes join_job() (distributed/job.h) join MPI's world when a launcher started
// this process. Call it first thing in main().
void enable_mpi_jobs();

// Initialises MPI on first use (MPI_Init_thread, FUNNELED: only the main thread
// calls MPI, OpenMP's threads never do) and finalises it at exit.
Communicator& mpi_world();

}  // namespace tg::dist
