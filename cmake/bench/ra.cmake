# ra: relational-algebra primitives. Backend classes live in their own libraries so the unit tests
# (tests/ra) drive them directly; the executables add only a small main.
hdb_add_benchmark(ra
  COMMON      src/common/model/ra.cpp src/common/bench/ra.cpp src/common/bench/ra_options.cpp
              src/common/reference/ra.cpp src/common/workloads/relations.cpp
              src/common/algorithms/tuple_sort.cpp
  CPU         src/cpu/ra_main.cpp
  CPU_LIB     src/cpu/ra_backend.cpp src/cpu/ra_library.cpp src/cpu/ra_hash.cpp
  OPENCL      src/opencl/ra_main.cpp
  OPENCL_LIB  src/opencl/ra_backend.cpp src/opencl/ra_hash.cpp
  OPENCL_LIBS hdb_opencl_sort
  # scan.cl comes first: ra.cl's kernels call its work-group prefix sum; ra_hash.cl uses ra.cl's KEY.
  CL_KERNELS  src/opencl/kernels/scan.cl src/opencl/kernels/ra.cl src/opencl/kernels/ra_hash.cl
  CUDA        src/cuda/ra_main.cpp
  CUDA_LIB    src/cuda/ra_backend.cu src/cuda/ra_paper.cu src/cuda/ra_cub.cu src/cuda/ra_tuned.cu
              src/cuda/ra_hash.cu)
