#pragma once
// Host execution: stand-ins for the CUB algorithms the backends call (hdb::cuda::prim), with CUB's
// signatures and semantics as CUB 3.0 documents them, since CUB has no CPU path:
//  - the two-call protocol: d_temp_storage == nullptr only writes the bytes needed (nothing runs);
//    the second call checks that the storage is device memory of at least that size, or fails
//    with cudaErrorInvalidValue as CUB does. The stand-ins use the storage for real (the radix
//    sorts keep their permutation there), so AddressSanitizer sees a buffer that is too small;
//  - radix sorts are stable and order only bits [begin_bit, end_bit) of unsigned keys; a
//    DoubleBuffer's result is in the buffer the selector names afterwards, which is the alternate
//    one (as CUB's onesweep leaves it after an odd number of passes), so code that reads Current()
//    is tested and code that assumes a buffer is not;
//  - scans accumulate in the input's value type (CUB's accumulator for Sum), in place allowed;
//  - a BlockScan whose threads exchange through TempStorage with __syncthreads.
// What they do not show: CUB's own kernels, its tuning and its exact temporary sizes (the memory
// plans count these stand-ins' sizes under host execution, CUB's on a GPU).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "runtime/host/device.hpp"
#include "runtime/host/state.hpp"
#include "runtime/host/traffic.hpp"

namespace hdb::cuda::prim {

namespace detail {

inline constexpr std::size_t kSmallTemp = 256;  // what the non-sorting stand-ins ask for

// The second call of the protocol: runs `body` when the storage is fit for it.
template <class F>
cudaError_t run(void* temp, std::size_t& bytes, std::size_t need, cudaStream_t stream, F&& body) {
  if (temp == nullptr) {
    bytes = need;
    return cudaSuccess;
  }
  host::State& st = host::state();
  if (cudaError_t e = st.sticky()) return e;
  if (!st.valid_stream(stream)) return st.set_last(cudaErrorInvalidResourceHandle);
  if (bytes < need || !st.inside(temp, need)) return st.set_last(cudaErrorInvalidValue);
  if (host::traffic::active()) host::traffic::library_call();
  body();
  return cudaSuccess;
}

template <class K>
std::uint64_t radix_digits(K k, int begin_bit, int end_bit) {
  static_assert(std::is_unsigned_v<K>, "the backends radix-sort unsigned keys only");
  const int bits = end_bit - begin_bit;
  const std::uint64_t v = static_cast<std::uint64_t>(k) >> begin_bit;
  return bits >= 64 ? v : v & ((std::uint64_t{1} << bits) - 1);
}

// The stable order of n keys by their bits [begin_bit, end_bit), kept in `perm` (temporary storage).
template <class K>
void radix_order(const K* keys, std::uint32_t* perm, std::size_t n, int begin_bit, int end_bit) {
  for (std::size_t i = 0; i < n; ++i) perm[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(perm, perm + n, [&](std::uint32_t a, std::uint32_t b) {
    return radix_digits(keys[a], begin_bit, end_bit) < radix_digits(keys[b], begin_bit, end_bit);
  });
}

inline std::size_t sort_temp(std::size_t n) { return n * sizeof(std::uint32_t) + kSmallTemp; }

template <class It>
using value_of = typename std::iterator_traits<It>::value_type;

}  // namespace detail

template <class T>
struct DoubleBuffer {
  T* d_buffers[2] = {nullptr, nullptr};
  int selector = 0;
  DoubleBuffer() = default;
  DoubleBuffer(T* current, T* alternate) : d_buffers{current, alternate} {}
  T* Current() const { return d_buffers[selector]; }
  T* Alternate() const { return d_buffers[selector ^ 1]; }
};

struct DeviceRadixSort {
  template <class K, class V, class N>
  static cudaError_t SortPairs(void* temp, std::size_t& bytes, const K* keys_in, K* keys_out, const V* values_in,
                               V* values_out, N num_items, int begin_bit = 0, int end_bit = sizeof(K) * 8,
                               cudaStream_t stream = nullptr) {
    const auto n = static_cast<std::size_t>(num_items);
    return detail::run(temp, bytes, detail::sort_temp(n), stream, [&] {
      auto* perm = static_cast<std::uint32_t*>(temp);
      detail::radix_order(keys_in, perm, n, begin_bit, end_bit);
      // Gathered through the permutation into separate outputs: inputs and outputs may not overlap.
      for (std::size_t i = 0; i < n; ++i) {
        keys_out[i] = keys_in[perm[i]];
        values_out[i] = values_in[perm[i]];
      }
    });
  }

  template <class K, class V, class N>
  static cudaError_t SortPairs(void* temp, std::size_t& bytes, DoubleBuffer<K>& keys, DoubleBuffer<V>& values,
                               N num_items, int begin_bit = 0, int end_bit = sizeof(K) * 8,
                               cudaStream_t stream = nullptr) {
    const auto n = static_cast<std::size_t>(num_items);
    return detail::run(temp, bytes, detail::sort_temp(n), stream, [&] {
      auto* perm = static_cast<std::uint32_t*>(temp);
      detail::radix_order(keys.Current(), perm, n, begin_bit, end_bit);
      for (std::size_t i = 0; i < n; ++i) {
        keys.Alternate()[i] = keys.Current()[perm[i]];
        values.Alternate()[i] = values.Current()[perm[i]];
      }
      keys.selector ^= 1;
      values.selector ^= 1;
    });
  }

  template <class K, class N>
  static cudaError_t SortKeys(void* temp, std::size_t& bytes, const K* keys_in, K* keys_out, N num_items,
                              int begin_bit = 0, int end_bit = sizeof(K) * 8, cudaStream_t stream = nullptr) {
    const auto n = static_cast<std::size_t>(num_items);
    return detail::run(temp, bytes, detail::sort_temp(n), stream, [&] {
      auto* perm = static_cast<std::uint32_t*>(temp);
      detail::radix_order(keys_in, perm, n, begin_bit, end_bit);
      for (std::size_t i = 0; i < n; ++i) keys_out[i] = keys_in[perm[i]];
    });
  }

  template <class K, class N>
  static cudaError_t SortKeys(void* temp, std::size_t& bytes, DoubleBuffer<K>& keys, N num_items, int begin_bit = 0,
                              int end_bit = sizeof(K) * 8, cudaStream_t stream = nullptr) {
    const auto n = static_cast<std::size_t>(num_items);
    return detail::run(temp, bytes, detail::sort_temp(n), stream, [&] {
      auto* perm = static_cast<std::uint32_t*>(temp);
      detail::radix_order(keys.Current(), perm, n, begin_bit, end_bit);
      for (std::size_t i = 0; i < n; ++i) keys.Alternate()[i] = keys.Current()[perm[i]];
      keys.selector ^= 1;
    });
  }
};

struct DeviceScan {
  template <class In, class Out, class N>
  static cudaError_t ExclusiveSum(void* temp, std::size_t& bytes, In in, Out out, N num_items,
                                  cudaStream_t stream = nullptr) {
    return detail::run(temp, bytes, detail::kSmallTemp, stream, [&] {
      detail::value_of<In> sum{};
      for (std::size_t i = 0; i < static_cast<std::size_t>(num_items); ++i) {
        const detail::value_of<In> x = in[i];  // read before the write: in place is allowed
        out[i] = sum;
        sum = sum + x;
      }
    });
  }

  template <class In, class Out, class N>
  static cudaError_t InclusiveSum(void* temp, std::size_t& bytes, In in, Out out, N num_items,
                                  cudaStream_t stream = nullptr) {
    return detail::run(temp, bytes, detail::kSmallTemp, stream, [&] {
      detail::value_of<In> sum{};
      for (std::size_t i = 0; i < static_cast<std::size_t>(num_items); ++i) {
        sum = sum + static_cast<detail::value_of<In>>(in[i]);
        out[i] = sum;
      }
    });
  }
};

struct DeviceSelect {
  template <class In, class Out, class NumSelected, class N, class Pred>
  static cudaError_t If(void* temp, std::size_t& bytes, In in, Out out, NumSelected num_selected, N num_items,
                        Pred pred, cudaStream_t stream = nullptr) {
    return detail::run(temp, bytes, detail::kSmallTemp, stream, [&] {
      std::size_t k = 0;
      for (std::size_t i = 0; i < static_cast<std::size_t>(num_items); ++i) {
        const detail::value_of<In> x = in[i];
        if (pred(x)) out[k++] = x;
      }
      *num_selected = k;
    });
  }

  // The first item of every run of equal items (operator==).
  template <class In, class Out, class NumSelected, class N>
  static cudaError_t Unique(void* temp, std::size_t& bytes, In in, Out out, NumSelected num_selected, N num_items,
                            cudaStream_t stream = nullptr) {
    return detail::run(temp, bytes, detail::kSmallTemp, stream, [&] {
      std::size_t k = 0;
      for (std::size_t i = 0; i < static_cast<std::size_t>(num_items); ++i) {
        if (i == 0 || !(in[i] == in[i - 1])) out[k++] = in[i];
      }
      *num_selected = k;
    });
  }

  // The first key of every run of keys equal under `equal`, and its value.
  template <class KeysIn, class ValuesIn, class KeysOut, class ValuesOut, class NumSelected, class N, class Equal>
  static cudaError_t UniqueByKey(void* temp, std::size_t& bytes, KeysIn keys_in, ValuesIn values_in, KeysOut keys_out,
                                 ValuesOut values_out, NumSelected num_selected, N num_items, Equal equal,
                                 cudaStream_t stream = nullptr) {
    return detail::run(temp, bytes, detail::kSmallTemp, stream, [&] {
      std::size_t k = 0;
      for (std::size_t i = 0; i < static_cast<std::size_t>(num_items); ++i) {
        if (i > 0 && equal(keys_in[i], keys_in[i - 1])) continue;
        keys_out[k] = keys_in[i];
        values_out[k] = values_in[i];
        ++k;
      }
      *num_selected = k;
    });
  }
};

struct DeviceReduce {
  template <class In, class Out, class N, class Op, class T>
  static cudaError_t Reduce(void* temp, std::size_t& bytes, In in, Out out, N num_items, Op op, T init,
                            cudaStream_t stream = nullptr) {
    return detail::run(temp, bytes, detail::kSmallTemp, stream, [&] {
      T acc = init;
      for (std::size_t i = 0; i < static_cast<std::size_t>(num_items); ++i) acc = op(acc, static_cast<T>(in[i]));
      *out = acc;
    });
  }
};

struct DeviceMergeSort {
  // In place; CUB's merge sort is not documented as stable, this one is (any order CUB may give
  // between equal keys is one this may give too).
  template <class KeyIt, class N, class Less>
  static cudaError_t SortKeys(void* temp, std::size_t& bytes, KeyIt keys, N num_items, Less less,
                              cudaStream_t stream = nullptr) {
    const auto n = static_cast<std::size_t>(num_items);
    return detail::run(temp, bytes, n * sizeof(detail::value_of<KeyIt>) + detail::kSmallTemp, stream,
                       [&] { std::stable_sort(keys, keys + n, less); });
  }
};

struct DeviceMerge {
  // Stable: of equal keys, those of the first input come first.
  template <class K1, class V1, class N1, class K2, class V2, class N2, class KOut, class VOut, class Less>
  static cudaError_t MergePairs(void* temp, std::size_t& bytes, K1 keys1, V1 values1, N1 n1, K2 keys2, V2 values2,
                                N2 n2, KOut keys_out, VOut values_out, Less less, cudaStream_t stream = nullptr) {
    return detail::run(temp, bytes, detail::kSmallTemp, stream, [&] {
      std::size_t i = 0, j = 0, k = 0;
      const auto a = static_cast<std::size_t>(n1), b = static_cast<std::size_t>(n2);
      while (i < a || j < b) {
        if (j == b || (i < a && !less(keys2[j], keys1[i]))) {
          keys_out[k] = keys1[i];
          values_out[k++] = values1[i++];
        } else {
          keys_out[k] = keys2[j];
          values_out[k++] = values2[j++];
        }
      }
    });
  }
};

// A block-wide exclusive prefix sum: every thread of the block calls ExclusiveSum once.
template <class T, int BlockThreads>
class BlockScan {
 public:
  struct TempStorage {
    T item[BlockThreads];
  };
  explicit BlockScan(TempStorage& storage) : s_(storage) {}

  void ExclusiveSum(T input, T& output, T& block_aggregate) {
    const unsigned me = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    s_.item[me] = input;
    __syncthreads();
    T before{}, all{};
    for (unsigned t = 0; t < static_cast<unsigned>(BlockThreads); ++t) {
      if (t == me) before = all;
      all = all + s_.item[t];
    }
    output = before;
    block_aggregate = all;
    __syncthreads();  // TempStorage may be reused after the call, as with CUB
  }

 private:
  TempStorage& s_;
};

}  // namespace hdb::cuda::prim
