#pragma once
// The one wrapper of MPI: the only code that calls MPI_*. A Comm is a communicator with the few
// collectives the suite needs: over a private duplicate of MPI_COMM_WORLD when the process runs
// under mpirun, and over one process (size 1, no MPI calls at all) otherwise and in builds without
// MPI. The harness's EP mode (harness/mpi.hpp: start, node-local rank, gather of the rank
// documents) and the true-parallel dist benchmark both use it. Every call but init/finalize is
// collective: all ranks must make the same calls in the same order.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hdb {

class Comm {
 public:
  // MPI_Init when the process was started by an MPI launcher (Open MPI, PMIx, MPICH/Hydra) in a
  // build with MPI: a singleton MPI_Init would start a runtime for nothing. Returns whether MPI runs.
  // finalize() ends what init started; both belong to the one owner of the run (MpiEnv).
  static bool init(int* argc, char*** argv);
  static void finalize();
  // MPI_COMM_WORLD's ranks when MPI has been initialised (EP/TP run under mpirun), else one process.
  static Comm world();
  // One process, no MPI (tests, runs without mpirun).
  static Comm single();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool distributed() const { return impl_ != nullptr; }

  // The ranks of this communicator that share this node (rank order kept).
  Comm node() const;

  void barrier() const;
  // True on every rank when `flag` is true on every rank.
  bool all(bool flag) const;
  // Element-wise maximum / sum over ranks, in place.
  void max_inplace(std::vector<double>& v) const;
  std::uint64_t max(std::uint64_t x) const;
  std::uint64_t sum(std::uint64_t x) const;
  // x of every rank, in rank order.
  std::vector<std::uint64_t> all_gather(std::uint64_t x) const;
  // Root's text on every rank.
  std::string broadcast(const std::string& text, int root) const;
  // Every rank's text, in rank order, on `root`; the other ranks get an empty vector.
  std::vector<std::string> gather(const std::string& text, int root) const;

  // The first rank (lowest) whose `failed` is true and its message, identical on every rank;
  // rank == -1 when no rank failed. The agreement step behind collective skips and verdicts.
  struct Agreement {
    int rank = -1;
    std::string message;
    int code = 0;  // first_error: that rank's code
    bool any() const { return rank >= 0; }
  };
  Agreement first_failure(bool failed, const std::string& message) const;
  // The same with an exit code: the lowest rank whose `code` is not 0, its code and its message.
  Agreement first_error(int code, const std::string& message) const;

  // Ends every process of the job (MPI_Abort on MPI_COMM_WORLD) with `code`: for a rank that must
  // stop while the others may be waiting for it in a collective. Without MPI: std::exit(code).
  [[noreturn]] static void abort(int code);

  // Tuples of `width` 32-bit words. send holds send_counts[d] tuples for each destination d in
  // rank order; receives recv_counts[s] tuples from each source s into recv, in rank order.
  // Exchanges the counts themselves (MPI_Alltoall) and returns them.
  std::vector<std::uint64_t> exchange_counts(const std::vector<std::uint64_t>& send_counts) const;
  void alltoallv(const std::uint32_t* send, const std::vector<std::uint64_t>& send_counts, std::uint32_t* recv,
                 const std::vector<std::uint64_t>& recv_counts, int width) const;
  // Every rank's `rows` tuples of `width` words, concatenated in rank order on `root` (empty elsewhere).
  std::vector<std::uint32_t> gather_tuples(const std::uint32_t* data, std::uint64_t rows, int width, int root) const;

  // Largest count of tuples one call of alltoallv/gather_tuples can move per peer (MPI counts are int).
  static constexpr std::uint64_t kMaxTuplesPerPeer = 0x7fffffffull;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // null: one process
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace hdb
