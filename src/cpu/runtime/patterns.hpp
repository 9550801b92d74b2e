#pragma once
// The access patterns of harness/patterns.hpp on the CPU: one timed pass each, on all the given
// threads, over 4-byte words. The platform's ceilings and the bus benchmark's cases run these same
// loops, so the ceiling a case is judged by is the rate the bus reports.
#include <cstdint>
#include <memory>

#include "harness/patterns.hpp"

namespace hdb::cpu {

// Words in page-aligned memory, advised into huge pages where the kernel allows: the hardware
// prefetchers stop at a 4 KB page's end, so the best rate of a pattern needs 2 MB pages.
class Words {
 public:
  Words() = default;
  explicit Words(std::uint64_t count);  // throws std::bad_alloc
  std::uint32_t* get() const { return p_.get(); }
  std::uint64_t size() const { return n_; }

 private:
  struct Free {
    void operator()(std::uint32_t* p) const;
  };
  std::unique_ptr<std::uint32_t, Free> p_;
  std::uint64_t n_ = 0;
};

// Seconds of one pass. read: the sum of a's words (into *sum); write: every word of a = value;
// add: c = a + b; triad: a = b + 3c (the bus's triad); copy: memcpy (timed_parallel_memcpy).
double pass_read(const std::uint32_t* a, std::uint64_t n, int threads, std::uint64_t* sum);
double pass_write(std::uint32_t* a, std::uint64_t n, std::uint32_t value, int threads);
double pass_add(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* c, std::uint64_t n, int threads);
double pass_triad(std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint64_t n, int threads);

// Random gathers: `accesses` items of `item_words` (1 or 8) words from a table of `n` words (a power
// of two, a multiple of item_words), at positions hashed from the access's index; every word of
// every item summed into *sum. gather_sum is the same sum on one thread, without timing (checks).
double pass_gather(const std::uint32_t* table, std::uint64_t n, std::uint64_t accesses, int item_words, int threads,
                   std::uint64_t* sum);
std::uint64_t gather_sum(const std::uint32_t* table, std::uint64_t n, std::uint64_t accesses, int item_words);

// Every pattern's rate over buffers of up to `bytes` each (fewer where memory is short; empty rates
// when not even 16 MB fit), the best of a few passes.
PatternRates measure_patterns(std::uint64_t bytes, int threads);
// The copy alone, the same way (the later samples of the ceiling track).
double measure_copy(std::uint64_t bytes, int threads);

}  // namespace hdb::cpu
