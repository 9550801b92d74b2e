#include "harness/memory_plan.hpp"

#include <algorithm>

#include "harness/errors.hpp"
#include "harness/platform.hpp"

namespace hdb {
namespace {

// Whole MiB when at least one, else KiB or bytes: a reason must not say "0 MiB".
std::string amount(std::uint64_t bytes) {
  if (bytes >= (1ull << 20)) return std::to_string((bytes + (1ull << 19)) >> 20) + " MiB";
  if (bytes >= (1ull << 10)) return std::to_string((bytes + 512) >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

MemoryPlan& MemoryPlan::add(std::string what, std::uint64_t bytes) {
  if (bytes == 0) return *this;
  for (auto& [name, b] : items_)
    if (name == what) {
      b += bytes;
      total_ += bytes;
      return *this;
    }
  items_.emplace_back(std::move(what), bytes);
  total_ += bytes;
  return *this;
}

std::string MemoryPlan::describe(std::uint64_t available) const {
  auto sorted = items_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string list;
  for (const auto& [name, b] : sorted) list += (list.empty() ? "" : ", ") + name + " " + amount(b);
  return "needs " + amount(total_) + " of " + where_ + (list.empty() ? "" : " (" + list + ")") + ", more than the " +
         amount(available) + " it has";
}

void MemoryPlan::require(std::uint64_t available) const {
  if (total_ > available) throw SkipCase(describe(available));
}

void MemoryPlan::require(const Platform& p) const { require(p.memory_bytes()); }

nlohmann::json MemoryPlan::to_json() const {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& [what, bytes] : items_) items.push_back({{"what", what}, {"bytes", bytes}});
  return {{"where", where_}, {"bytes", total_}, {"items", items}};
}

MemoryPlan MemoryPlan::for_platform(const Platform& p) {
  return MemoryPlan(p.name() == "cpu" ? "host memory" : "device memory");
}

}  // namespace hdb
