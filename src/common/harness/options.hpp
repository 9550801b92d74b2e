#pragma once
// The options every executable shares. Benchmark-specific options are added to the same CLI::App
// by the benchmark's definition (see main.hpp).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace hdb {

enum class Transfer { None, Pageable, Pinned };
const char* to_string(Transfer t);

struct Options {
  // Sizes in bytes per input, resolved from --sizes, or --min-size/--max-size, or --size-class.
  std::vector<std::uint64_t> sizes;
  std::string sizes_text, min_size_text, max_size_text;
  int size_class = 1;

  // Stopping rule: warm-up passes, then at least `passes`; stop when the kernel-time CV is below
  // target_noise, or after max_passes, or when max_time seconds of timed passes have been spent.
  int warmup = 1;
  int passes = 3;
  int max_passes = 50;
  double max_time = 2.0;
  double target_noise = 0.02;
  // --flush-caches: evict the host's LLC (and a device's L2) before every timed pass, and before the
  // cold pass: the timed passes are then "warm", not "hot" (docs/methodology.md).
  bool flush_caches = false;
  // --discard-on-throttle: a timed pass after which the device reported its clocks held down (power
  // cap, thermal: Platform::throttling) is not kept; the case records how many were dropped.
  bool discard_on_throttle = false;

  int device = 0;
  // --platform: an OpenCL platform's index in the loader's list, or a word of its name or vendor
  // ("pocl", "intel", "nvidia"): the index depends on the order the ICD loader reads its files in.
  std::string platform = "0";
  int threads = 0;  // 0 = all hardware threads
  // --memory-limit: the device (host RAM on cpu) counts as holding at most this many bytes; 0 = no
  // limit. Cases whose allocations exceed it are skipped with the reason, so the skip paths can be
  // exercised on any machine.
  std::uint64_t memory_limit = 0;
  std::string memory_limit_text;

  std::vector<std::string> only;  // test filters: "select", "select/tuned", globs allowed
  bool list = false;
  std::string json_path, csv_path;
  std::uint64_t seed = 42;  // resolved from --seed (seed_text): any value in 0..2^64-1
  std::string seed_text;
  std::string transfer_text = "pinned";
  std::vector<Transfer> transfers;  // resolved from --transfer
  bool quiet = false;
  bool verify = true;
  // --traffic: one more pass of each case, counting what its kernels ask of memory (host execution).
  bool traffic = false;

  std::string command_line;  // filled by run_main
  // Under mpirun: this rank's index among the ranks on its node, and their number. Platforms use
  // them to give each rank its own device (CUDA/OpenCL) or its share of the cores (CPU).
  int local_rank = 0;
  int local_ranks = 1;
  // Under mpirun, rank files are best effort: given a write error of --json/--csv, returns true when
  // it is only a warning (the files are then no longer written); unset, every write error counts.
  std::function<bool(const std::string& error)> on_write_error;
};

// Adds the shared options to `app`, bound to `opts`.
void add_common_options(CLI::App& app, Options& opts);
// A CLI11 check for an option whose empty value would silently mean its default ('--memory-limit ""',
// '--tbl-dir ""'): the reason it is refused, "" for any other value.
std::string not_empty(const std::string& value);
// A CLI11 check for a count or an index held unsigned: digits only ('-3' would wrap around to 2^64 - 3
// and pass a lower bound), else the reason it is refused.
std::string whole_number(const std::string& value);
// Resolves sizes and transfer modes after parsing; throws UsageError naming the option.
void finalize_options(Options& opts);
// --seed's value: a decimal integer in 0..2^64-1 (18446744073709551615); anything else (a sign, a
// fraction, a larger number) is a UsageError naming the limit, never a value wrapped around.
std::uint64_t parse_seed(const std::string& text);
// Hardware threads the CPU code should use: --threads, else all cores shared among the node's ranks.
int effective_threads(const Options& opts);

}  // namespace hdb
