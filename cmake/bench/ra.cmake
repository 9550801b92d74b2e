# ra: relational-algebra primitives. Backend classes live in their own libraries so the unit tests
# (tests/ra) drive them directly; the executables add only a small main.
hdb_add_benchmark(ra
  COMMON src/common/bench/ra.cpp src/common/bench/ra_options.cpp src/common/reference/ra.cpp src/common/workloads/relations.cpp
         src/common/algorithms/tuple_sort.cpp
  CPU    src/cpu/ra_main.cpp)

add_library(hdb_ra_cpu STATIC src/cpu/ra_backend.cpp)
target_link_libraries(hdb_ra_cpu PUBLIC hdb_bench_ra hdb_cpu_runtime)
hdb_warnings(hdb_ra_cpu)
target_link_libraries(hdb-ra-cpu PRIVATE hdb_ra_cpu)

if(HDB_HAVE_OPENCL)
  # scan.cl comes first: ra.cl's kernels call its work-group prefix sum.
  hdb_embed_cl(ra_cl_source ra src/opencl/kernels/scan.cl src/opencl/kernels/ra.cl)
  add_library(hdb_ra_opencl STATIC src/opencl/ra_backend.cpp ${ra_cl_source})
  target_link_libraries(hdb_ra_opencl PUBLIC hdb_bench_ra hdb_opencl_sort)
  hdb_warnings(hdb_ra_opencl)
  add_executable(hdb-ra-opencl src/opencl/ra_main.cpp)
  target_link_libraries(hdb-ra-opencl PRIVATE hdb_ra_opencl)
  hdb_warnings(hdb-ra-opencl)
endif()

if(HDB_HAVE_CUDA)
  add_library(hdb_ra_cuda STATIC src/cuda/ra_backend.cu src/cuda/ra_paper.cu src/cuda/ra_cub.cu
              src/cuda/ra_tuned.cu)
  target_link_libraries(hdb_ra_cuda PUBLIC hdb_bench_ra hdb_cuda_runtime)
  hdb_warnings(hdb_ra_cuda)
  add_executable(hdb-ra-cuda src/cuda/ra_main.cpp)
  target_link_libraries(hdb-ra-cuda PRIVATE hdb_ra_cuda)
  hdb_warnings(hdb-ra-cuda)
endif()
