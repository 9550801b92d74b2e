# The backends live in libraries of their own so the edge-case tests link the same objects the
# executables run.
hdb_add_benchmark(merge
  COMMON src/common/bench/merge.cpp src/common/workloads/columns.cpp
  CPU    src/cpu/merge_main.cpp
  OPENCL src/opencl/merge_main.cpp
  CUDA   src/cuda/merge_main.cpp)

add_library(hdb_merge_cpu STATIC src/cpu/merge_backend.cpp)
target_link_libraries(hdb_merge_cpu PUBLIC hdb_bench_merge hdb_cpu_runtime)
hdb_warnings(hdb_merge_cpu)
target_link_libraries(hdb-merge-cpu PRIVATE hdb_merge_cpu)

if(TARGET hdb-merge-opencl)
  hdb_embed_cl(merge_cl merge src/opencl/kernels/merge.cl)
  add_library(hdb_merge_opencl STATIC src/opencl/merge_backend.cpp ${merge_cl})
  target_link_libraries(hdb_merge_opencl PUBLIC hdb_bench_merge hdb_opencl_sort)
  hdb_warnings(hdb_merge_opencl)
  target_link_libraries(hdb-merge-opencl PRIVATE hdb_merge_opencl)
endif()

if(TARGET hdb-merge-cuda)
  add_library(hdb_merge_cuda STATIC src/cuda/merge_backend.cu src/cuda/merge_thrust.cu src/cuda/merge_kernels.cu)
  target_link_libraries(hdb_merge_cuda PUBLIC hdb_bench_merge hdb_cuda_runtime)
  hdb_warnings(hdb_merge_cuda)
  target_link_libraries(hdb-merge-cuda PRIVATE hdb_merge_cuda)
endif()
