# ra: relational-algebra primitives. Backend classes live in their own libraries so the unit tests
# (tests/ra) drive them directly; the executables add only a small main.
hdb_add_benchmark(ra
  COMMON src/common/bench/ra.cpp src/common/reference/ra.cpp src/common/workloads/relations.cpp
  CPU    src/cpu/ra_main.cpp)

add_library(hdb_ra_cpu STATIC src/cpu/ra_backend.cpp)
target_link_libraries(hdb_ra_cpu PUBLIC hdb_bench_ra hdb_cpu_runtime)
hdb_warnings(hdb_ra_cpu)
target_link_libraries(hdb-ra-cpu PRIVATE hdb_ra_cpu)
