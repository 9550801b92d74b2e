#pragma once
// A small persistent pool whose idle workers block on a condition variable, and which hands work
// items out one at a time. Blocking: on a shared or oversubscribed machine, spinning OpenMP workers
// (the default wait policy) made one n-gram query 10x slower than on one core. One item at a time:
// a worker the scheduler takes off its core leaves its remaining items to the others, where a
// static split would make every other thread wait a whole time slice for it.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hdb::cpu {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Calls fn(i) for every i in [0, n), handing items out one at a time to the workers and the
  // calling thread; returns when all are done. A call from inside an item runs serially.
  void run(std::size_t n, const std::function<void(std::size_t)>& fn);

 private:
  void drain();
  void loop();
  std::mutex run_mu_;  // one run at a time: callers on two threads take turns
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t)>* fn_ = nullptr;
  std::size_t n_ = 0;
  std::atomic<std::size_t> next_{0};
  std::uint64_t generation_ = 0;
  int draining_ = 0;  // workers inside drain() for the current run
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace hdb::cpu
