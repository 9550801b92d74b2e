#include "harness/options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>

#include "harness/errors.hpp"
#include "harness/sizes.hpp"

namespace hdb {

const char* to_string(Transfer t) {
  switch (t) {
    case Transfer::None: return "none";
    case Transfer::Pageable: return "pageable";
    case Transfer::Pinned: return "pinned";
  }
  return "?";
}

std::string not_empty(const std::string& v) {
  return v.empty() ? std::string("an empty value (give one, or leave the option out for its default)") : std::string();
}

std::string whole_number(const std::string& v) {
  if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) return "";
  return "'" + v + "' is not a whole number (0, 1, 2, ...)";
}

namespace {
// --platform: an index (0, 1, ...) or a word; a number with a sign is neither.
std::string platform_selector(const std::string& v) {
  if (v.empty()) return "an empty platform selects nothing";
  if ((v[0] == '-' || v[0] == '+') && v.size() > 1 && v.find_first_not_of("0123456789", 1) == std::string::npos)
    return "'" + v + "' is not a platform index (0, 1, ...; or a word of a platform's name or vendor)";
  return "";
}
}  // namespace

void add_common_options(CLI::App& app, Options& o) {
  app.add_option("--sizes", o.sizes_text, "Input sizes in bytes per input, comma separated (e.g. 32K,1M,1G or 2^20)")
      ->check(not_empty);
  app.add_option("--min-size", o.min_size_text, "Smallest size of the power-of-two sweep (default: the size class's)")
      ->check(not_empty);
  app.add_option("--max-size", o.max_size_text, "Largest size of the power-of-two sweep (default: the size class's)")
      ->check(not_empty);
  app.add_option("--size-class", o.size_class, "Size class 1..4: 32K..1M, 32K..16M, 32K..256M, 32K..1G")
      ->check(CLI::Range(kMinSizeClass, kMaxSizeClass));
  app.add_option(
         "--warmup", o.warmup,
         "Passes per case before the timed ones: the first is timed and kept as the cold pass, the others untimed")
      ->check(CLI::Range(0, 1000));
  app.add_option("--passes", o.passes, "Minimum timed passes per case")->check(CLI::Range(1, 100000));
  app.add_option("--max-passes", o.max_passes, "Maximum timed passes per case")->check(CLI::Range(1, 100000));
  app.add_option("--max-time", o.max_time, "Stop taking passes after this many seconds per case")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--target-noise", o.target_noise,
                 "Stop when the coefficient of variation of kernel time is below this")
      ->check(CLI::Range(0.0, 10.0));
  app.add_flag("--flush-caches", o.flush_caches,
               "Evict the host's last-level cache (and a device's L2) before the cold pass and every timed "
               "pass: the timed passes are then warm, not hot (docs/methodology.md)");
  app.add_flag("--discard-on-throttle", o.discard_on_throttle,
               "Drop a timed pass after which the device reported its clocks held down by a power cap or heat "
               "(NVML on CUDA; other platforms cannot tell)");
  app.add_option("--device", o.device, "Device index (CUDA, OpenCL)")->check(whole_number);
  app.add_option("--platform", o.platform,
                 "OpenCL platform: its index, or a word of its name or vendor (pocl, intel, nvidia); default 0")
      ->check(platform_selector);
  app.add_option("--threads", o.threads, "CPU threads for parallel variants (0: all)")->check(CLI::Range(0, 4096));
  app.add_option("--only", o.only,
                 "Run only these tests: name, name/variant or a whole case id, globs allowed (comma separated; the "
                 "commas inside an id's brackets belong to the id)");
  app.add_option("--memory-limit", o.memory_limit_text,
                 "Treat the device (host RAM on cpu) as holding at most this much memory, e.g. 64M: cases "
                 "that need more are skipped with the reason")
      ->check(not_empty);
  app.add_flag("--list", o.list, "List the cases that would run, and exit");
  app.add_option("--json", o.json_path, "Write results as JSON to this file (rewritten after every case)")
      ->check(not_empty);
  app.add_option("--csv", o.csv_path, "Write results as CSV to this file (rewritten after every case)")
      ->check(not_empty);
  app.add_option("--seed", o.seed_text,
                 "Seed of the input generators, 0..18446744073709551615 (same seed, same data on every backend)")
      ->check(not_empty);
  app.add_option("--transfer", o.transfer_text, "Host memory for PCIe transfers: pageable, pinned or both")
      ->check(CLI::IsMember({"pageable", "pinned", "both"}));
  app.add_flag("--quiet", o.quiet, "Print only the summary line");
  app.add_flag("!--no-verify", o.verify, "Skip verification against the reference (results are marked unverified)");
  app.add_flag("--traffic", o.traffic,
               "After each case's timed passes, run it once more counting what its kernels ask of global memory "
               "(requests, sectors, an L2 model): hdb-*-cuda-host only (docs/cuda.md)");
}

std::uint64_t parse_seed(const std::string& text) {
  const std::string limit = "an integer in 0..18446744073709551615 (2^64-1)";
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError("--seed: '" + text + "' is not " + limit);
  std::uint64_t v = 0;
  for (char c : text) {
    auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10)
      throw UsageError("--seed: " + text + " is larger than the largest seed, 18446744073709551615 (2^64-1)");
    v = v * 10 + d;
  }
  return v;
}

namespace {
// --only's values split into patterns at the commas between them: those inside a case id's brackets
// belong to the id ('join/paper[match=0.5,fanout=1]*' is one pattern); a '[' not closed before the
// next '[' opens nothing ('join/paper[*,select' is two).
std::vector<std::string> split_patterns(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    std::string cur;
    bool inside = false;  // between a '[' and the ']' that closes it (a '[' never closed is a glob's)
    for (std::size_t i = 0; i < v.size(); ++i) {
      const char c = v[i];
      if (c == '[') inside = v.find(']', i) < v.find('[', i + 1);  // npos: never closed
      if (c == ']') inside = false;
      if (c == ',' && !inside) {
        out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    out.push_back(cur);
  }
  return out;
}
}  // namespace

void finalize_options(Options& o) {
  o.only = split_patterns(o.only);
  // CLI::Range lets NaN through (every comparison with it is false): a stopping rule that never stops.
  if (std::isnan(o.max_time)) throw UsageError("--max-time: nan is not a number of seconds (allowed: 0..86400)");
  if (std::isnan(o.target_noise)) throw UsageError("--target-noise: nan is not a number (allowed: 0..10)");
  if (!o.seed_text.empty()) o.seed = parse_seed(o.seed_text);
  if (o.passes > o.max_passes) o.max_passes = o.passes;
  if (!o.sizes_text.empty()) {
    if (!o.min_size_text.empty() || !o.max_size_text.empty())
      throw UsageError("--sizes cannot be combined with --min-size/--max-size");
    o.sizes = parse_size_list(o.sizes_text, "--sizes");
  } else {
    auto [lo, hi] = size_class_range(o.size_class);
    if (!o.min_size_text.empty()) lo = parse_size(o.min_size_text, "--min-size");
    if (!o.max_size_text.empty()) hi = parse_size(o.max_size_text, "--max-size");
    if (lo > hi)
      throw UsageError("--min-size (" + format_size(lo) + ") is larger than --max-size (" + format_size(hi) + ")");
    o.sizes = pow2_range(lo, hi);
    if (o.sizes.empty())
      throw UsageError("no power of two between --min-size " + format_size(lo) + " and --max-size " + format_size(hi));
  }
  if (!o.memory_limit_text.empty()) {
    o.memory_limit = parse_size(o.memory_limit_text, "--memory-limit");
    if (o.memory_limit == 0) throw UsageError("--memory-limit must be larger than 0");
  }
  o.transfers.clear();
  if (o.transfer_text == "pageable" || o.transfer_text == "both") o.transfers.push_back(Transfer::Pageable);
  if (o.transfer_text == "pinned" || o.transfer_text == "both") o.transfers.push_back(Transfer::Pinned);
  if (o.transfers.empty()) throw UsageError("--transfer: '" + o.transfer_text + "' (allowed: pageable, pinned, both)");
}

int effective_threads(const Options& o) {
  if (o.threads > 0) return o.threads;
  int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, hw / std::max(1, o.local_ranks));
}

}  // namespace hdb
