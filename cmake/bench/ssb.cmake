# ssb: the Star Schema Benchmark's 13 queries. The backend-neutral logic, the tables (generator and
# ssb-dbgen .tbl loader), the query plans and the serial reference are hdb_bench_ssb; each backend's
# class is a library the tests call directly, its executable a one-line main(). CUDA's sources also
# make hdb-ssb-cuda-host (host execution).
hdb_add_benchmark(ssb
  COMMON      src/common/bench/ssb.cpp src/common/model/ssb_query.cpp src/common/reference/ssb.cpp
              src/common/workloads/ssb_tables.cpp src/common/workloads/ssb_generate.cpp
              src/common/workloads/ssb_load.cpp
  CPU         src/cpu/ssb_main.cpp
  CPU_LIB     src/cpu/ssb_backend.cpp
  OPENCL      src/opencl/ssb_main.cpp
  OPENCL_LIB  src/opencl/ssb_backend.cpp
  # the operators variant's compaction takes the RA backend's DeviceScan (sort.hpp)
  OPENCL_LIBS hdb_opencl_sort
  CL_KERNELS  src/opencl/kernels/ssb.cl
  CUDA        src/cuda/ssb_main.cpp
  CUDA_LIB    src/cuda/ssb_backend.cu)
