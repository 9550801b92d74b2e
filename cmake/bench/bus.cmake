# bus: the transfer and memory ceilings every other result is compared with.
hdb_add_benchmark(bus
  COMMON src/common/bench/bus.cpp
  CPU    src/cpu/bus_backend.cpp
  OPENCL src/opencl/bus_backend.cpp
  CUDA   src/cuda/bus_backend.cu)
