#pragma once
// A memory-fit check that names what it counts: every buffer a case will allocate on the device
// (host RAM on the CPU backend) — inputs, outputs, scratch, and a library's temporary storage as the
// library itself reports it — is added by name, and require() skips the case with the list when
// the total exceeds what the platform offers (Platform::memory_bytes(), capped by --memory-limit).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hdb {

class Platform;

class MemoryPlan {
 public:
  // `where`: "device memory", "host memory", ...: the words of the skip reason.
  explicit MemoryPlan(std::string where = "device memory") : where_(std::move(where)) {}
  // "host memory" on the cpu backend, "device memory" elsewhere.
  static MemoryPlan for_platform(const Platform& p);
  MemoryPlan& add(std::string what, std::uint64_t bytes);
  std::uint64_t total() const { return total_; }
  const std::string& where() const { return where_; }
  const std::vector<std::pair<std::string, std::uint64_t>>& items() const { return items_; }
  // "needs 96 MiB of device memory (input 32 MiB, output 32 MiB, sort temporary storage 32 MiB),
  // more than the 64 MiB it has" — the items largest first.
  std::string describe(std::uint64_t available) const;
  // Throws SkipCase with describe() when total() > available.
  void require(std::uint64_t available) const;
  // require(p.memory_bytes()): the device's memory capped by --memory-limit.
  void require(const Platform& p) const;
  // The result's `memory_plan`: {"where", "bytes", "items": [{"what", "bytes"}, ...]} in the order added.
  nlohmann::json to_json() const;

 private:
  std::string where_;
  std::vector<std::pair<std::string, std::uint64_t>> items_;
  std::uint64_t total_ = 0;
};

}  // namespace hdb
