#pragma once
// The one way a kernel is launched: HDB_LAUNCH(kernel, grid, block, shared_bytes, stream)(args...).
// Under nvcc it is exactly kernel<<<grid, block, shared_bytes, stream>>>(args...), so the compiled
// program is the one the triple-chevron launch gave; under host execution (HDB_CUDA_HOST, the
// .cu files compiled as C++) it runs the kernel on host threads, one per GPU thread of a block
// (runtime/host/launch.hpp, docs/cuda.md).
#ifdef HDB_CUDA_HOST
#include "runtime/host/launch.hpp"
// The kernel is called through a generic lambda, so a kernel template's arguments are deduced from
// the call's as they are for <<<>>>.
#define HDB_LAUNCH(kernel, grid, block, shared_bytes, stream)             \
  ::hdb::cuda::host::launcher(#kernel, grid, block, shared_bytes, stream, \
                              [=](auto&&... hdb_args) { kernel(static_cast<decltype(hdb_args)>(hdb_args)...); })
#else
#define HDB_LAUNCH(kernel, grid, block, shared_bytes, stream) kernel<<<grid, block, shared_bytes, stream>>>
#endif
