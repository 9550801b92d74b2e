#pragma once
// The CUB algorithms the backends call, under one name: hdb::cuda::prim. On a GPU these are CUB's
// own (aliases, nothing in between); under host execution a host implementation with CUB's
// signatures and its two-call protocol (a first call with d_temp_storage == nullptr sizes the
// temporary storage, which the memory plans count; the second call runs), since CUB has no CPU
// path (runtime/host/prim.hpp).
#ifdef HDB_CUDA_HOST
#include "runtime/host/prim.hpp"
#else
#include <cub/block/block_scan.cuh>
#include <cub/device/device_merge.cuh>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

namespace hdb::cuda::prim {
using cub::DeviceMerge;
using cub::DeviceMergeSort;
using cub::DeviceRadixSort;
using cub::DeviceReduce;
using cub::DeviceScan;
using cub::DeviceSelect;
using cub::DoubleBuffer;
template <class T, int BlockThreads>
using BlockScan = cub::BlockScan<T, BlockThreads>;
}  // namespace hdb::cuda::prim
#endif
