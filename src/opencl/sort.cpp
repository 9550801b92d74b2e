#include "sort.hpp"

#include <algorithm>
#include <string>

#include "harness/errors.hpp"

namespace hdb::opencl::kernels {
extern const char scan[];
extern const char sort[];
}  // namespace hdb::opencl::kernels

namespace hdb::opencl {
namespace {

std::size_t floor_pow2(std::size_t x) {
  std::size_t p = 1;
  while (p <= x / 2) p *= 2;
  return p;
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

void launch_groups(OpenClPlatform& p, cl::Kernel& k, std::uint64_t groups, std::size_t wg,
                   std::vector<cl::Event>& evs) {
  cl::Event e;
  p.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(groups * wg), cl::NDRange(wg), nullptr, &e);
  evs.push_back(e);
}

constexpr std::uint32_t kRadix = 1u << RadixSort::kRadixBits;
constexpr std::uint32_t kItems = 8;  // keys per work-item and pass: radix tiles of 8 work-group widths

}  // namespace

std::size_t preferred_work_group(OpenClPlatform& p) {
  return floor_pow2(std::min<std::size_t>(256, std::max<std::size_t>(1, p.max_work_group_size())));
}

std::size_t fit_work_group(OpenClPlatform& p, const cl::Kernel& k, std::size_t wg) {
  return floor_pow2(std::max<std::size_t>(1, std::min(wg, k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(p.device()))));
}

cl::Program& build_for_work_group(OpenClPlatform& p, const std::string& name, const char* source,
                                  const std::string& options, const std::vector<const char*>& kernels,
                                  std::size_t& wg) {
  wg = floor_pow2(std::max<std::size_t>(wg, 1));
  for (;;) {
    cl::Program& prog = p.program(name, source, options + " -DWG=" + std::to_string(wg));
    std::size_t fit = wg;
    for (const char* k : kernels) fit = fit_work_group(p, cl::Kernel(prog, k), fit);
    if (fit == wg) return prog;
    wg = fit;
  }
}

DeviceScan::DeviceScan(OpenClPlatform& p, bool wide) : p_(p), elem_(wide ? 8 : 4), wg_(preferred_work_group(p)) {
  checked("building the device scan", [&] {
    cl::Program& prog = build_for_work_group(p, wide ? "scan64" : "scan", kernels::scan, wide ? "-DSCAN_WIDE" : "",
                                             {"scan_blocks", "scan_add"}, wg_);
    blocks_ = cl::Kernel(prog, "scan_blocks");
    add_ = cl::Kernel(prog, "scan_add");
    return 0;
  });
}

void DeviceScan::reserve(std::uint64_t n) {
  for (std::size_t level = 0; n > 1 || level == 0; ++level) {
    const std::uint64_t b = ceil_div(std::max<std::uint64_t>(n, 1), wg_);
    if (level == sums_.size()) {
      sums_.emplace_back();
      offsets_.emplace_back();
      cap_.push_back(0);
    }
    if (cap_[level] < b) {
      sums_[level] = scratch_buffer(p_, b * elem_);
      offsets_[level] = scratch_buffer(p_, b * elem_);
      cap_[level] = b;
    }
    n = b;
  }
}

void DeviceScan::run(const cl::Buffer& in, cl::Buffer& out, std::uint32_t n, std::vector<cl::Event>& evs) {
  top_ = -1;
  if (n == 0) return;
  reserve(n);
  checked("device scan", [&] {
    level(in, out, n, 0, evs);
    return 0;
  });
}

void DeviceScan::level(const cl::Buffer& in, cl::Buffer& out, std::uint32_t n, std::size_t l,
                       std::vector<cl::Event>& evs) {
  const std::uint64_t b = ceil_div(n, wg_);
  set_args("scan_blocks arguments", blocks_, in, cl_uint{n}, out, sums_[l]);
  launch_groups(p_, blocks_, b, wg_, evs);
  if (b == 1) {
    top_ = static_cast<int>(l);
    return;
  }
  level(sums_[l], offsets_[l], static_cast<std::uint32_t>(b), l + 1, evs);
  set_args("scan_add arguments", add_, out, cl_uint{n}, offsets_[l]);
  launch_groups(p_, add_, b, wg_, evs);
}

std::uint64_t DeviceScan::total() {
  if (top_ < 0) return 0;
  cl_ulong t = 0;  // little-endian: a uint total fills the low half
  checked("reading a scan's total",
          [&] { return p_.queue().enqueueReadBuffer(sums_[static_cast<std::size_t>(top_)], CL_TRUE, 0, elem_, &t); });
  return t;
}

std::size_t key_bytes(SortKey k) {
  switch (k) {
    case SortKey::U32: return 4;
    case SortKey::U64: return 8;
    case SortKey::U128: return 16;
  }
  return 0;
}

RadixSort::RadixSort(OpenClPlatform& p, SortKey key)
    : p_(p),
      key_(key),
      passes_(static_cast<unsigned>(8 * key_bytes(key) / kRadixBits)),
      wg_(preferred_work_group(p)),
      scan_(p) {
  // radix_scatter keeps RADIX + 2 uints per work-item in local memory (the rank table, the scan).
  const std::uint64_t local = p.device().getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  while (wg_ > 1 && (kRadix + 2) * 4 * wg_ + 2 * kRadix * 4 > local) wg_ /= 2;
  const char* kind = key == SortKey::U32 ? "1" : key == SortKey::U64 ? "2" : "3";
  checked("building the radix sort", [&] {
    cl::Program& prog = build_for_work_group(p, "sort", kernels::sort,
                                             std::string("-DKKIND=") + kind + " -DITEMS=" + std::to_string(kItems),
                                             {"radix_count", "radix_scatter"}, wg_);
    count_ = cl::Kernel(prog, "radix_count");
    scatter_ = cl::Kernel(prog, "radix_scatter");
    return 0;
  });
  tile_ = static_cast<std::uint32_t>(wg_ * kItems);
}

void RadixSort::reserve(std::uint64_t n) {
  if (n <= cap_ && cap_) return;
  keys_tmp_ = scratch_buffer(p_, n * key_bytes(key_));
  vals_tmp_ = scratch_buffer(p_, n * 4);
  const std::uint64_t hist = kRadix * ceil_div(std::max<std::uint64_t>(n, 1), tile_);
  hist_ = scratch_buffer(p_, hist * 4);
  scan_.reserve(hist);
  cap_ = std::max<std::uint64_t>(n, 1);
}

void RadixSort::sort(const cl::Buffer& keys_in, const cl::Buffer* vals_in, cl::Buffer& keys_out, cl::Buffer& vals_out,
                     std::uint32_t n, std::vector<cl::Event>& evs) {
  if (n == 0) return;
  reserve(n);
  checked("radix sort", [&] {
    const std::uint64_t groups = ceil_div(n, tile_);
    const auto hist_n = static_cast<std::uint32_t>(kRadix * groups);
    // Pass p writes the outputs when passes_ - p is odd: the last pass ends there, and the first
    // (with an even number of passes) writes only the temporaries, so the outputs may be the inputs.
    static_assert((32 / kRadixBits) % 2 == 0, "32-, 64- and 128-bit keys need an even number of passes");
    for (unsigned pass = 0; pass < passes_; ++pass) {
      const bool to_out = (passes_ - pass) % 2 == 1;
      const cl::Buffer& kin = pass == 0 ? keys_in : to_out ? keys_tmp_ : keys_out;
      // With the index as payload, the first pass reads no payload: any other buffer stands in.
      const cl::Buffer& vin = pass == 0 ? (vals_in ? *vals_in : vals_out) : to_out ? vals_tmp_ : vals_out;
      cl::Buffer& kout = to_out ? keys_out : keys_tmp_;
      cl::Buffer& vout = to_out ? vals_out : vals_tmp_;
      const cl_uint shift = pass * kRadixBits, iota = pass == 0 && !vals_in ? 1 : 0;
      set_args("radix_count arguments", count_, kin, cl_uint{n}, shift, hist_);
      launch_groups(p_, count_, groups, wg_, evs);
      scan_.run(hist_, hist_, hist_n, evs);
      set_args("radix_scatter arguments", scatter_, kin, vin, iota, cl_uint{n}, shift, hist_, kout, vout);
      launch_groups(p_, scatter_, groups, wg_, evs);
    }
    return 0;
  });
}

TupleSort::TupleSort(OpenClPlatform& p) : p_(p), scan_(p) {
  cpu_ = (p.device().getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU) != 0;
  units_ = std::max<cl_uint>(1, p.device().getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
  cache_ = p.device().getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
  override_tuning(cpu_, 0);
}

TupleSort::Kernels& TupleSort::kernels(unsigned bits) {
  auto it = kernels_.find(bits);
  if (it != kernels_.end()) return it->second;
  Kernels k;
  std::size_t wg = preferred_work_group(p_);
  checked("building the tuple sort", [&] {
    cl::Program& prog = build_for_work_group(
        p_, "sort", kernels::sort,
        std::string("-DKKIND=1 -DITEMS=") + std::to_string(kItems) + " -DTR_BITS=" + std::to_string(bits),
        {"tuple_count", "tuple_scatter"}, wg);
    k.count = cl::Kernel(prog, "tuple_count");
    k.scatter = cl::Kernel(prog, "tuple_scatter");
    return 0;
  });
  return kernels_.emplace(bits, k).first->second;
}

void TupleSort::override_tuning(bool cpu, std::uint32_t floor, unsigned bits) {
  cpu_ = cpu;
  floor_ = floor;
  forced_bits_ = bits;
  // The kernels have no barriers: on a CPU device a work-group of one work-item is one task of the
  // thread pool (dynamic balance across cores); on a GPU, 64 work-items a group.
  Kernels& k = kernels(8);
  local_ = cpu_ ? 1 : std::min<std::size_t>(64, fit_work_group(p_, k.count, 64));
  local_ = std::min(local_, fit_work_group(p_, k.scatter, local_));
}

unsigned TupleSort::bits_for(std::uint32_t n, std::uint32_t w) const {
  if (forced_bits_) return forced_bits_;
  // CPU device, tuples beyond twice its cache: 11 bits a pass (3 passes; 2048 counters a chunk),
  // where one pass fewer over memory outweighs 8x the output streams (measured 15-20% faster at
  // 256M here, slower at 32M where the data is near the cache). Otherwise 8 bits (4 passes).
  return cpu_ && std::uint64_t{n} * w * 4 > 2 * cache_ ? 11 : 8;
}

std::uint32_t TupleSort::chunk_for(std::uint32_t n) const {
  // CPU: about 16 chunks per compute unit, none shorter than 16K tuples (a chunk's 256 counters and
  // histogram entries cost little against it). GPU: chunks of at least 256 tuples (the histogram,
  // 256 entries a chunk, is then no larger than the keys), enough work-items to fill the device.
  const std::uint64_t want = cpu_ ? std::uint64_t{units_} * 16 : std::uint64_t{units_} * 2048;
  const std::uint64_t floor = floor_ ? floor_ : cpu_ ? 16384 : 256;
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(floor, ceil_div(std::max<std::uint32_t>(n, 1), want)));
}

void TupleSort::sort(const cl::Buffer& in, cl::Buffer& out, std::uint32_t n, std::uint32_t w,
                     std::vector<cl::Event>& evs, std::uint32_t key_words) {
  if (n == 0) return;
  const std::uint32_t chunk = chunk_for(n);
  const auto blocks = static_cast<std::uint32_t>(ceil_div(n, chunk));
  // A 64-bit key's digits must not straddle its two words: 8 bits a pass, 8 passes.
  bits_ = key_words == 2 ? 8 : bits_for(n, w);
  passes_ = (32 * key_words + bits_ - 1) / bits_;
  Kernels& k = kernels(bits_);
  const std::uint64_t hist = (std::uint64_t{1} << bits_) * blocks;
  if (tmp_cap_ < std::uint64_t{n} * w) {
    tmp_ = scratch_buffer(p_, std::uint64_t{n} * w * 4);
    tmp_cap_ = std::uint64_t{n} * w;
  }
  if (hist_cap_ < hist) {
    hist_ = scratch_buffer(p_, hist * 4);
    hist_cap_ = hist;
  }
  scan_.reserve(hist);
  const std::uint64_t groups = ceil_div(blocks, local_);
  checked("tuple sort", [&] {
    // The passes alternate between tmp and out so that the last writes `out` (in -> tmp -> out ->
    // tmp -> out for 4 passes, in -> out -> tmp -> out for 3); `in` is only read.
    for (unsigned pass = 0; pass < passes_; ++pass) {
      cl::Buffer& dst = (passes_ - pass) % 2 == 1 ? out : tmp_;
      const cl::Buffer& src = pass == 0 ? in : (passes_ - pass) % 2 == 1 ? tmp_ : out;
      // Key bit pass * bits_, counted from the least significant: in the last key word first.
      const cl_uint bit = pass * bits_, shift = bit % 32, kw = key_words - 1 - bit / 32;
      set_args("tuple_count arguments", k.count, src, cl_uint{n}, cl_uint{w}, kw, shift, cl_uint{chunk},
               cl_uint{blocks}, hist_);
      launch_groups(p_, k.count, groups, local_, evs);
      scan_.run(hist_, hist_, static_cast<std::uint32_t>(hist), evs);
      set_args("tuple_scatter arguments", k.scatter, src, cl_uint{n}, cl_uint{w}, kw, shift, cl_uint{chunk},
               cl_uint{blocks}, hist_, dst);
      launch_groups(p_, k.scatter, groups, local_, evs);
    }
    return 0;
  });
}

}  // namespace hdb::opencl
