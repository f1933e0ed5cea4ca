// A build without MPI: a job is always one process (distributed/job.h).
#include "distributed/job.h"
#include "distributed/mpi_communicator.h"
#include "tensor/error.h"

namespace tg::dist {

Communicator& mpi_world() { fail("this tinygpt was built without MPI"); }

bool built_with_mpi() { return false; }

std::string mpi_library_version() { return ""; }

}  // namespace tg::dist
