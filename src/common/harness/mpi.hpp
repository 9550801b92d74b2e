#pragma once
// EP mode: when the executable is launched under mpirun every rank runs the benchmark on its own
// device and rank 0 gathers the rank documents; a no-op otherwise and in builds without MPI. Built
// on the one MPI wrapper, Comm (harness/comm.hpp).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/comm.hpp"

namespace hdb {

// Owns MPI for the whole run: starts it under a launcher, ends it when destroyed.
class MpiEnv {
 public:
  MpiEnv(int* argc, char*** argv);
  ~MpiEnv();
  MpiEnv(const MpiEnv&) = delete;
  MpiEnv& operator=(const MpiEnv&) = delete;
  bool active() const { return active_; }
  int rank() const { return world_.rank(); }
  int size() const { return world_.size(); }
  int local_rank() const { return local_rank_; }  // among the ranks sharing this node
  int local_size() const { return local_size_; }
  nlohmann::json context() const;
  // Rank 0 receives every rank's text (in rank order); other ranks get an empty vector.
  std::vector<std::string> gather(const std::string& text) const { return world_.gather(text, 0); }
  // True on every rank when `flag` is true on every rank; `flag` itself without MPI.
  bool all(bool flag) const { return world_.all(flag); }
  // The lowest rank with a non-zero `code`, that code and its message, on every rank (Comm::first_error).
  Comm::Agreement first_error(int code, const std::string& message) const { return world_.first_error(code, message); }
  // Ends the whole job with `code` (MPI_Abort): a rank that stops while others may wait for it.
  [[noreturn]] void abort(int code) const { Comm::abort(code); }

 private:
  bool active_ = false;
  Comm world_ = Comm::single();
  int local_rank_ = 0, local_size_ = 1;
};

// Rank 0's view of an MPI run: `docs[r]` is rank r's results document (with "rank", "exit_code" and
// optionally "skipped"). Returns one document in the usual schema: the results of the lowest rank
// that has each case, each with "across_ranks" statistics of the median kernel time (min, max,
// mean, stddev, cv, outlier ranks), and "mpi" with the mode that ran (`mode`: "ep", every rank on
// its own; "tp", collective cases), the hosts and their ranks, and the per-rank documents kept
// whole. A rank that exited with neither 0 nor 77 (no device) counts as a failure even when none
// of its cases failed.
nlohmann::json merge_rank_documents(const std::vector<nlohmann::json>& docs, const std::string& mode = "ep");

}  // namespace hdb
