# merge: delta merge of a dictionary-compressed column (docs/merge.md). The backends live in
# libraries of their own so the edge-case tests link the same objects the executables run.
hdb_add_benchmark(merge
  COMMON      src/common/bench/merge.cpp src/common/workloads/columns.cpp
  CPU         src/cpu/merge_main.cpp
  CPU_LIB     src/cpu/merge_backend.cpp
  OPENCL      src/opencl/merge_main.cpp
  OPENCL_LIB  src/opencl/merge_backend.cpp
  OPENCL_LIBS hdb_opencl_sort
  CL_KERNELS  src/opencl/kernels/merge.cl
  CUDA        src/cuda/merge_main.cpp
  CUDA_LIB    src/cuda/merge_backend.cu src/cuda/merge_thrust.cu src/cuda/merge_kernels.cu
              src/cuda/merge_reencode.cu src/cuda/merge_delta.cu
              src/cuda/merge_dict.cu)
