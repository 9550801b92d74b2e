// The opencl backend's hash variant (kernels/ra_hash.cl): one table in global memory for the whole
// input, filled by one work-item per row with global atomics, then compacted by the device scan.
// Unlike the cpu hash variant it does not partition first: a GPU keeps enough work-items in flight
// to hide the table's random accesses, which the cpu one partitions into cache-sized tables to avoid.
#include <string>

#include "harness/errors.hpp"
#include "ra_backend.hpp"
#include "ra_relation.hpp"

namespace hdb::ra::opencl {
namespace {

using hdb::opencl::checked;
using hdb::opencl::set_args;

constexpr cl_uint kEmpty = 0xffffffffu;  // ra_hash.cl's EMPTY

std::uint64_t pow2_at_least(std::uint64_t n) {
  std::uint64_t s = 2;
  while (s < n) s <<= 1;
  return s;
}

// Slots for `want` (a power of two, at least 2). Slot indices, the mask and the device scan's
// element count are uint: beyond 2^31 slots the case is skipped.
std::uint32_t table_slots(std::uint64_t want) {
  const std::uint64_t s = pow2_at_least(want);
  if (s > (std::uint64_t{1} << 31))
    throw SkipCase("a hash table of " + std::to_string(s) +
                   " slots is beyond the opencl backend's 32-bit slot indices");
  return static_cast<std::uint32_t>(s);
}

}  // namespace

std::uint32_t OpenClRa::hash_chunk() const {
  // A CPU device's chunk: 4096 chunks of 1024 slots for 2M rows (4M slots), whose counts scan in
  // microseconds, where one count per slot took PoCL 70 ms to scan: longer than a sort and unique.
  return cpu_device() ? (piece_floor_ ? piece_floor_ : kHashChunk) : 1;
}

OpenClRa::Chunks OpenClRa::hash_chunks(std::uint32_t items) {
  const std::uint32_t chunk = hash_chunk();
  ran_.items_per_thread = static_cast<int>(chunk);
  return {chunk, static_cast<std::uint32_t>((std::uint64_t{items} + chunk - 1) / chunk)};
}

cl::Buffer& OpenClRa::hash_table(Trace& tr, const std::string& name, std::uint64_t words, cl_uint fill) {
  cl::Buffer& b = scratch_.get(name, words * 4);
  if (words == 0) return b;  // a reduction with no values: nothing to fill (a fill of 0 bytes is an error)
  cl::Event e;
  checked("clearing " + name, [&] { return p_.queue().enqueueFillBuffer(b, fill, 0, words * 4, nullptr, &e); });
  tr.add("build", e);
  return b;
}

// unique (reduce false) and reduce_by_key: a slot per distinct key, then one output row per
// occupied slot, placed by the scan of each chunk's occupied slots.
Breakdown OpenClRa::hash_group(const DeviceRelation& in_, bool reduce, ReduceOp op, DeviceRel& out_handle) {
  const ClRelation& in = as_cl(in_);
  const std::uint32_t n = rows32(in.rows()), w = u32(in.width());
  Trace tr;
  if (n == 0) {
    ensure(p_, out_handle, 0, in.values(), in.key_words());
    return finish(tr);
  }
  const std::uint32_t slots = table_slots(2 * std::uint64_t{n}), mask = slots - 1;
  cl::Buffer& table = hash_table(tr, "hash.table", slots, kEmpty);
  cl::Buffer* agg = &table;  // unique's writer reads no aggregates
  if (reduce) {
    agg = &hash_table(tr, "hash.agg", std::uint64_t{slots} * u32(in.values()), op == ReduceOp::Min ? kEmpty : 0);
    cl::Kernel& k = kernel("hash_reduce_insert", in.key_words());
    set_args("hash_reduce_insert arguments", k, in.buf, n, w, reduce_code(op), table, mask, *agg);
    launch(tr, "build", k, n);
  } else {
    cl::Kernel& k = kernel("hash_unique_insert", in.key_words());
    set_args("hash_unique_insert arguments", k, in.buf, n, w, table, mask, u32(unique_from_last_ ? 1 : 0));
    launch(tr, "build", k, n);
  }
  const auto [chunk, chunks] = hash_chunks(slots);
  cl::Buffer& pos = scratch_.get("hash.pos", std::uint64_t{chunks} * 4);
  cl::Kernel& occupied = kernel("hash_occupied", 1);
  set_args("hash_occupied arguments", occupied, table, slots, chunk, pos);
  launch_chunks(tr, "scan", occupied, chunks);
  const std::uint64_t groups = scan(tr, pos, pos, chunks);
  ClRelation& out = ensure(p_, out_handle, groups, in.values(), in.key_words());
  cl::Kernel& write = kernel("hash_group_write", in.key_words());
  set_args("hash_group_write arguments", write, in.buf, w, table, slots, chunk, pos, u32(reduce ? 1 : 0), *agg,
           out.buf);
  launch_chunks(tr, "gather", write, chunks);
  return finish(tr);
}

// Chains over the left side, walked twice for each right row: to count its matches, then to write
// them at the 64-bit scan of the chunks' counts (the output is counted, never guessed).
Breakdown OpenClRa::hash_join(const DeviceRelation& l_, const DeviceRelation& r_, DeviceRel& out_handle) {
  const ClRelation& l = as_cl(l_);
  const ClRelation& r = as_cl(r_);
  const std::uint32_t nl = rows32(l.rows()), nr = rows32(r.rows());
  const std::uint32_t wl = u32(l.width()), wr = u32(r.width());
  const int kw = l.key_words(), out_values = l.values() + r.values();
  Trace tr;
  if (nl == 0 || nr == 0) {
    ensure(p_, out_handle, 0, out_values, kw);
    return finish(tr);
  }
  // Two heads a left row: half as many other keys' rows on a chain as with one (PoCL: 145 ms
  // against 165-195 ms for a 2M-row join).
  const std::uint32_t slots = table_slots(2 * std::uint64_t{nl}), mask = slots - 1;
  cl::Buffer& head = hash_table(tr, "hash.table", slots, kEmpty);
  cl::Buffer& next = scratch_.get("hash.next", std::uint64_t{nl} * 4);
  cl::Kernel& build = kernel("hash_join_build", kw);
  set_args("hash_join_build arguments", build, l.buf, nl, wl, head, mask, next);
  launch(tr, "build", build, nl);
  const auto [chunk, chunks] = hash_chunks(nr);
  cl::Buffer& counts = scratch_.get("hash.counts", std::uint64_t{chunks} * 8);
  cl::Kernel& count = kernel("hash_join_count", kw);
  set_args("hash_join_count arguments", count, l.buf, wl, r.buf, nr, wr, head, mask, next, chunk, counts);
  launch_chunks(tr, "count", count, chunks);
  const std::uint64_t total = scan(tr, counts, counts, chunks, true);
  ClRelation& out = ensure(p_, out_handle, total, out_values, kw);
  if (total) {
    cl::Kernel& write = kernel("hash_join_write", kw);
    set_args("hash_join_write arguments", write, l.buf, wl, r.buf, nr, wr, head, mask, next, chunk, counts, out.buf);
    launch_chunks(tr, "gather", write, chunks);
  }
  return finish(tr);
}

// A slot per distinct tuple of a and b together, with its counts in each; the operation turns the
// counts into copies, scanned into output rows.
Breakdown OpenClRa::hash_set_op(const DeviceRelation& a_, const DeviceRelation& b_, SetOp op, DeviceRel& out_handle) {
  const ClRelation& a = as_cl(a_);
  const ClRelation& b = as_cl(b_);
  const std::uint32_t na = rows32(a.rows()), nb = rows32(b.rows()), rows = rows32(std::uint64_t{na} + nb);
  const std::uint32_t w = u32(a.width());
  Trace tr;
  if (rows == 0) {
    ensure(p_, out_handle, 0, a.values(), a.key_words());
    return finish(tr);
  }
  const std::uint32_t slots = table_slots(2 * std::uint64_t{rows}), mask = slots - 1;
  const std::uint32_t opc = op == SetOp::Union ? 0 : op == SetOp::Intersection ? 1 : 2;
  cl::Buffer& table = hash_table(tr, "hash.table", slots, kEmpty);
  cl::Buffer& counts = hash_table(tr, "hash.counts", 2 * std::uint64_t{slots}, 0);
  cl::Kernel& insert = kernel("hash_set_insert", 1);
  set_args("hash_set_insert arguments", insert, a.buf, na, b.buf, nb, w, table, mask, counts);
  launch(tr, "build", insert, rows);
  const auto [chunk, chunks] = hash_chunks(slots);
  cl::Buffer& pos = scratch_.get("hash.pos", std::uint64_t{chunks} * 4);
  cl::Kernel& copies = kernel("hash_set_copies", 1);
  set_args("hash_set_copies arguments", copies, counts, slots, chunk, opc, pos);
  launch_chunks(tr, "scan", copies, chunks);
  const std::uint64_t total = scan(tr, pos, pos, chunks);
  ClRelation& out = ensure(p_, out_handle, total, a.values(), a.key_words());
  if (total) {
    cl::Kernel& write = kernel("hash_set_write", 1);
    set_args("hash_set_write arguments", write, a.buf, na, b.buf, w, table, slots, counts, opc, chunk, pos, out.buf);
    launch_chunks(tr, "gather", write, chunks);
  }
  return finish(tr);
}

void OpenClRa::plan_hash(const OpShape& s, MemoryPlan& plan) const {
  const std::uint64_t wg = hdb::opencl::preferred_work_group(p_), chunk = hash_chunk();
  // Per chunk a count (scanned in place), and the scan's block sums and their offsets per level.
  auto counts = [&](const std::string& what, std::uint64_t items, std::uint64_t elem) {
    const std::uint64_t n = (items + chunk - 1) / chunk;
    plan.add(what, n * elem).add("scan block sums", (n / wg + 1) * 2 * elem);
  };
  switch (s.op) {
    case Op::Unique:
    case Op::ReduceByKey: {
      if (!s.rows_a) break;
      const std::uint64_t slots = pow2_at_least(2 * s.rows_a);
      plan.add("hash table", slots * 4);
      if (s.op == Op::ReduceByKey)
        plan.add("hash aggregates", slots * static_cast<std::uint64_t>(s.width_a - s.key_words) * 4);
      counts("hash chunk counts", slots, 4);
      break;
    }
    case Op::Join:
      if (!s.rows_a || !s.rows_b) break;
      plan.add("hash chain heads", pow2_at_least(2 * s.rows_a) * 4).add("hash chain links", s.rows_a * 4);
      counts("join chunk counts (64-bit)", s.rows_b, 8);
      break;
    case Op::SetUnion:
    case Op::SetIntersection:
    case Op::SetDifference: {
      if (!s.rows_a && !s.rows_b) break;
      const std::uint64_t slots = pow2_at_least(2 * (s.rows_a + s.rows_b));
      plan.add("hash table", slots * 4).add("hash counts in a and b", slots * 8);
      counts("hash chunk counts", slots, 4);
      break;
    }
    default: break;
  }
}

}  // namespace hdb::ra::opencl
