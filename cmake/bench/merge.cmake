hdb_add_benchmark(merge
  COMMON src/common/bench/merge.cpp src/common/workloads/columns.cpp
  CPU    src/cpu/merge_main.cpp src/cpu/merge_backend.cpp)
