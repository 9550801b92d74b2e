#include "runtime/worker_pool.hpp"

#include <map>
#include <memory>

#include "runtime/chunks.hpp"

namespace hdb::cpu {
namespace {
// Set while a thread runs items of a pool: a nested run() must not wait for workers that are
// themselves waiting for it.
thread_local bool t_in_pool = false;
}  // namespace

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { loop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void WorkerPool::drain() {
  t_in_pool = true;
  for (std::size_t i = next_.fetch_add(1); i < n_; i = next_.fetch_add(1)) (*fn_)(i);
  t_in_pool = false;
}

void WorkerPool::loop() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      // A worker the scheduler woke late finds every item taken and stays out: the caller never
      // waits for a worker that had nothing to do (on a busy machine, a time slice per call).
      if (next_.load() >= n_) continue;
      ++draining_;
    }
    drain();
    std::lock_guard<std::mutex> lk(mu_);
    if (--draining_ == 0) done_.notify_one();
  }
}

void WorkerPool::run(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (workers_.empty() || n <= 1 || t_in_pool) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mu_);
  {
    std::lock_guard<std::mutex> lk(mu_);
    fn_ = &fn;
    n_ = n;
    next_.store(0);
    ++generation_;
  }
  wake_.notify_all();
  drain();
  // Every item is taken once the caller's drain ends; those a worker took are done when no worker
  // is draining (a worker joins only while items are left, under mu_).
  std::unique_lock<std::mutex> lk(mu_);
  done_.wait(lk, [&] { return draining_ == 0; });
}

}  // namespace hdb::cpu

namespace hdb::cpu {

WorkerPool& shared_pool(int threads) {
  // One pool per thread count a run asks for (in practice one, or two when a variant caps its
  // threads); pools live until the process ends, so their workers are made once.
  static std::mutex mu;
  static std::map<int, std::unique_ptr<WorkerPool>> pools;
  std::lock_guard<std::mutex> lk(mu);
  auto& p = pools[threads];
  if (!p) p = std::make_unique<WorkerPool>(threads);
  return *p;
}

}  // namespace hdb::cpu
