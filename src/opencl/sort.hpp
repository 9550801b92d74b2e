#pragma once
// Device primitives shared by the OpenCL backends: an exclusive prefix sum of uint arrays and an
// LSD radix sort of keys (32-, 64- or 128-bit) with a 32-bit payload. Both only enqueue work on the
// platform's in-order queue and hand back the kernels' profiling events, so a caller times exactly
// the kernels. Scratch memory is allocated by reserve(), outside any timed pass; a larger n than
// reserved allocates on the spot.
#include <cstdint>
#include <map>
#include <vector>

#include "runtime/cl_platform.hpp"

namespace hdb::opencl {

// The largest power of two not above min(256, the device's work-group limit): the work-group size
// of the primitives, before each kernel's own limit (CL_KERNEL_WORK_GROUP_SIZE) is applied.
std::size_t preferred_work_group(OpenClPlatform& p);
// The largest power of two not above `wg` nor the kernel's CL_KERNEL_WORK_GROUP_SIZE.
std::size_t fit_work_group(OpenClPlatform& p, const cl::Kernel& k, std::size_t wg);

// Builds `source` with `options` and -DWG=<wg>, for the largest power-of-two wg <= `wg` that every
// kernel in `kernels` accepts (CL_KERNEL_WORK_GROUP_SIZE can be below the device's limit); returns
// the program and sets `wg`.
cl::Program& build_for_work_group(OpenClPlatform& p, const std::string& name, const char* source,
                                  const std::string& options, const std::vector<const char*>& kernels, std::size_t& wg);

// Exclusive prefix sums (scan.cl: a work-group scan per block, the block sums scanned the same way
// recursively, then added back) of uint arrays, or of ulong arrays when `wide` (counts whose sum
// may pass 2^32: join outputs).
class DeviceScan {
 public:
  explicit DeviceScan(OpenClPlatform& p, bool wide = false);
  std::size_t work_group() const { return wg_; }
  void reserve(std::uint64_t n);
  // out[i] = in[0] + ... + in[i-1] for i < n; `out` may be `in`. Kernel events join `evs`.
  void run(const cl::Buffer& in, cl::Buffer& out, std::uint32_t n, std::vector<cl::Event>& evs);
  // Sum of all of the last run's input (a blocking read of one element; 0 after an empty run).
  std::uint64_t total();

 private:
  void level(const cl::Buffer& in, cl::Buffer& out, std::uint32_t n, std::size_t l, std::vector<cl::Event>& evs);
  OpenClPlatform& p_;
  std::size_t elem_ = 4;  // bytes of an element: 4 (uint) or 8 (ulong)
  std::size_t wg_ = 1;
  cl::Kernel blocks_, add_;
  std::vector<cl::Buffer> sums_, offsets_;  // per level: the blocks' sums and their scan
  std::vector<std::uint64_t> cap_;          // blocks each level holds
  int top_ = -1;                            // level whose single block sum is the last total
};

enum class SortKey { U32, U64, U128 };  // U128: two 64-bit limbs (hi, lo), ordered by hi then lo
std::size_t key_bytes(SortKey k);

// Stable LSD radix sort, 4 bits per pass (8, 16, 32 passes). Each pass: a local-memory histogram
// per tile, a DeviceScan of the digit-major histogram, a stable scatter ranked by a local-memory scan
// of per-work-item digit counts.
class RadixSort {
 public:
  RadixSort(OpenClPlatform& p, SortKey key);
  static constexpr unsigned kRadixBits = 4;
  unsigned passes() const { return passes_; }
  std::size_t work_group() const { return wg_; }
  void reserve(std::uint64_t n);
  // Sorts n keys of keys_in with their payload (vals_in, or the index 0..n-1 when vals_in is null)
  // into keys_out/vals_out; the outputs may be the inputs. Kernel events join `evs`.
  void sort(const cl::Buffer& keys_in, const cl::Buffer* vals_in, cl::Buffer& keys_out, cl::Buffer& vals_out,
            std::uint32_t n, std::vector<cl::Event>& evs);

 private:
  OpenClPlatform& p_;
  SortKey key_;
  unsigned passes_;
  std::size_t wg_ = 1;
  std::uint32_t tile_ = 1;
  cl::Kernel count_, scatter_;
  DeviceScan scan_;
  cl::Buffer keys_tmp_, vals_tmp_, hist_;
  std::uint64_t cap_ = 0;
};

// Stable LSD radix sort of whole tuples (`w` uints, the key first) by their 32- or 64-bit key (one
// or two words, high word first), 8 bits a pass (4 or 8 passes): per pass a histogram per chunk of tuples (one
// work-item each, sort.cl's tuple_count), a DeviceScan of the digit-major histogram, and a stable scatter of whole
// tuples (tuple_scatter). The chunk is chosen from the device (see chunk_for): long chunks, a few per compute unit, on
// a CPU device; short ones on a GPU. Correct on any device.
class TupleSort {
 public:
  explicit TupleSort(OpenClPlatform& p);
  // Key bits a pass (8: 4 passes, 11: 3) and the passes of the last sort; bits_for: the choice.
  unsigned bits() const { return bits_; }
  unsigned passes() const { return passes_; }
  unsigned bits_for(std::uint32_t n, std::uint32_t w) const;
  // Tuples per work-item for n tuples on this device, and the local size the kernels run with.
  std::uint32_t chunk_for(std::uint32_t n) const;
  std::size_t local_size() const { return local_; }
  bool cpu_device() const { return cpu_; }
  // Tests: take the parameters of a CPU (true) or other device, with chunks of at least `floor`
  // tuples (0: the device's own choice), so small inputs cross many chunks, and `bits` key bits a
  // pass (0: bits_for's choice).
  void override_tuning(bool cpu, std::uint32_t floor, unsigned bits = 0);
  // Sorts n tuples of w words, keys of key_words words, from `in` into `out` (distinct buffers;
  // `in` is left untouched).
  void sort(const cl::Buffer& in, cl::Buffer& out, std::uint32_t n, std::uint32_t w, std::vector<cl::Event>& evs,
            std::uint32_t key_words = 1);

 private:
  OpenClPlatform& p_;
  bool cpu_ = false;
  std::uint32_t units_ = 1;
  std::size_t local_ = 1;
  std::uint32_t floor_ = 0;
  unsigned forced_bits_ = 0, bits_ = 8, passes_ = 4;
  std::uint64_t cache_ = 0;  // CL_DEVICE_GLOBAL_MEM_CACHE_SIZE
  struct Kernels {
    cl::Kernel count, scatter;
  };
  Kernels& kernels(unsigned bits);  // built once per digit width (-DTR_BITS)
  std::map<unsigned, Kernels> kernels_;
  DeviceScan scan_;
  cl::Buffer tmp_, hist_;
  std::uint64_t tmp_cap_ = 0, hist_cap_ = 0;
};

}  // namespace hdb::opencl
