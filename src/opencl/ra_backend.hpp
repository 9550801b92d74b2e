#pragma once
// OpenCL relational-algebra backend: the paper's partition / compute / gather kernels with
// work-group prefix sums in local memory (kernels/ra.cl, kernels/scan.cl); sort is sort.hpp's radix
// sort of the keys and a gather of the tuples; the hash variant's global-atomic tables take input in
// any order (kernels/ra_hash.cl, ra_hash.cpp). Sub-kernel times from profiling events are the
// phases (partition, scan, gather, compute, merge; the hash variant's build, count, scan, gather).
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/ra.hpp"
#include "runtime/cl_platform.hpp"
#include "sort.hpp"

namespace hdb::ra::opencl {

class OpenClRa : public RaBackend {
 public:
  explicit OpenClRa(hdb::opencl::OpenClPlatform& platform) : p_(platform), scratch_(platform) {}

  const VariantList& variant_table() const override;
  Relation host_relation(std::uint64_t rows, int values, Transfer kind, int key_words = 1) override;
  Breakdown upload(const Relation& host, DeviceRel& out) override;
  Breakdown download(const DeviceRelation& dev, Relation& host) override;
  Breakdown run_project(const DeviceRelation& in, const ProjectLayout& layout, const std::string& variant,
                        DeviceRel& out) override;
  Breakdown run_select(const DeviceRelation& in, const Predicate& pred, const std::string& variant,
                       DeviceRel& out) override;
  Breakdown run_unique(const DeviceRelation& in, const std::string& variant, DeviceRel& out) override;
  Timed<Aggregate> run_reduce(const DeviceRelation& in, ReduceOp op, const std::string& variant) override;
  Breakdown run_reduce_by_key(const DeviceRelation& in, ReduceOp op, const std::string& variant,
                              DeviceRel& out) override;
  Breakdown run_join(const DeviceRelation& left, const DeviceRelation& right, const std::string& variant,
                     DeviceRel& out) override;
  Breakdown run_set_op(const DeviceRelation& a, const DeviceRelation& b, SetOp op, const std::string& variant,
                       DeviceRel& out) override;
  Breakdown run_product(const DeviceRelation& a, const DeviceRelation& b, const std::string& variant,
                        DeviceRel& out) override;
  Breakdown run_arith(const DeviceRelation& a, const DeviceRelation& b, ArithOp op, const std::string& variant,
                      DeviceRel& out) override;
  Breakdown run_sort(const DeviceRelation& in, const std::string& variant, DeviceRel& out) override;
  void plan_scratch(const OpShape& shape, MemoryPlan& plan) const override;
  void release_scratch() override;

  // Work-group size the kernels are built for (the paper's 256 where the device allows it).
  std::size_t work_group();

  // Tests: the tuned sort and join and the hash variant take the parameters of a CPU (cpu = true)
  // or another device, with chunks / merge-path pieces of at least `floor` rows (the hash variant's
  // chunks: `floor` exactly; 0: the device's own choice); staged =
  // false: the join merges twice (count, write) as when its staging slots do not fit; sort_bits:
  // the sort's key bits a pass (0: its own choice).
  void override_tuning(bool cpu, std::uint32_t floor, bool staged = true, unsigned sort_bits = 0);

  // Tests: the hash variant's unique inserts the last row first (kernels/ra_hash.cl).
  void unique_from_last(bool on) { unique_from_last_ = on; }

  // The kernel events of one operator, each tagged with its phase.
  using Trace = hdb::opencl::Trace;

 private:
  // A kernel of ra.cl built for keys of key_words words (-DKW; one program per width).
  cl::Kernel& kernel(const std::string& name, int key_words);
  void launch(Trace& tr, const std::string& phase, cl::Kernel& k, std::uint64_t items);
  // Exclusive scan of n uints, or ulongs when `wide` (join counts) (sort.hpp's DeviceScan);
  // returns the total (read back: the counting pass that sizes outputs).
  std::uint64_t scan(Trace& tr, const cl::Buffer& in, cl::Buffer& out, std::uint32_t n, bool wide = false);
  // Partition + scan of the compaction pipeline; returns the kept count. Then gather_into().
  std::uint32_t compact(Trace& tr, std::uint32_t mode, const DeviceRelation& in, const DeviceRelation* other,
                        const Predicate& pred, bool emit_index);
  // `items`: tuples per work-item of the partition kernel that filled the slots (1 for the paper's).
  void gather_into(Trace& tr, std::uint64_t rows_in, std::uint32_t out_words_per_row, const cl::Buffer& out,
                   std::uint32_t items = 1);
  // The tuned partition (kernels/ra.cl compact_coarse): kCoarseItems tuples per work-item.
  std::uint32_t compact_coarse(Trace& tr, bool unique_mode, const DeviceRelation& in, const Predicate& pred);
  Breakdown compaction(const DeviceRelation& in, bool unique_mode, const Predicate& pred, const std::string& variant,
                       DeviceRel& out);
  Breakdown finish(Trace& tr);
  // The hash variant (ra_hash.cpp): input in any order, output in table-slot order.
  Breakdown hash_group(const DeviceRelation& in, bool reduce, ReduceOp op, DeviceRel& out);
  Breakdown hash_join(const DeviceRelation& left, const DeviceRelation& right, DeviceRel& out);
  Breakdown hash_set_op(const DeviceRelation& a, const DeviceRelation& b, SetOp op, DeviceRel& out);
  // The scratch buffer `name` of `words` uints set to `fill` (an enqueued fill, in phase "build").
  cl::Buffer& hash_table(Trace& tr, const std::string& name, std::uint64_t words, cl_uint fill);
  void plan_hash(const OpShape& shape, MemoryPlan& plan) const;
  // Slots (or right rows) per work-item of the hash variant's compaction: 1 on a GPU, kHashChunk
  // (or override_tuning's floor) on a CPU device (kernels/ra_hash.cl).
  std::uint32_t hash_chunk() const;
  static constexpr std::uint32_t kHashChunk = 1024;
  struct Chunks {
    std::uint32_t chunk, count;
  };
  // `items` cut into hash_chunk()'s chunks (recorded in ran_).
  Chunks hash_chunks(std::uint32_t items);
  // Tuned (chunked, barrier-free) kernels: the device type picks chunk and local sizes.
  bool cpu_device() const;
  std::uint32_t join_pieces(std::uint64_t merged_rows);  // merge-path pieces of the tuned join
  void launch_chunks(Trace& tr, const std::string& phase, cl::Kernel& k, std::uint64_t items, bool group_each = false);
  static constexpr std::uint32_t kCoarseItems = 8;  // ITEMS in kernels/ra.cl

  hdb::opencl::OpenClPlatform& p_;
  std::size_t wg_ = 0;
  mutable int cpu_ = -1;           // device is a CPU (1) or not (0); -1 until asked
  std::uint32_t piece_floor_ = 0;  // override_tuning's floor (0: none)
  bool join_staged_ = true;
  bool unique_from_last_ = false;
  bool tuning_forced_ = false;  // override_tuning was called: the TupleSort gets it too
  unsigned sort_bits_ = 0;
  // The tuned sort, made on first use (and again after release_scratch) with the tuning in force.
  hdb::opencl::TupleSort& tuple_sort();
  double join_ratio_ = 0;  // the last tuned join's output rows per merged input row
  std::map<std::pair<std::string, int>, cl::Kernel> kernels_;
  hdb::opencl::Scratch scratch_;  // partition slots, counts, offsets, ... by name (grow-only)
  std::unique_ptr<hdb::opencl::DeviceScan> scan_, scan64_;
  std::unique_ptr<hdb::opencl::RadixSort> sort_, sort64_;
  std::unique_ptr<hdb::opencl::TupleSort> tsort_;
};

}  // namespace hdb::ra::opencl
