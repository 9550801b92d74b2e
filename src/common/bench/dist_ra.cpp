// dist_unique and dist_join: hash partition, MPI_Alltoallv exchange, stable local sort by key, then
// the local RA primitive on the rank's device. Verified on rank 0 against the serial reference of
// the whole global input.
#include "bench/dist_ra.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <set>
#include <string>

#include "bench/dist_collective.hpp"
#include "algorithms/dist_partition.hpp"
#include "harness/errors.hpp"
#include "reference/ra.hpp"
#include "algorithms/tuple_sort.hpp"

namespace hdb::dist {

namespace {

// Host steps before the device's h2d / kernel / d2h (those are Breakdown's own kinds).
const std::vector<Phase> kPhases{
    {"partition", PhaseKind::Host}, {"exchange", PhaseKind::Network}, {"local_sort", PhaseKind::Host}};
// Without a bus (cpu) the backend's upload/download are host copies, not PCIe: named host phases.
const std::vector<Phase> kPhasesNoBus{{"partition", PhaseKind::Host},
                                      {"exchange", PhaseKind::Network},
                                      {"local_sort", PhaseKind::Host},
                                      {"stage_in", PhaseKind::Host},
                                      {"stage_out", PhaseKind::Host}};

// One input relation as seen by one rank, with every buffer a pass needs allocated up front.
struct Side {
  GlobalSpec spec;
  std::uint64_t seed = 0;
  ra::Relation local;               // this rank's generated share
  std::vector<std::uint32_t> send;  // grouped by destination rank
  std::vector<std::uint64_t> send_counts, recv_counts;
  std::vector<std::uint32_t> recv, scratch;
  ra::Relation sorted;  // upload source (pinned where the backend pins)
  ra::DeviceRel dev;
  std::uint64_t recv_rows() const { return std::accumulate(recv_counts.begin(), recv_counts.end(), std::uint64_t{0}); }
};

struct DistRaCase {
  const Comm* comm = nullptr;
  ra::RaBackend* backend = nullptr;
  int threads = 1;
  bool join = false;
  bool bus = false;  // inputs and output cross PCIe (the case's transfer mode is not none)
  std::string variant;
  std::vector<Side> sides;
  ra::DeviceRel dev_out;
  ra::Relation host_out;

  void partition(Side& s) {
    s.send_counts =
        partition_by_owner(s.local.data(), s.local.rows(), s.local.width(), comm->size(), s.send.data(), threads);
  }
  void exchange(Side& s) {
    s.recv_counts = comm->exchange_counts(s.send_counts);
    const std::uint64_t rows = s.recv_rows();
    // The data is the same in every pass, so this holds after set-up; growing here would put an
    // allocation into the timed region.
    if (rows * static_cast<std::uint64_t>(s.local.width()) > s.recv.size())
      throw std::logic_error("received more tuples than in the set-up exchange");
    comm->alltoallv(s.send.data(), s.send_counts, s.recv.data(), s.recv_counts, s.local.width());
  }
  void sort(Side& s) {
    const std::uint64_t rows = s.recv_rows();
    s.sorted.set_rows(rows);
    ra::stable_sort_by_key(s.recv.data(), rows, s.local.width(), s.sorted.data(), s.scratch.data(), threads);
  }

  Breakdown local_pass() {
    HostTimer wall;
    Breakdown b;
    b.add_phase("partition", time_host([&] {
                  for (Side& s : sides) partition(s);
                }),
                PhaseKind::Host);
    b.add_phase("exchange", time_host([&] {
                  for (Side& s : sides) exchange(s);
                }),
                PhaseKind::Network);
    b.add_phase("local_sort", time_host([&] {
                  for (Side& s : sides) sort(s);
                }),
                PhaseKind::Host);
    for (Side& s : sides) b.add_copy(backend->upload(s.sorted, s.dev), bus);
    Breakdown k = join ? backend->join(*sides[0].dev, *sides[1].dev, variant, dev_out)
                       : backend->unique(*sides[0].dev, variant, dev_out);
    b.kernel = k.kernel;
    b.add_copy(k, bus);
    b.add_copy(backend->download(*dev_out, host_out), bus);
    b.total = wall.seconds();
    return b;
  }
};

// The reference's input order: stable by key (what the distributed partition + sort preserve).
ra::Relation stable_sorted_by_key(const ra::Relation& in) {
  std::vector<std::uint64_t> idx(in.rows());
  std::iota(idx.begin(), idx.end(), std::uint64_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](std::uint64_t a, std::uint64_t b) { return in.key(a) < in.key(b); });
  ra::Relation out(in.rows(), in.values());
  for (std::uint64_t i = 0; i < idx.size(); ++i)
    std::memcpy(out.tuple(i), in.tuple(idx[i]), static_cast<std::size_t>(in.width()) * 4);
  return out;
}

class DistRaRunner {
 public:
  DistRaRunner(Session& s, const Comm& c, ra::RaBackend& b, const DistOptions& o)
      : s_(s), c_(c), b_(b), o_(o), node_of_(node_of_ranks(c)) {}

  void run() {
    for (ra::Op op : {ra::Op::Unique, ra::Op::Join})
      for (const std::string& variant : b_.variants(op))
        for (Transfer t : s_.transfers())
          for (std::uint64_t size : s_.sizes())
            for (const std::string& dist : o_.dists) {
              if (op == ra::Op::Unique)
                for (double dup : o_.duplicates) unique_case(variant, t, size, dist, dup);
              else
                for (double match : o_.match_rate)
                  for (int fan : o_.fanout) join_case(variant, t, size, dist, match, fan);
            }
  }

 private:
  int threads() const { return effective_threads(s_.options()); }
  std::uint64_t global_rows(std::uint64_t size) const {
    std::uint64_t per = size / (4u * static_cast<std::uint64_t>(1 + o_.values));
    return o_.weak ? per * static_cast<std::uint64_t>(c_.size()) : per;
  }
  KeySpec keys(const std::string& dist, std::uint64_t distinct) const { return ra::key_spec(o_, dist, distinct); }
  Params params(const std::string& dist) const {
    Params p{{"dist", dist}};
    if (o_.values != 1) p.emplace_back("values", o_.values);
    add_rank_params(p, c_, o_.weak);
    return p;
  }

  void unique_case(const std::string& variant, Transfer t, std::uint64_t size, const std::string& dist, double dup) {
    Params p = params(dist);
    p.emplace_back("duplicates", dup);
    Staged st;
    s_.run({"dist_unique", variant, p, size, t},
           CaseSetup{[&](MemoryPlan& plan) {
                       const std::uint64_t n = global_rows(size);
                       const auto distinct =
                           std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(n) * (1 - dup)));
                       GlobalSpec g{n, o_.values, keys(dist, distinct)};
                       st = plan_case(variant, t, false, {{g, s_.seed("dist.unique", n)}}, plan);
                     },
                     [&] { return prepare(st, t); }});
  }

  void join_case(const std::string& variant, Transfer t, std::uint64_t size, const std::string& dist, double match,
                 int fan) {
    Params p = params(dist);
    p.emplace_back("match", match);
    p.emplace_back("fanout", fan);
    Staged st;
    s_.run(
        {"dist_join", variant, p, size, t},
        CaseSetup{
            [&](MemoryPlan& plan) {
              const std::uint64_t n = global_rows(size);
              KeySpec k = keys(dist, std::max<std::uint64_t>(1, n / static_cast<std::uint64_t>(fan)));
              k.max = 0x7fffffffu;  // room for 2k + 1
              GlobalSpec l{n, o_.values, k, true, 1.0};
              GlobalSpec r{n, o_.values, k, true, match};
              st = plan_case(variant, t, true, {{l, s_.seed("dist.join.l", n)}, {r, s_.seed("dist.join.r", n)}}, plan);
            },
            [&] { return prepare(st, t); }});
  }

  // A case after its plan: the data generated, exchanged and sorted on every rank, not yet on the device.
  struct Staged {
    std::shared_ptr<DistRaCase> c;
    std::uint64_t local_in_bytes = 0, out_rows = 0;
    int out_values = 0;
  };

  // Generates, exchanges and sorts the inputs, and adds this rank's device buffers to `plan`; the
  // ranks agree on the fit (collectively) before the session checks it.
  Staged plan_case(const std::string& variant, Transfer t, bool join,
                   const std::vector<std::pair<GlobalSpec, std::uint64_t>>& inputs, MemoryPlan& plan) {
    // Every rank has the same table, so every rank skips alike, before any collective call.
    b_.variant_table().require_available(variant);
    auto c = std::make_shared<DistRaCase>();
    c->comm = &c_;
    c->backend = &b_;
    c->threads = threads();
    c->join = join;
    c->variant = variant;
    const int w = 1 + o_.values;
    // Local generation and partition buffers.
    collectively(c_, [&] {
      for (const auto& [spec, seed] : inputs) {
        Side s;
        s.spec = spec;
        s.seed = seed;
        RowRange mine = share_of(spec.rows, c_.rank(), c_.size());
        s.local = ra::Relation(mine.size(), spec.values);
        generate_rows(s.local, spec, mine, seed, threads());
        s.send.resize(s.local.words());
        c->sides.push_back(std::move(s));
      }
    });
    // One untimed exchange sizes every receive buffer (the data is the same in every pass).
    for (Side& s : c->sides) {
      c->partition(s);
      s.recv_counts = c_.exchange_counts(s.send_counts);
    }
    std::uint64_t local_in_bytes = 0, out_rows = 0;
    collectively(c_, [&] {
      for (Side& s : c->sides) {
        const std::uint64_t rows = s.recv_rows();
        if (rows > Comm::kMaxTuplesPerPeer)
          throw SkipCase(std::to_string(rows) + " tuples on one rank exceed what one MPI call can receive");
        s.recv.resize(rows * static_cast<std::uint64_t>(w));
        s.scratch.resize(rows * static_cast<std::uint64_t>(w));
        s.sorted = b_.host_relation(rows, o_.values, t);
        local_in_bytes += rows * static_cast<std::uint64_t>(w) * 4;
      }
    });
    for (Side& s : c->sides) c->exchange(s);
    const int out_values = join ? 2 * o_.values : o_.values;
    const std::uint64_t out_w = static_cast<std::uint64_t>(1 + out_values);
    collectively(c_, [&] {
      for (Side& s : c->sides) c->sort(s);
      // Exact local output size: the reference's count on this rank's sorted parts.
      out_rows = join ? ra::ref::join_rows(c->sides[0].sorted, c->sides[1].sorted) : c->sides[0].sorted.rows();
      const std::uint64_t out_bytes = out_rows * out_w * 4;
      // This rank's device: its parts, the output and the operator's scratch as the backend declares
      // it; on the cpu backend the host buffers of the exchange share that memory and count too.
      b_.release_scratch();  // what earlier cases grew
      plan.add("received parts", local_in_bytes).add("output", out_bytes);
      b_.plan_scratch(ra::op_shape(join ? ra::Op::Join : ra::Op::Unique, variant, c->sides[0].sorted,
                                   join ? &c->sides[1].sorted : nullptr, out_rows, static_cast<int>(out_w)),
                      plan);
      if (!s_.platform().has_transfers()) {
        std::uint64_t host = 0;
        for (const Side& s : c->sides) host += (s.local.words() + s.send.size() + s.recv.size() + s.scratch.size()) * 4;
        plan.add("exchange buffers (generated, sent, received, sort scratch)", host).add("output read back", out_bytes);
      }
      plan.require(s_.platform());
      const std::uint64_t per_rank_size = std::max<std::uint64_t>(1, local_in_bytes / c->sides.size());
      if (static_cast<double>(out_bytes) > o_.max_output_ratio * static_cast<double>(per_rank_size))
        throw SkipCase("output of " + std::to_string(out_bytes >> 20) +
                       " MiB on one rank exceeds --max-output-ratio x input");
    });
    return {c, local_in_bytes, out_rows, out_values};
  }

  // Uploads the staged case's sorted parts and makes its figures across ranks.
  Prepared prepare(const Staged& st, Transfer t) {
    const std::shared_ptr<DistRaCase>& c = st.c;
    const std::uint64_t local_in_bytes = st.local_in_bytes, out_rows = st.out_rows;
    const int out_values = st.out_values, w = 1 + o_.values;
    const std::uint64_t out_w = static_cast<std::uint64_t>(1 + out_values);
    collectively(c_, [&] {
      for (Side& s : c->sides) b_.upload(s.sorted, s.dev);
      c->host_out = b_.host_relation(out_rows, out_values, t);
    });

    // Figures across ranks: every rank computes the same values from the same collectives.
    std::uint64_t global_in_bytes = 0, sent_away = 0, sent_off_node = 0;
    std::uint64_t received = 0;
    const std::uint64_t tuple_bytes = static_cast<std::uint64_t>(w) * 4;
    for (const Side& s : c->sides) {
      global_in_bytes += s.spec.rows * tuple_bytes;
      for (int r = 0; r < c_.size(); ++r) {
        const std::size_t d = static_cast<std::size_t>(r);
        if (r != c_.rank()) sent_away += s.send_counts[d];
        if (node_of_[d] != node_of_[static_cast<std::size_t>(c_.rank())]) sent_off_node += s.send_counts[d];
      }
      received += s.recv_rows();
    }
    const std::vector<std::uint64_t> rows_per_rank = c_.all_gather(received);
    std::vector<std::uint64_t> sent_bytes_per_rank = c_.all_gather(sent_away * tuple_bytes);
    const std::uint64_t exchanged_bytes =
        std::accumulate(sent_bytes_per_rank.begin(), sent_bytes_per_rank.end(), std::uint64_t{0});
    const std::uint64_t off_node_bytes = c_.sum(sent_off_node) * tuple_bytes;
    const std::uint64_t busiest_bytes = c_.max(local_in_bytes + out_rows * out_w * 4);
    const std::uint64_t global_out_rows = c_.sum(out_rows);
    const double mean_rows =
        static_cast<double>(std::accumulate(rows_per_rank.begin(), rows_per_rank.end(), std::uint64_t{0})) /
        static_cast<double>(c_.size());
    const std::uint64_t max_rows = *std::max_element(rows_per_rank.begin(), rows_per_rank.end());

    Prepared p;
    c->bus = t != Transfer::None;
    p.pass = [c] {
      return collective_pass(
          *c->comm, [c] { return c->local_pass(); }, c->bus ? kPhases : kPhasesNoBus);
    };
    p.verify = [this, c, out_values] { return verify(*c, out_values); };
    p.elements = c->sides[0].spec.rows;
    p.input_bytes = global_in_bytes;
    // The busiest rank's device traffic: its inputs read once, its output written once. % of peak
    // then compares that rank's rate with its own device's ceiling.
    p.min_bytes_moved = busiest_bytes;
    p.transfer_bytes = t == Transfer::None ? 0 : busiest_bytes;
    p.extra = {{"ranks", c_.size()},
               {"scaling", o_.weak ? "weak" : "strong"},
               {"global_rows", c->sides[0].spec.rows},
               {"output_rows", global_out_rows},
               {"rows_per_rank", rows_per_rank},
               {"imbalance", mean_rows > 0 ? static_cast<double>(max_rows) / mean_rows : 1.0},
               {"exchanged_bytes", exchanged_bytes},
               {"sent_bytes_per_rank", sent_bytes_per_rank},
               {"off_node_bytes", off_node_bytes},
               {"nodes", std::set<std::uint64_t>(node_of_.begin(), node_of_.end()).size()},
               {"values", o_.values}};
    return p;
  }

  // Rank 0 gathers every rank's output and compares it, as a multiset, with the serial reference
  // run on the whole global input in its serial order.
  Verification verify(DistRaCase& c, int out_values) {
    const int out_w = 1 + out_values;
    std::vector<std::uint32_t> all = c_.gather_tuples(c.host_out.data(), c.dev_out->rows(), out_w, 0);
    Verification v = Verification::pass();
    if (c_.rank() == 0) {
      std::vector<ra::Relation> global;
      for (const Side& s : c.sides) {
        ra::Relation g(s.spec.rows, s.spec.values);
        generate_rows(g, s.spec, {0, s.spec.rows}, s.seed, threads());
        global.push_back(stable_sorted_by_key(g));
      }
      ra::Relation want = c.join ? ra::ref::join(global[0], global[1]) : ra::ref::unique(global[0]);
      const std::uint64_t got_rows = all.size() / static_cast<std::uint64_t>(out_w);
      ra::Relation got(got_rows, out_values);
      if (!all.empty()) std::memcpy(got.data(), all.data(), all.size() * 4);
      ra::sort_tuples(want, threads());
      ra::sort_tuples(got, threads());
      std::string diff = ra::first_difference(got, want);
      v = diff.empty() ? Verification::pass("all " + std::to_string(want.rows()) + " tuples gathered from " +
                                            std::to_string(c_.size()) + " ranks equal the reference as a multiset")
                       : Verification::fail(diff);
      v.extra["rows"] = want.rows();
    }
    return broadcast_verdict(c_, v);
  }

  // The node of every rank: the lowest rank on it (Comm::node), so that the bytes which cross
  // between nodes (the network's share of the exchange) can be told from those within a node.
  static std::vector<std::uint64_t> node_of_ranks(const Comm& c) {
    const std::string leader = c.node().broadcast(std::to_string(c.rank()), 0);
    return c.all_gather(std::stoull(leader));
  }

  Session& s_;
  const Comm& c_;
  ra::RaBackend& b_;
  const DistOptions& o_;
  const std::vector<std::uint64_t> node_of_;
};

}  // namespace

void run_dist_ra(Session& s, const Comm& comm, ra::RaBackend& backend, const DistOptions& o) {
  DistRaRunner(s, comm, backend, o).run();
}

}  // namespace hdb::dist
