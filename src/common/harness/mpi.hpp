#pragma once
// MPI when the executable is launched under mpirun (EP mode: every rank runs the benchmark on its
// own device, rank 0 gathers); a no-op otherwise and in builds without MPI.
#include <string>
#include <vector>

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
  int local_rank() const { return local_rank_; }  // among the ranks sharing this node
  int local_size() const { return local_size_; }
  nlohmann::json context() const;
  // Rank 0 receives every rank's text (in rank order); other ranks get an empty vector.
  std::vector<std::string> gather(const std::string& text) const;
  // True on every rank when `flag` is true on every rank (MPI_LAND); `flag` itself without MPI.
  bool all(bool flag) const;

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

// True when the process was started by an MPI launcher (Open MPI, PMIx, MPICH/Hydra).
bool launched_under_mpi();

// Rank 0's view of an EP run: `docs[r]` is rank r's results document (with "rank", "exit_code" and
// optionally "skipped"). Returns one document in the usual schema: the results of the lowest rank
// that has each case, each with "across_ranks" statistics of the median kernel time (min, max,
// mean, stddev, cv, outlier ranks), and "mpi" with the per-rank documents kept whole.
nlohmann::json merge_rank_documents(const std::vector<nlohmann::json>& docs);

}  // namespace hdb
