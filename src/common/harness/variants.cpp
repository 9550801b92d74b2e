#include "harness/variants.hpp"

#include <algorithm>
#include <stdexcept>

#include "harness/errors.hpp"

namespace hdb {

bool VariantList::implements(std::string_view name, std::string_view test) const {
  const VariantInfo& v = info(name);
  return std::find(v.tests.begin(), v.tests.end(), test) != v.tests.end();
}

std::vector<std::string> VariantList::names(std::string_view test) const {
  std::vector<std::string> out;
  for (const VariantInfo& v : infos_)
    if (std::find(v.tests.begin(), v.tests.end(), test) != v.tests.end()) out.push_back(v.name);
  return out;
}

void VariantList::require_available(std::string_view name) const {
  const VariantInfo& v = info(name);
  if (!v.unavailable.empty()) throw SkipCase(v.unavailable);
}

std::size_t VariantList::index(std::string_view name) const {
  for (std::size_t i = 0; i < infos_.size(); ++i)
    if (infos_[i].name == name) return i;
  std::string known;
  for (const VariantInfo& v : infos_) known += (known.empty() ? "" : ", ") + v.name;
  throw std::invalid_argument(owner_ + " has no variant '" + std::string(name) +
                              "' (registered: " + (known.empty() ? "none" : known) + ")");
}

void VariantList::add(VariantInfo info) {
  for (const VariantInfo& v : infos_)
    if (v.name == info.name) throw std::logic_error(owner_ + " registers the variant '" + info.name + "' twice");
  infos_.push_back(std::move(info));
}

nlohmann::json Ran::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  if (!impl.empty()) j["impl"] = impl;
  if (work_group) j["work_group"] = work_group;
  if (items_per_thread) j["items_per_thread"] = items_per_thread;
  if (radix_bits) j["radix_bits"] = radix_bits;
  if (pieces) j["pieces"] = pieces;
  return j;
}

}  // namespace hdb
