# tpch: micro-kernels A, B, C. The backend classes are libraries of their own so that the tests
# can call them directly; the executables add only a small main().
hdb_add_benchmark(tpch
  COMMON src/common/bench/tpch.cpp src/common/bench/tpch_plan.cpp src/common/reference/tpch.cpp
         src/common/workloads/tpch_relation.cpp src/common/workloads/tpch_generate.cpp
         src/common/workloads/tpch_load.cpp
  CPU    src/cpu/tpch_main.cpp)

add_library(hdb_tpch_cpu STATIC src/cpu/tpch_backend.cpp)
target_link_libraries(hdb_tpch_cpu PUBLIC hdb_bench_tpch hdb_cpu_runtime)
target_include_directories(hdb_tpch_cpu PUBLIC ${CMAKE_SOURCE_DIR}/src/cpu)
hdb_warnings(hdb_tpch_cpu)
target_link_libraries(hdb-tpch-cpu PRIVATE hdb_tpch_cpu)
