#pragma once
// MPI set-up when the executable is launched under mpirun; a no-op otherwise (and without MPI).
#include <nlohmann/json.hpp>

namespace hdb {

class MpiEnv {
 public:
  MpiEnv(int* argc, char*** argv);
  ~MpiEnv();
  MpiEnv(const MpiEnv&) = delete;
  MpiEnv& operator=(const MpiEnv&) = delete;
  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  nlohmann::json context() const;

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1;
};

// True when the process was started by an MPI launcher (Open MPI, PMIx, MPICH/Hydra).
bool launched_under_mpi();

}  // namespace hdb
