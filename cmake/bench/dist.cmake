# dist: true-parallel (TP) operators over MPI ranks (src/common/bench/dist*). The local primitives
# come from the ra and merge backend libraries (hdb_ra_<backend>, hdb_merge_<backend>), whose cmake
# files are read after this one (cmake/bench/*.cmake in name order). So the targets are made at the
# end of the top-level directory, when it is known which of those libraries exist; tests/dist asks
# hdb_dist_parts() the same question.

# hdb_dist_parts(<backend> <out>): the backend libraries hdb-dist-<backend> would link ("" = none).
function(hdb_dist_parts backend out)
  set(parts "")
  if(TARGET hdb_bench_ra AND TARGET hdb_bench_merge)
    foreach(lib hdb_ra_${backend} hdb_merge_${backend})
      if(TARGET ${lib})
        list(APPEND parts ${lib})
      endif()
    endforeach()
  endif()
  set(${out} "${parts}" PARENT_SCOPE)
endfunction()

function(hdb_dist_targets)
  if(NOT TARGET hdb_bench_ra OR NOT TARGET hdb_bench_merge)
    message(STATUS "dist: not built (needs the ra and merge benchmarks)")
    return()
  endif()
  hdb_add_benchmark(dist
    COMMON src/common/bench/dist.cpp src/common/bench/dist_collective.cpp src/common/bench/dist_merge.cpp
           src/common/algorithms/dist_partition.cpp src/common/bench/dist_ra.cpp src/common/harness/comm.cpp)
  target_link_libraries(hdb_bench_dist PUBLIC hdb_bench_ra hdb_bench_merge)
  foreach(backend cpu opencl cuda)
    hdb_dist_parts(${backend} parts)
    if(NOT parts)
      continue()
    endif()
    # The main offers the tests whose backend exists: HDB_DIST_RA / HDB_DIST_MERGE.
    add_executable(hdb-dist-${backend} src/${backend}/dist_main.cpp)
    target_link_libraries(hdb-dist-${backend} PRIVATE hdb_bench_dist ${parts})
    target_include_directories(hdb-dist-${backend} PRIVATE ${CMAKE_SOURCE_DIR}/src/${backend})
    if(TARGET hdb_ra_${backend})
      target_compile_definitions(hdb-dist-${backend} PRIVATE HDB_DIST_RA=1)
    endif()
    if(TARGET hdb_merge_${backend})
      target_compile_definitions(hdb-dist-${backend} PRIVATE HDB_DIST_MERGE=1)
    endif()
    hdb_warnings(hdb-dist-${backend})
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL hdb_dist_targets)
