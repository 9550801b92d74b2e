# tpch: micro-kernels A, B, C, composed from each backend's RA primitives (cmake/bench/ra.cmake),
# plus engines of their own. The backend classes are libraries so that the tests can call them
# directly; the executables add only a small main().
hdb_add_benchmark(tpch
  COMMON src/common/bench/tpch.cpp src/common/model/tpch_plan.cpp src/common/bench/tpch_ra.cpp
         src/common/reference/tpch.cpp src/common/workloads/tpch_relation.cpp
         src/common/workloads/tpch_generate.cpp src/common/workloads/tpch_load.cpp
  LIBS   hdb_bench_ra)

add_library(hdb_tpch_cpu STATIC src/cpu/tpch_backend.cpp)
target_link_libraries(hdb_tpch_cpu PUBLIC hdb_bench_tpch hdb_cpu_runtime hdb_ra_cpu)
target_include_directories(hdb_tpch_cpu PUBLIC ${CMAKE_SOURCE_DIR}/src/cpu)
hdb_warnings(hdb_tpch_cpu)
add_executable(hdb-tpch-cpu src/cpu/tpch_main.cpp)
target_link_libraries(hdb-tpch-cpu PRIVATE hdb_tpch_cpu)
hdb_warnings(hdb-tpch-cpu)

# OpenCL: the composition over the OpenCL RA backend, when that backend is built.
if(TARGET hdb_ra_opencl)
  add_executable(hdb-tpch-opencl src/opencl/tpch_main.cpp)
  target_link_libraries(hdb-tpch-opencl PRIVATE hdb_bench_tpch hdb_ra_opencl)
  target_include_directories(hdb-tpch-opencl PRIVATE ${CMAKE_SOURCE_DIR}/src/opencl)
  hdb_warnings(hdb-tpch-opencl)
endif()

# CUDA: the composition over the CUDA RA backend, plus operator-at-a-time and fused kernels of its own.
if(HDB_HAVE_CUDA AND TARGET hdb_ra_cuda)
  add_library(hdb_tpch_cuda STATIC src/cuda/tpch_backend.cu)
  target_link_libraries(hdb_tpch_cuda PUBLIC hdb_bench_tpch hdb_cuda_runtime hdb_ra_cuda)
  target_include_directories(hdb_tpch_cuda PUBLIC ${CMAKE_SOURCE_DIR}/src/cuda)
  hdb_warnings(hdb_tpch_cuda)
  add_executable(hdb-tpch-cuda src/cuda/tpch_main.cpp)
  target_link_libraries(hdb-tpch-cuda PRIVATE hdb_tpch_cuda)
  hdb_warnings(hdb-tpch-cuda)
endif()
