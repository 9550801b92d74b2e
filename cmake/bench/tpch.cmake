# tpch: micro-kernels A, B, C, composed from each backend's RA primitives (cmake/bench/ra.cmake,
# read before this file), plus engines of their own on the CPU and CUDA. The backend classes are
# libraries so that the tests can call them directly; the executables add only a small main().
hdb_add_benchmark(tpch
  COMMON      src/common/bench/tpch.cpp src/common/model/tpch_plan.cpp src/common/bench/tpch_ra.cpp
              src/common/reference/tpch.cpp src/common/workloads/tpch_relation.cpp
              src/common/workloads/tpch_generate.cpp src/common/workloads/tpch_load.cpp
  LIBS        hdb_bench_ra
  CPU         src/cpu/tpch_main.cpp
  CPU_LIB     src/cpu/tpch_backend.cpp
  CPU_LIBS    hdb_ra_cpu
  # OpenCL: only the composition over the OpenCL RA backend.
  OPENCL      src/opencl/tpch_main.cpp
  OPENCL_LIBS hdb_ra_opencl
  CUDA        src/cuda/tpch_main.cpp
  CUDA_LIB    src/cuda/tpch_backend.cu
  CUDA_LIBS   hdb_ra_cuda)
