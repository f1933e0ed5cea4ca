// A build without MPI: a job is always one process (distributed/job.h).
#include "tinygpt/distributed/mpi_communicator.h"
#include "tinygpt/tensor/error.h"

namespace tg::dist {

void enable_mpi_jobs() {}

Communicator& mpi_world() { fail("this tinygpt was built without MPI"); }

}  // namespace tg::dist
