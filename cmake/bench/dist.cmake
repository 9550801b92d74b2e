# dist: true-parallel (TP) operators over MPI ranks (src/common/bench/dist*). The local primitives
# come from the ra and merge backend libraries (hdb_ra_<backend>, hdb_merge_<backend>), whose cmake
# files are read after this one (cmake/bench/*.cmake in name order). So the targets are made at the
# end of the top-level directory, when it is known which of those libraries exist; tests/dist asks
# hdb_dist_parts() the same question.

# hdb_dist_parts(<backend> <out>): the backend libraries hdb-dist-<backend> links, or "" when one
# of them is missing (then there is no hdb-dist-<backend>).
function(hdb_dist_parts backend out)
  set(parts hdb_ra_${backend} hdb_merge_${backend})
  foreach(lib IN LISTS parts)
    if(NOT TARGET ${lib})
      set(parts "")
    endif()
  endforeach()
  set(${out} "${parts}" PARENT_SCOPE)
endfunction()

set_property(GLOBAL APPEND PROPERTY HDB_LATE_TARGETS hdb_bench_dist)
function(hdb_dist_targets)
  if(NOT TARGET hdb_bench_ra OR NOT TARGET hdb_bench_merge)
    message(STATUS "dist: not built (needs the ra and merge benchmarks)")
    return()
  endif()
  hdb_add_benchmark(dist
    COMMON      src/common/bench/dist.cpp src/common/bench/dist_collective.cpp src/common/bench/dist_merge.cpp
                src/common/algorithms/dist_partition.cpp src/common/bench/dist_ra.cpp
    LIBS        hdb_bench_ra hdb_bench_merge
    CPU         src/cpu/dist_main.cpp
    CPU_LIBS    hdb_ra_cpu hdb_merge_cpu
    OPENCL      src/opencl/dist_main.cpp
    OPENCL_LIBS hdb_ra_opencl hdb_merge_opencl
    CUDA        src/cuda/dist_main.cpp
    CUDA_LIBS   hdb_ra_cuda hdb_merge_cuda)
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL hdb_dist_targets)
