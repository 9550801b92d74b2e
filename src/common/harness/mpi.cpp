#include "harness/mpi.hpp"

#include <cstdlib>

#ifdef HDB_HAVE_MPI
#include <mpi.h>
#endif

namespace hdb {

bool launched_under_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

MpiEnv::MpiEnv(int* argc, char*** argv) {
#ifdef HDB_HAVE_MPI
  // Only under a launcher: a singleton MPI_Init would start a runtime for nothing.
  if (launched_under_mpi()) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    active_ = true;
  }
#else
  (void)argc;
  (void)argv;
#endif
}

MpiEnv::~MpiEnv() {
#ifdef HDB_HAVE_MPI
  if (active_) MPI_Finalize();
#endif
}

nlohmann::json MpiEnv::context() const {
  return {{"active", active_}, {"rank", rank_}, {"size", size_}};
}

}  // namespace hdb
