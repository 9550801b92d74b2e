#pragma once
// A backend's variants of one benchmark, registered once in a table: the name that results and --only
// use, the tests it implements, and, where it cannot run on this build or device, why. Code that acts
// on a variant looks its name up here and switches on its Id (an enum of the backend's): a name that
// was never registered throws, naming the registered ones, and an Id a switch forgets is a compiler
// warning (an error under HDB_WERROR). No name is ever sent to a default branch (docs/cases.md).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hdb {

struct VariantInfo {
  std::string name;
  std::vector<std::string> tests;  // the tests it implements ("select", "join", ...)
  std::string unavailable;         // why its cases are skipped here; "" when it runs
  // Takes its inputs in any order and gives its output in no fixed order (hash-based operators): its
  // output is verified as a multiset, and a benchmark hands it unsorted input without sorting it first.
  bool any_order = false;
};

// What the benchmarks read of a backend's table: names, tests and reasons, without the backend's Ids.
class VariantList {
 public:
  explicit VariantList(std::string owner) : owner_(std::move(owner)) {}
  virtual ~VariantList() = default;
  const std::vector<VariantInfo>& all() const { return infos_; }
  // The variant named `name`; std::invalid_argument naming the registered variants when none is.
  const VariantInfo& info(std::string_view name) const { return infos_.at(index(name)); }
  bool implements(std::string_view name, std::string_view test) const;
  // The variants that implement `test`, in registration order.
  std::vector<std::string> names(std::string_view test) const;
  // Throws SkipCase with the variant's `unavailable` reason when it cannot run here (and
  // std::invalid_argument when no variant has that name): the first step of every case's set-up.
  void require_available(std::string_view name) const;

 protected:
  std::size_t index(std::string_view name) const;
  void add(VariantInfo info);

 private:
  std::string owner_;  // "CUDA ra": the table's owner, for messages
  std::vector<VariantInfo> infos_;
};

template <class Id>
struct Variant {
  Id id;
  VariantInfo info;
};

template <class Id>
class VariantTable : public VariantList {
 public:
  VariantTable(std::string owner, std::vector<Variant<Id>> variants) : VariantList(std::move(owner)) {
    for (Variant<Id>& v : variants) {
      add(std::move(v.info));
      ids_.push_back(v.id);
    }
  }
  // The Id of the variant named `name`; std::invalid_argument when no variant has that name.
  Id id(std::string_view name) const { return ids_[index(name)]; }

 private:
  std::vector<Id> ids_;
};

// What ran, where a variant has several code paths or tuned parameters: the result's `ran` object
// (docs/results-schema.md), typed fields that are left out when unset (empty or 0).
struct Ran {
  std::string impl;          // the code path taken: "avx512", "scalar", ...
  int work_group = 0;        // work-items of a work-group (threads of a block)
  int items_per_thread = 0;  // tuples each work-item handles
  int radix_bits = 0;        // bits a radix-sort pass sorts by
  int pieces = 0;            // pieces a merge-path split makes
  bool empty() const { return impl.empty() && !work_group && !items_per_thread && !radix_bits && !pieces; }
  nlohmann::json to_json() const;
};

}  // namespace hdb
