#pragma once
// Host execution: HDB_LAUNCH(kernel, grid, block, shared_bytes, stream)(args...) under g++.
// The arguments are copied, as a GPU launch copies them, then the launch engine runs the kernel
// body once per GPU thread (launch.cpp).
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace hdb::cuda::host {

// Runs `body` for every thread of every block of the grid, each GPU thread of a block a fiber or a
// thread of its own (engine.hpp), the blocks one after another. A configuration a GPU refuses (no threads, more than
// 1024 a block, a grid beyond its limits, more dynamic shared memory than a block may have) runs nothing and leaves the
// same cudaError_t for cudaGetLastError. Returns that error.
cudaError_t launch(const void* site, const char* name, dim3 grid, dim3 block, std::size_t shared_bytes,
                   cudaStream_t stream, const std::function<void()>& body);

// `call` calls the kernel with the arguments it is given (HDB_LAUNCH's lambda); its type, one per
// launch site, identifies the kernel to the engine.
template <class Call>
class Launcher {
 public:
  Launcher(const char* name, dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream, Call call)
      : name_(name), grid_(grid), block_(block), shared_bytes_(shared_bytes), stream_(stream), call_(call) {}

  template <class... Args>
  void operator()(Args&&... args) const {
    auto params = std::make_shared<std::tuple<std::decay_t<Args>...>>(std::forward<Args>(args)...);
    Call call = call_;
    static const char site = 0;
    launch(&site, name_, grid_, block_, shared_bytes_, stream_, [call, params] {
      // Each GPU thread gets its own copy of the arguments, as each reads them from constant memory.
      auto mine = *params;
      std::apply(call, std::move(mine));
    });
  }

 private:
  const char* name_;
  dim3 grid_, block_;
  std::size_t shared_bytes_;
  cudaStream_t stream_;
  Call call_;
};

template <class Call>
Launcher<Call> launcher(const char* name, dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
                        Call call) {
  return Launcher<Call>(name, grid, block, shared_bytes, stream, call);
}

}  // namespace hdb::cuda::host
