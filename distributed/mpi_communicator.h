// MPI's world as a Communicator (distributed/communicator.h): one rank per
// process that mpirun started. Compiled only when CMake found MPI; otherwise
// distributed/no_mpi.cpp stands in and built_with_mpi() is false.
#pragma once
#include "distributed/communicator.h"

namespace tg::dist {

// Initialises MPI on first use (MPI_Init_thread, FUNNELED: only the main thread
// calls MPI, OpenMP's threads never do) and finalises it at exit.
Communicator& mpi_world();

}  // namespace tg::dist
