# dist: true-parallel (TP) operators over MPI ranks (src/common/bench/dist*). The local primitives
# come from the ra and merge backend libraries (hdb_ra_<backend>, hdb_merge_<backend>). Their cmake
# files are read after this one (cmake/bench/*.cmake in name order), so the CPU executable links
# them by name (resolved at generate time) and the device executables are made at the end of the
# top-level directory, once it is known which backend libraries exist.
hdb_add_benchmark(dist
  COMMON src/common/bench/dist.cpp src/common/bench/dist_collective.cpp src/common/bench/dist_merge.cpp
         src/common/bench/dist_partition.cpp src/common/bench/dist_ra.cpp src/common/harness/comm.cpp
  CPU    src/cpu/dist_main.cpp)
target_link_libraries(hdb_bench_dist PUBLIC hdb_bench_ra hdb_bench_merge)
target_link_libraries(hdb-dist-cpu PRIVATE hdb_ra_cpu hdb_merge_cpu)
target_include_directories(hdb-dist-cpu PRIVATE ${CMAKE_SOURCE_DIR}/src/cpu)

function(hdb_dist_device_executables)
  if(TARGET hdb_ra_opencl AND TARGET hdb_merge_opencl)
    add_executable(hdb-dist-opencl src/opencl/dist_main.cpp)
    target_link_libraries(hdb-dist-opencl PRIVATE hdb_bench_dist hdb_ra_opencl hdb_merge_opencl)
    target_include_directories(hdb-dist-opencl PRIVATE ${CMAKE_SOURCE_DIR}/src/opencl)
    hdb_warnings(hdb-dist-opencl)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL hdb_dist_device_executables)
