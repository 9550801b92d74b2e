// Host execution's traffic profile (traffic.hpp): the accesses of one block are kept per thread and
// grouped into warp requests when the block ends; the requests' sectors go through the L2 model.
#include "runtime/host/traffic.hpp"

#include <algorithm>
#include <array>
#include <list>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "runtime/host/engine.hpp"
#include "runtime/host/state.hpp"

namespace hdb::cuda::host::traffic {

const DeviceModel& h200() {
  // results/reference/nvidia-h200: device_copy/memcpy at 1 GB (4248 GB/s, bytes read + written) and
  // device_copy/kernel at 32 KB (6.78 us: a launch with nothing to move, timed by events).
  static const DeviceModel m{"nvidia-h200", 60.0 * 1024 * 1024, 4248.0, 6.784e-6,
                             "results/reference/nvidia-h200: device_copy/memcpy@1G's 4248 GB/s, "
                             "device_copy/kernel@32K's 6.78 us a launch; L2 60 MB"};
  return m;
}

namespace detail {
bool counting = false;
}

namespace {

bool g_instrumented = false;
constexpr std::uint64_t kSector = 32;

struct Rec {
  std::uintptr_t site;
  std::uintptr_t address;
  std::uint32_t bytes;
  Kind kind;
};

// The L2 model: least recently used sectors, write-back (a dirty sector costs 32 bytes when it
// leaves), write-allocate without a fetch (a store fills its bytes; the sector is not read first).
class L2Model {
 public:
  void reset(std::uint64_t sectors) {
    capacity_ = std::max<std::uint64_t>(sectors, 1);
    order_.clear();
    where_.clear();
    read_ = written_ = 0;
  }
  void touch(std::uint64_t sector, Kind kind) {
    const bool writes = kind != Kind::Load;
    auto it = where_.find(sector);
    if (it != where_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      it->second->dirty |= writes;
      return;
    }
    if (kind != Kind::Store) read_ += kSector;  // a load or an atomic reads the sector first
    order_.push_front(Line{sector, writes});
    where_[sector] = order_.begin();
    if (order_.size() > capacity_) {
      if (order_.back().dirty) written_ += kSector;
      where_.erase(order_.back().sector);
      order_.pop_back();
    }
  }
  // What is still dirty is written back in the end.
  void drain() {
    for (const Line& l : order_)
      if (l.dirty) written_ += kSector;
    order_.clear();
    where_.clear();
  }
  std::uint64_t read() const { return read_; }
  std::uint64_t written() const { return written_; }

 private:
  struct Line {
    std::uint64_t sector;
    bool dirty;
  };
  std::uint64_t capacity_ = 1;
  std::list<Line> order_;
  std::unordered_map<std::uint64_t, std::list<Line>::iterator> where_;
  std::uint64_t read_ = 0, written_ = 0;
};

struct Counters {
  std::uint64_t launches = 0, blocks = 0, threads = 0, barriers = 0, shuffles = 0, atomics = 0;
  std::uint64_t requests[2] = {0, 0}, sectors[2] = {0, 0};  // [0] loads, [1] stores
  std::uint64_t requested_bytes = 0;                        // by the threads
  std::uint64_t delivered_bytes = 0;     // by the requests: a byte several lanes of one request ask for, once
  std::array<std::uint64_t, 5> width{};  // 1, 2, 4, 8, 16 bytes
  std::uint64_t unique_bytes = 0;
  std::uint64_t memsets = 0, device_copies = 0, library_calls = 0;
  std::uint64_t merged = 0;  // thread accesses folded into a wider one (vectorise)
};

struct Profile {
  DeviceModel device;
  std::thread::id owner;
  Counters c;
  L2Model l2;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> allocations;  // [begin, end), sorted
  std::vector<std::vector<Rec>> per_thread;                            // the running block's accesses, by linear thread
  unsigned block_threads = 0;
  std::unordered_set<std::uint64_t> launch_sectors;
  std::unordered_set<std::uintptr_t> atomic_addresses;
};

Profile& profile() {
  static Profile p;
  return p;
}

void snapshot_allocations(Profile& p) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.memory_mutex());
  p.allocations.clear();
  for (const auto& [base, bytes] : st.allocations()) p.allocations.emplace_back(base, base + bytes);
}

bool in_device_memory(const Profile& p, std::uintptr_t a, std::size_t bytes) {
  auto it = std::upper_bound(p.allocations.begin(), p.allocations.end(), std::make_pair(a, UINTPTR_MAX));
  if (it == p.allocations.begin()) return false;
  --it;
  return a >= it->first && a + bytes <= it->second;
}

// The widest access (up to 16 bytes) that `bytes` and the address both allow: an aggregate copy
// arrives as one range, which a GPU makes as loads of its type's alignment (see docs/cuda.md).
std::uint32_t piece_width(std::uintptr_t a, std::uint32_t bytes) {
  std::uint32_t w = 16;
  while (w > 1 && (bytes % w != 0 || a % w != 0)) w /= 2;
  return w;
}

int width_slot(std::uint32_t w) { return w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : w == 8 ? 3 : 4; }

// Sectors a whole-range operation (memset, device copy) touches, in order, through the L2 model.
void touch_range(Profile& p, std::uintptr_t a, std::size_t bytes, Kind kind) {
  if (bytes == 0) return;
  for (std::uint64_t s = a / kSector; s <= (a + bytes - 1) / kSector; ++s) {
    p.l2.touch(s, kind);
    p.launch_sectors.insert(s);
  }
}

void close_launch_sectors(Profile& p) {
  p.c.unique_bytes += p.launch_sectors.size() * kSector;
  p.launch_sectors.clear();
}

struct RequestKey {
  std::uintptr_t site;
  std::uint32_t occurrence;
  std::uint32_t piece;
  bool operator==(const RequestKey& o) const {
    return site == o.site && occurrence == o.occurrence && piece == o.piece;
  }
};
struct RequestKeyHash {
  std::size_t operator()(const RequestKey& k) const {
    return std::hash<std::uintptr_t>()(k.site) ^ (std::size_t{k.occurrence} * 0x9e3779b97f4a7c15ull) ^ (k.piece << 7);
  }
};
struct Request {
  Kind kind;
  std::vector<std::pair<std::uintptr_t, std::uint32_t>> lanes;  // each lane's address and width
};

// nvcc's load/store vectoriser, modelled: GCC compiles `uint4 v = in4[i]; use(v.x, ..., v.w)` as four
// 4-byte loads where nvcc makes one 16-byte load. A run of a thread's accesses that follow one
// another in time and in memory, from distinct call sites, of one kind and element size, that
// together fill an 8- or 16-byte word aligned to its size, is taken as one access of that word.
// (nvcc merges only where it can prove the alignment, from the type: a uint32_t* read word by word at
// an address that happens to be aligned is counted merged here, and 4-byte on a GPU; docs/cuda.md.)
void vectorise(const std::vector<Rec>& in, std::vector<Rec>& out, std::uint64_t& merged) {
  out.clear();
  for (std::size_t i = 0; i < in.size();) {
    const Rec& a = in[i];
    std::size_t j = i + 1;
    std::uint32_t bytes = a.bytes;
    if (a.kind != Kind::Atomic && a.bytes < 16) {
      while (j < in.size() && bytes + a.bytes <= 16) {
        const Rec& b = in[j];
        bool distinct = true;
        for (std::size_t k = i; k < j; ++k) distinct &= in[k].site != b.site;
        if (b.kind != a.kind || b.bytes != a.bytes || b.address != a.address + bytes || !distinct) break;
        bytes += b.bytes;
        ++j;
      }
      // The longest prefix of the run that is a whole aligned 16- or 8-byte word.
      while (j > i + 1 && !((bytes == 16 || bytes == 8) && a.address % bytes == 0)) {
        --j;
        bytes -= a.bytes;
      }
    }
    if (j > i + 1) {
      out.push_back(Rec{a.site, a.address, bytes, a.kind});
      merged += j - i - 1;
    } else {
      out.push_back(a);
      j = i + 1;
    }
    i = j;
  }
}

// One warp's accesses as requests: lane by lane, the N-th access of a lane at a call site joins the
// N-th of every other lane at that site.
void warp_requests(Profile& p, unsigned first, unsigned last) {
  std::unordered_map<RequestKey, std::size_t, RequestKeyHash> index;
  std::vector<Request> requests;  // in the order first seen: the L2 model sees them in program order
  std::unordered_map<std::uintptr_t, std::uint32_t> occurrences;
  std::vector<Rec> lane;
  for (unsigned t = first; t < last; ++t) {
    occurrences.clear();
    vectorise(p.per_thread[t], lane, p.c.merged);
    for (const Rec& r : lane) {
      const std::uint32_t n = occurrences[r.site]++;
      if (r.kind == Kind::Atomic) {
        ++p.c.atomics;
        p.atomic_addresses.insert(r.address);
        touch_range(p, r.address, r.bytes, Kind::Atomic);
        continue;
      }
      const std::uint32_t w = piece_width(r.address, r.bytes);
      for (std::uint32_t off = 0, piece = 0; off < r.bytes; off += w, ++piece) {
        const std::uintptr_t a = r.address + off;
        auto [it, fresh] = index.try_emplace(RequestKey{r.site, n, piece}, requests.size());
        if (fresh) requests.push_back(Request{r.kind, {}});
        requests[it->second].lanes.emplace_back(a, w);
        ++p.c.width[width_slot(w)];
        p.c.requested_bytes += w;
      }
    }
    p.per_thread[t].clear();
  }
  std::vector<std::uint64_t> sectors;
  for (Request& q : requests) {
    // The bytes the request delivers (lanes that ask for the same bytes get them once) and its sectors.
    std::sort(q.lanes.begin(), q.lanes.end());
    std::uintptr_t covered_to = 0;
    sectors.clear();
    for (const auto& [a, w] : q.lanes) {
      const std::uintptr_t from = std::max(a, covered_to);
      if (a + w > from) p.c.delivered_bytes += a + w - from;
      covered_to = std::max(covered_to, a + w);
      for (std::uint64_t s = a / kSector; s <= (a + w - 1) / kSector; ++s)
        if (sectors.empty() || s > sectors.back()) sectors.push_back(s);
    }
    const int k = q.kind == Kind::Store ? 1 : 0;
    ++p.c.requests[k];
    p.c.sectors[k] += sectors.size();
    for (std::uint64_t s : sectors) {
      p.l2.touch(s, q.kind);
      p.launch_sectors.insert(s);
    }
  }
}

bool owned(const Profile& p) { return detail::counting && std::this_thread::get_id() == p.owner; }

}  // namespace

bool instrumented() { return g_instrumented; }
void set_instrumented() { g_instrumented = true; }

void begin(const DeviceModel& device) {
  if (!g_instrumented) throw std::logic_error("traffic::begin in a build whose kernels are not instrumented");
  Profile& p = profile();
  p.device = device;
  p.owner = std::this_thread::get_id();
  p.c = Counters{};
  p.l2.reset(static_cast<std::uint64_t>(device.l2_bytes) / kSector);
  p.launch_sectors.clear();
  p.atomic_addresses.clear();
  snapshot_allocations(p);
  detail::counting = true;
}

nlohmann::json end() {
  Profile& p = profile();
  detail::counting = false;
  p.l2.drain();
  const Counters& c = p.c;
  const std::uint64_t sectors = c.sectors[0] + c.sectors[1];
  const std::uint64_t dram = p.l2.read() + p.l2.written();
  const std::uint64_t launch_like = c.launches + c.memsets + c.device_copies;
  nlohmann::json j;
  j["device_model"] = {{"name", p.device.name},
                       {"l2_bytes", p.device.l2_bytes},
                       {"copy_gbps", p.device.copy_gbps},
                       {"launch_s", p.device.launch_s},
                       {"source", p.device.source}};
  j["launches"] = c.launches;
  j["blocks"] = c.blocks;
  j["threads"] = c.threads;
  j["barriers"] = c.barriers;
  j["shuffles"] = c.shuffles;
  j["atomics"] = c.atomics;
  j["atomic_addresses"] = p.atomic_addresses.size();
  j["requests"] = c.requests[0] + c.requests[1];
  j["requests_ld"] = c.requests[0];
  j["requests_st"] = c.requests[1];
  j["sectors"] = sectors;
  j["sectors_ld"] = c.sectors[0];
  j["sectors_st"] = c.sectors[1];
  j["requested_bytes"] = c.requested_bytes;
  j["access_width"] = {{"1", c.width[0]}, {"2", c.width[1]}, {"4", c.width[2]}, {"8", c.width[3]}, {"16", c.width[4]}};
  j["unique_bytes"] = c.unique_bytes;
  j["dram_bytes_model"] = dram;
  j["dram_read_bytes_model"] = p.l2.read();
  j["dram_write_bytes_model"] = p.l2.written();
  j["memsets"] = c.memsets;
  j["device_copies"] = c.device_copies;
  j["library_calls"] = c.library_calls;
  j["vectorised_accesses"] = c.merged;
  j["delivered_bytes"] = c.delivered_bytes;
  j["sector_efficiency"] =
      sectors ? nlohmann::json(static_cast<double>(c.delivered_bytes) / (sectors * kSector)) : nlohmann::json(nullptr);
  j["model_ms"] = 1e3 * (static_cast<double>(dram) / (p.device.copy_gbps * 1e9) + launch_like * p.device.launch_s);
  return j;
}

void access(const void* site, const void* address, std::size_t bytes, Kind kind) {
  Profile& p = profile();
  if (!engine::current || bytes == 0 || !owned(p)) return;  // outside a kernel first: the cheapest test
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  if (!in_device_memory(p, a, bytes)) return;
  const unsigned t = engine::current->linear_thread();
  if (t >= p.per_thread.size()) return;
  p.per_thread[t].push_back(Rec{reinterpret_cast<std::uintptr_t>(site), a, static_cast<std::uint32_t>(bytes), kind});
}

void launch_begin(unsigned threads) {
  Profile& p = profile();
  if (!owned(p)) return;
  snapshot_allocations(p);
  if (p.per_thread.size() < threads) p.per_thread.resize(threads);
  p.block_threads = threads;
  ++p.c.launches;
}

void block_end() {
  Profile& p = profile();
  if (!owned(p)) return;
  ++p.c.blocks;
  p.c.threads += p.block_threads;
  for (unsigned first = 0; first < p.block_threads; first += 32)
    warp_requests(p, first, std::min(first + 32, p.block_threads));
}

void launch_end() {
  Profile& p = profile();
  if (!owned(p)) return;
  for (auto& v : p.per_thread) v.clear();  // a faulted block's leftovers
  close_launch_sectors(p);
}

void barrier() {
  Profile& p = profile();
  if (owned(p)) ++p.c.barriers;
}

void shuffle() {
  Profile& p = profile();
  if (owned(p)) ++p.c.shuffles;
}

void device_fill(const void* dst, std::size_t bytes) {
  Profile& p = profile();
  if (!owned(p)) return;
  ++p.c.memsets;
  touch_range(p, reinterpret_cast<std::uintptr_t>(dst), bytes, Kind::Store);
  close_launch_sectors(p);
}

void device_copy(const void* dst, const void* src, std::size_t bytes) {
  Profile& p = profile();
  if (!owned(p)) return;
  ++p.c.device_copies;
  touch_range(p, reinterpret_cast<std::uintptr_t>(src), bytes, Kind::Load);
  touch_range(p, reinterpret_cast<std::uintptr_t>(dst), bytes, Kind::Store);
  close_launch_sectors(p);
}

void library_call() {
  Profile& p = profile();
  if (owned(p)) ++p.c.library_calls;
}

}  // namespace hdb::cuda::host::traffic
